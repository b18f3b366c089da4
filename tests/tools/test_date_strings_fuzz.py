"""Random GNU date strings built from the items parse-datetime knows (a calendar date in one of
its forms, a time, a zone, a day of the week, relative items, in any order), twenty a script:
K's `date -d` prints what GNU date prints for each, or fails as it does. A calendar date is
always there, so nothing depends on the time the test runs. (A compact date such as 20240229
before a day or a unit is a count to GNU: `20240229 monday` is year 389937; K refuses it.)"""

from __future__ import annotations

from differential import assert_same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DATES = ["2024-01-31", "2023-12-31", "24-02-29", "1/31/2024", "2024/03/10", "5 Jan 2024", "Jan 5, 2024",
         "5-Jan-2024", "Jan-5-2024", "Feb 29 2024", "2024-02-30", "2024-13-01", "sept 3 2024"]
ITEMS = ["10:30", "23:59:59", "3pm", "12am", "12:00:00.5", "13pm", "10:61", "UTC", "Z", "EST", "CEST", "UTC+2",
         "+0530", "monday", "next friday", "last tue", "2 days ago", "+1 week", "-3 hours", "next month",
         "last year", "third day", "1 day 2 hours ago", "tomorrow", "yesterday", "fortnight", "90 minutes",
         "now", "today", "(note)", "1030", "ago", "2 sec", "+1 month -1 day"]
STRINGS = st.tuples(st.sampled_from(DATES), st.lists(st.sampled_from(ITEMS), max_size=3)).flatmap(
    lambda t: st.permutations([t[0], *t[1]]).map(" ".join))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STRINGS, min_size=20, max_size=20))
def test_random_date_strings_read_as_gnu(strings: list[str]) -> None:
    lines = [f"date -d '{s}' '+%F %T.%N %z' 2>&1" for s in strings]
    assert_same("\n".join(lines) + "\n")
