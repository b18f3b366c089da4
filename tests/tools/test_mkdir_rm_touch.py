"""mkdir, rmdir, rm and touch against GNU coreutils."""

from __future__ import annotations

import pytest
from differential import Case, Dir, assert_same

T = {"f": "x\n", "d/": Dir(), "d/g": "y\n", "d/e/": Dir(), "ro/": Dir(0o555), "ro/x": "1"}

MKDIR = [
    Case("mkdir_one", "mkdir a; ls -d a; echo $?", T),
    Case("mkdir_many", "mkdir a b c; ls", T),
    Case("mkdir_missing_parent", "mkdir a/b; echo $?", T),
    Case("mkdir_exists", "mkdir d; echo $?", T),
    Case("mkdir_exists_file", "mkdir f; echo $?", T),
    Case("mkdir_p", "mkdir -p a/b/c; ls -R a", T),
    Case("mkdir_p_existing", "mkdir -p d/e; echo $?", T),
    Case("mkdir_p_verbose", "mkdir -pv a/b/c", T),
    Case("mkdir_verbose", "mkdir -v a b", T),
    Case("mkdir_mode_octal", "mkdir -m 700 a; stat -c %a a", T),
    Case("mkdir_mode_symbolic", "mkdir -m u=rwx,g=rx,o= a; stat -c %a a", T),
    Case("mkdir_mode_bad", "mkdir -m xyz a; echo $?", T),
    Case("mkdir_no_operand", "mkdir; echo $?", T),
    Case("mkdir_bad_option", "mkdir -q a; echo $?", T),
    Case("mkdir_bad_long", "mkdir --quux a; echo $?", T),
    Case("mkdir_p_through_file", "mkdir -p f/x; echo $?", T),
    Case("mkdir_permission", "mkdir ro/new; echo $?", T, user=1000),
    Case("mkdir_p_permission", "mkdir -p ro/a/b; echo $?", T, user=1000),
    Case("mkdir_mode_missing_arg", "mkdir -m; echo $?", T),
    Case("rmdir_empty", "rmdir d/e; ls d", T),
    Case("rmdir_nonempty", "rmdir d; echo $?", T),
    Case("rmdir_missing", "rmdir nope; echo $?", T),
    Case("rmdir_parents", "mkdir -p a/b/c; rmdir -p a/b/c; ls", T),
]

RM = [
    Case("rm_file", "rm f; ls", T),
    Case("rm_missing", "rm nope; echo $?", T),
    Case("rm_missing_force", "rm -f nope; echo $?", T),
    Case("rm_force_no_operands", "rm -f; echo $?", T),
    Case("rm_no_operands", "rm; echo $?", T),
    Case("rm_dir", "rm d; echo $?", T),
    Case("rm_dir_d_nonempty", "rm -d d; echo $?", T),
    Case("rm_dir_d_empty", "rm -d d/e; echo $?; ls d", T),
    Case("rm_recursive", "rm -r d; ls", T),
    Case("rm_recursive_R", "rm -R d f; ls", T),
    Case("rm_verbose", "rm -rv d/e f", T),
    Case("rm_double_dash", "rm -- -x; ls", {"-x": "1", "y": "2"}),
    Case("rm_dash_file_without_dashdash", "rm -x; echo $?", {"-x": "1"}),
    Case("rm_bad_long", "rm --bogus f; echo $?", T),
    Case("rm_dot", "rm -r .; echo $?", T),
    Case("rm_dotdot", "rm -rf d/..; echo $?", T),
    Case("rm_permission", "rm ro/x; echo $?", T, user=1000),
    Case("rm_recursive_permission", "rm -rf ro; echo $?; ls ro", T, user=1000),
    Case("rm_several_mixed", "rm f nope d/g; echo $?; ls d", T),
    Case("rm_trailing_slash_file", "rm f/; echo $?", T),
]

TOUCH = [
    Case("touch_create", "touch new; ls new", T),
    Case("touch_date", "touch -d '2020-01-02 03:04:05' f; ls -l f", T),
    Case("touch_date_epoch", "touch -d @86400 f; ls -l f", T),
    Case("touch_date_iso_t", "touch -d 2021-06-07T08:09:10 f; ls -l f", T),
    Case("touch_stamp", "touch -t 202103040506 f; ls -l f", T),
    Case("touch_stamp_seconds", "touch -t 202103040506.07 f; stat -c %y f", T),
    Case("touch_no_create", "touch -c nope; echo $?; ls nope", T),
    Case("touch_reference", "touch -d @1000000 a; touch -r a b; stat -c %Y b", T),
    Case("touch_reference_missing", "touch -r nope b; echo $?", T),
    Case("touch_bad_date", "touch -d 'not a date' f; echo $?", T),
    Case("touch_bad_stamp", "touch -t 99 f; echo $?", T),
    Case("touch_missing_dir", "touch nodir/f; echo $?", T),
    Case("touch_permission", "touch ro/new; echo $?", T, user=1000),
    Case("touch_no_operand", "touch; echo $?", T),
    Case("touch_bad_option", "touch -z f; echo $?", T),
    Case("touch_m_only", "touch -d @5000 f; touch -m -d @7000 f; stat -c '%X %Y' f", T),
    Case("touch_a_only", "touch -d @5000 f; touch -a -d @7000 f; stat -c '%X %Y' f", T),
    Case("touch_several", "touch a b c; ls", {}),
]


@pytest.mark.parametrize("case", MKDIR, ids=Case.id)
def test_mkdir_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", RM, ids=Case.id)
def test_rm_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", TOUCH, ids=Case.id)
def test_touch_matches_gnu(case: Case) -> None:
    assert_same(case)
