"""Random EREs against random texts in `[[ text =~ re ]]`: K's status, whole match and groups
equal bash's (glibc's regcomp and regexec), twenty pairs a script; texts with newlines (glibc's
anchors at a newline the match takes), groups repeated on nothing (`(a*)+`), back-references.

Anchors inside repeated groups are drawn (`(^a)+`, `(\\<a|b){2}`): glibc loses those in the
copies it makes of a group (kshell/exec/ere.py, lossy_sources)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_support import assert_same

ATOMS = ["a", "b", "ab", ".", "(", ")", "|", "*", "+", "?", "{1}", "{,2}", "{1,}", "{", "}", "^", "$",
         "[ab]", "[^a]", "[]a]", "[a-]", "[[:alpha:]]", "[[:digit:]]", "[", "]", "\\.", "\\<", "\\>",
         "\\w", "\\s", "\\b", "-", "0", " ", "\\", "(a)", "(.$)", "(a*)+", "\\1", "(^a)", "(\\<a|b)",
         "(^|b)", "(b\\>)"]
TEXTS = st.text(alphabet="ab0 -.\n", max_size=6)


ERES = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=6).map("".join)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXTS, ERES), min_size=20, max_size=20))
def test_random_eres_match_as_bash(bash: str, pairs: list[tuple[str, str]]) -> None:
    lines = [f"t {_quote(text)} {_quote(ere)}" for text, ere in pairs]
    script = ('t() { [[ $1 =~ $2 ]]; printf "%s" "$?"; printf " <%s>" "${BASH_REMATCH[@]}"; echo; }\n'
              + "\n".join(lines) + "\n")
    assert_same(bash, script)
