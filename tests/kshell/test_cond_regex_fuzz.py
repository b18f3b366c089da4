"""Random EREs against random texts in `[[ text =~ re ]]`: K's status and whole match equal
bash's (glibc's regcomp and regexec), twenty pairs a script.

Groups are not compared: where a repeated group can match empty (`(a*)+`), glibc and the
`regex` module pick different last iterations. Back-references are left out for the same
reason (glibc refuses `(a)|\\1` that the module takes)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_support import assert_same

ATOMS = ["a", "b", "ab", ".", "(", ")", "|", "*", "+", "?", "{1}", "{,2}", "{1,}", "{", "}", "^", "$",
         "[ab]", "[^a]", "[]a]", "[a-]", "[[:alpha:]]", "[[:digit:]]", "[", "]", "\\.", "\\<", "\\>",
         "\\w", "\\s", "\\b", "-", "0", " ", "\\"]
TEXTS = st.text(alphabet="ab0 -.", max_size=6)  # newlines: see docs/builtins.md
ERES = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=6).map("".join)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXTS, ERES), min_size=20, max_size=20))
def test_random_eres_match_as_bash(bash: str, pairs: list[tuple[str, str]]) -> None:
    lines = [f"t {_quote(text)} {_quote(ere)}" for text, ere in pairs]
    script = ('t() { [[ $1 =~ $2 ]]; printf "%s<%s>\\n" "$?" "$BASH_REMATCH"; }\n'
              + "\n".join(lines) + "\n")
    assert_same(bash, script)
