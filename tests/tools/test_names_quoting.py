"""The file tools' shared rules against GNU: the two quoting styles of messages
(kshell/tools/quoting.py) and how cp, mv, install and ln resolve SOURCE... DEST operands
(kshell/tools/files/names.py target_pairs)."""

from __future__ import annotations

import pytest
from differential import Case, Link, assert_same

F = {"a": "a\n", "b": "b\n", "c": "c\n", "d/": "", "dl": Link("nowhere")}

CASES = [
    # a file name: shell-escape-always; an option's value or an operand: the C locale's quote()
    Case("quote_file_names", "head \"it's\"; head 'it\"s$'; head 'a b'; tail \"it's\\$x\"; echo $?"),
    Case("quote_values", "head -n \"a'b\" a; head -n 'a\"b' a; tail -s \"1'x\" a; echo $?", F),
    Case("quote_uniq_operand", "uniq a b \"c'd\"; uniq --all-repeated=\"x'y\" a 2>&1 | head -n 1", F),
    # targets
    Case("targets_dangling_link", "cp a b dl; mv a b dl; install a b dl; ln a b dl; echo $?", F),
    Case("targets_not_a_directory", "cp a b c; mv a b c; install a b c; ln a b c; ln -n a b dl; echo $?", F),
    Case("targets_t_option", "cp -t nowhere a; mv -t c a; install -t c a; install -t nowhere a; cp -t nowhere;"
         " install -t nowhere; echo $?", F),
    Case("targets_T_option", "cp -T a b c; ln -T a b c; install -T a b c; mv -T a b c; echo $?", F),
    Case("targets_into_directory", "cp a b d; install -m 644 a c d; ln -s a d/l; ln a b d/; mv d/a d/b .;"
         " ls d; cp -t d a; ls d", F),
    Case("targets_missing_operands", "cp; cp a; mv x; install; install a; ln; echo $?", F),
    Case("install_D", "install -D a x/y/z; ls x/y; install -D -t p/q a b; ls p/q; install -D -T a d/e; ls d", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_names_quoting(case: Case) -> None:
    assert_same(case)
