"""fmt against GNU coreutils 9.1: refilled paragraphs at several widths (GNU's least-cost
breaks), -s, -u, -p, indentation kept, sentence ends."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"p": "The quick brown fox jumps over the lazy dog. It was a sunny day and the fox was happy.\n"
          "Second line continues the paragraph here.\n\n  Indented para line one is here\n  and line two.\n\n"
          "# comment line that is rather long and should be wrapped at some point ok\n",
     "crown": "  First line of a crowned paragraph that goes on\nsecond line at the margin and more words here\n"
              "third line too.\n\nTagged: head line here\n    body one two three four five six seven\n"
              "    body again eight nine ten\nSame indent line one\nSame indent line two words words words\n",
     "lorem": ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
               "labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco "
               "laboris nisi ut aliquip ex ea commodo consequat.  Duis aute irure dolor in reprehenderit "
               "(in voluptate) velit esse cillum dolore eu fugiat nulla pariatur.\n") * 3}
SCRIPTS = [
    "fmt p", "fmt -w 30 p", "fmt -s -w 30 p", "fmt -w 40 lorem", "fmt lorem", "fmt -w 60 lorem", "fmt -25 lorem",
    "fmt -u -w 50 lorem", "printf 'a  b.  c   d\\n' | fmt -u", "printf 'a  b.  c   d\\n' | fmt", "fmt -p '#' -w 30 p",
    "fmt -w 20 -s lorem", "printf '\\tTab one two three four five six seven\\n\\tnext line here\\n' | fmt -w 25", "printf 'x\\n  y z\\n  w\\n' | fmt", "fmt -c -w 30 crown", "fmt -t -w 30 crown | head -n 9", "fmt -c crown", "fmt -t -w 25 p", "fmt nope; echo $?",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_fmt(case: Case) -> None:
    require_tools("fmt")
    assert_same(case)
