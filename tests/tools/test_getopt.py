"""getopt against util-linux's: the exact output scripts eval (quoting for sh and tcsh), glibc's
parse (permutation, +, -, abbreviations, optional arguments, -a) and its errors and statuses."""

from __future__ import annotations

import pytest
from differential import Case, assert_same

CASES = [
    Case("compatible", "getopt ab:c:: -a x -b y -cz w; echo $?"),
    Case("compatible_strips_sign", "getopt +ab -a x -b; echo $?"),
    Case("enhanced_short_long", "getopt -o ab:c:: -l foo,bar:,baz:: -- -a x -b y -c --fo --bar=1 --baz \"it's\" -- -q"),
    Case("optstring_as_first_operand", "getopt -- ab: -a -b 1 z"),
    Case("invalid_option", "getopt -o a -- -x -a --nope; echo $?"),
    Case("missing_argument_named", "getopt -n prog -o a: -- -a; echo $?"),
    Case("quiet_errors", "getopt -q -o a -- -x y; echo $?"),
    Case("quiet_output", "getopt -o ab -Q -- -a -z; echo $?"),
    Case("no_optstring", "getopt; echo $?"),
    Case("no_optstring_enhanced", "getopt -q; echo $?"),
    Case("test_mode", "getopt -T; echo $?"),
    Case("unquoted", "getopt -o a -u -- -a 'b c'"),
    Case("require_order", "getopt -o +a -- x -a"),
    Case("posixly_correct", "POSIXLY_CORRECT=1 getopt -o a -- x -a"),
    Case("return_in_order", "getopt -o -a -- x -a y"),
    Case("alternative", "getopt -a -o a -l long: -- -long=3 -a -lo 4"),
    Case("ambiguous", "getopt -o a -l foo,fob -- --fo; echo $?"),
    Case("no_argument_allowed", "getopt -o a -l foo -- --foo=3; echo $?"),
    Case("long_requires", "getopt -o a -l bar: -- --bar; echo $?"),
    Case("tcsh_quoting", "getopt -o a -s tcsh -- 'a!b' 'x\ny' 'p q'"),
    Case("bash_quoting", "getopt -o a -s bash -- 'a!b' 'x\ny' '$v'"),
    Case("bad_shell", "getopt -s fish -o a -- -a; echo $?"),
    Case("bad_own_option", "getopt -z; echo $?"),
    Case("empty_operand", "getopt -o a -- ''"),
    Case("clustered", "getopt -o abc: -- -abcval -ab -c x"),
    Case("several_longoptions", "getopt -o '' -l one -l two: --longoptions three -- --one --two 2 --three"),
    Case("eval_roundtrip", "set -- $(getopt -o ab: -l all -- -a --all -b 'v' f) ; echo \"$#:$*\""),
    Case("eval_in_script", "eval set -- \"$(getopt -o ab: -- -b \"it's x\" f)\"; printf '<%s>' \"$@\"; echo"),
    Case("compatible_env", "GETOPT_COMPATIBLE=1 getopt ab -a 'x y'"),
    Case("dash_operand", "getopt -o a -- - -a"),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_getopt_matches_util_linux(case: Case) -> None:
    assert_same(case)
