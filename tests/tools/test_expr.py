"""expr against GNU coreutils 9.1: every operator, `:` and match with and without a group,
the keywords, precedence, short-circuits, and the statuses 0/1 (null or 0)/2 (syntax, non-integer,
division by zero, bad regex)."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

SCRIPTS = [
    "expr 1 + 2", "expr 7 - 10", "expr 6 '*' 7", "expr -7 / 2", "expr -7 % 3", "expr 7 % -3",
    "expr 2 '*' -3 % 4", "expr 1 + 2 '*' 3", "expr '(' 1 + 2 ')' '*' 3",
    "expr 99999999999999999999 '*' 99999999999999999999", "expr 5 - 5; echo $?",
    "expr 5 / 0; echo $?", "expr 5 % 0; echo $?", "expr a + 1; echo $?", "expr +1 + 1; echo $?",
    "expr 10 '<' 9", "expr a '<' b", "expr 9 '>' 10; echo $?", "expr 09 = 9", "expr abc = abc",
    "expr abc == abd; echo $?", "expr a '!=' b", "expr 2 '>=' 2", "expr 2 '<=' 1; echo $?",
    "expr -1 '<' 1", "expr 10 '<' 9a",
    "expr x '|' y", "expr '' '|' y", "expr 0 '|' ''; echo $?", "expr 00 '|' 3", "expr -0 '|' 4",
    "expr a '&' b", "expr '' '&' b; echo $?", "expr a '&' 0; echo $?",
    "expr 1 '|' 1 / 0", "expr 0 '&' 1 / 0; echo $?", "expr 0 '|' 1 / 0; echo $?",
    "expr abc : 'a.'", "expr abc : 'b'; echo $?", "expr abc : 'a\\(b\\)'",
    "expr abc : 'x\\(b\\)'; echo $?", "expr abc : 'a\\(x*\\)b'; echo $?",
    "expr foo.c : '\\(.*\\)\\.c'", "expr aaa : 'a*'", "expr ab : 'a\\{1,\\}b'", "expr ab : '.*'",
    "expr abc : '\\(a\\)\\(b\\)'", "expr a : '\\('; echo $?", "expr a : 'a\\{1'; echo $?",
    "expr match aXb 'a.b'", "expr match abc '\\(.c\\)'; echo $?", "expr aaa : 'a\\+'",
    "expr length abcdef", "expr length ''; echo $?", "expr length", "expr length + length",
    "expr index abcdef dc", "expr index abc xyz; echo $?", "expr index abc ''; echo $?",
    "expr substr abcdef 2 3", "expr substr abcdef 5 10", "expr substr abc 0 1; echo $?",
    "expr substr abc 2 -1; echo $?", "expr substr abc 4 1; echo $?", "expr substr abc x 1; echo $?",
    "expr + match", "expr + '/'", "expr quote length; echo $?", "expr quote",
    "expr 00; echo $?", "expr -; echo $?", "expr -x", "expr --foo", "expr -- --", "expr -- -5",
    "expr; echo $?", "expr --; echo $?", "expr 1 +; echo $?", "expr '(' 1; echo $?",
    "expr '(' 1 2; echo $?", "expr 1 ')'; echo $?", "expr ')'; echo $?", "expr '('; echo $?",
    "expr 1 2; echo $?", "expr 1 + --; echo $?", "expr --version | head -n 1", "expr --help | head -n 3",
    "expr length length", "expr '' ; echo $?", "i=0; while [ $i -lt 5 ]; do i=$(expr $i + 1); done; echo $i",
]


@pytest.mark.parametrize("case", [Case(s, s) for s in SCRIPTS], ids=Case.id)
def test_expr(case: Case) -> None:
    require_tools("expr")
    assert_same(case)
