"""cp, mv, install and mktemp against GNU coreutils (mktemp names are random: the cases
compare their shape and modes)."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, Link, assert_same

T = {
    "a": "alpha\n",
    "b": "beta\n",
    "x": File("exec\n", 0o755, 1000000),
    "d/": Dir(),
    "d/g": "gee\n",
    "d/sub/": Dir(0o700),
    "d/sub/h": "aitch\n",
    "e/": Dir(),
    "ro/": Dir(0o555),
    "ro/r": "r\n",
    "secret": File("s\n", 0o200),
    "la": Link("a"),
    "full/": Dir(),
    "full/d/": Dir(),
    "full/d/z": "z\n",
}

CP = [
    Case("cp_file", "cp a c; cat c; stat -c %a c", T),
    Case("cp_over_file", "cp a b; cat b", T),
    Case("cp_into_dir", "cp a b e; ls e; cat e/a", T),
    Case("cp_into_dir_slash", "cp a e/; ls e", T),
    Case("cp_mode_kept_on_new", "cp x y; stat -c %a y", T),
    Case("cp_no_operand", "cp; echo $?", T),
    Case("cp_one_operand", "cp a; echo $?", T),
    Case("cp_missing_source", "cp nope c; echo $?", T),
    Case("cp_missing_target_dir", "cp a b nodir; echo $?", T),
    Case("cp_target_not_dir", "cp a x b; echo $?", T),
    Case("cp_dir_without_r", "cp d f; echo $?", T),
    Case("cp_same_file", "cp a a; echo $?", T),
    Case("cp_same_file_link", "cp a la; echo $?", T),
    Case("cp_r", "cp -r d f; ls -R f; cat f/sub/h", T),
    Case("cp_R_into_existing", "cp -R d e; ls -R e", T),
    Case("cp_r_into_itself", "cp -r d d/sub; echo $?", T),
    Case("cp_r_onto_file", "cp -r d a; echo $?", T),
    Case("cp_file_onto_dir_T", "cp -T a d; echo $?", T),
    Case("cp_rT_contents", "cp -rT d e; ls e", T),
    Case("cp_T_extra", "cp -T a b c; echo $?", T),
    Case("cp_t", "cp -t e a b; ls e", T),
    Case("cp_t_missing", "cp -t nodir a; echo $?", T),
    Case("cp_n", "cp -n a b; cat b; echo $?", T),
    Case("cp_v", "cp -v a c", T),
    Case("cp_rv_single", "cp -rv e f", T),
    Case("cp_p", "cp -p x y; stat -c '%a %Y' y", T),
    Case("cp_no_p_time", "cp x y; test y -nt x && echo newer", T),
    Case("cp_a_link", "cp -a la lb; readlink lb", T),
    Case("cp_follows_link", "cp la c; ls -l c | cut -c1", T),
    Case("cp_r_dir_mode", "cp -r d f; stat -c %a f/sub", T),
    Case("cp_a_dir_times", "cp -a d f; stat -c '%a %Y' f/sub f/g", T),
    Case("cp_dashdash", "cp -- -z c; cat c", {"-z": "dash\n"}),
    Case("cp_bad_option", "cp -y a b; echo $?", T),
    Case("cp_bad_long", "cp --bogus a b; echo $?", T),
    Case("cp_trailing_slash_missing", "cp a nodir/; echo $?", T),
    Case("cp_permission_read", "cp secret c; echo $?", T, user=1000),
    Case("cp_permission_dir", "cp a ro/; echo $?", T, user=1000),
    Case("cp_f_over_readonly", "chmod 444 b; cp -f a b; cat b", T, user=1000),
    Case("cp_readonly_without_f", "chmod 444 b; cp a b; echo $?", T, user=1000),
    Case("cp_several_errors", "cp a nope d e; echo $?; ls e", T),
    Case("cp_interactive_no", "echo n | cp -i a b; echo $?; cat b", T),
    Case("cp_interactive_yes", "echo y | cp -i a b; echo $?; cat b", T),
    Case("cp_interactive_new_file", "cp -i a c < /dev/null; cat c", T),
    Case("cp_r_keeps_inner_links", "mkdir s; ln -s ../a s/l; cp -r s t; readlink t/l", T),
    Case("cp_a_hidden", "mkdir s; echo h > s/.h; cp -a s t; ls -A t", T),
    Case("cp_r_trailing_slash", "cp -r d/ f; ls f", T),
    Case("cp_r_unreadable_sub", "chmod 000 d/sub; cp -r d f; echo $?", T, user=1000),
    Case("cp_rn_existing", "cp -r d f; echo new > d/g; cp -rn d f; cat f/g", T),
    Case("cp_p_dir", "cp -rp d f; stat -c '%a %Y' f/sub", T),
    Case("cp_into_missing_dir_path", "cp a nodir/c; echo $?", T),
    Case("cp_dir_over_dir_contents", "cp -r d e; cp -r d e; ls e/d", T),
]

MV = [
    Case("mv_rename", "mv a c; ls; cat c", T),
    Case("mv_over_file", "mv a b; ls; cat b", T),
    Case("mv_into_dir", "mv a b e; ls e", T),
    Case("mv_dir_rename", "mv d f; ls -R f", T),
    Case("mv_dir_into_dir", "mv d e; ls -R e", T),
    Case("mv_no_operand", "mv; echo $?", T),
    Case("mv_one_operand", "mv a; echo $?", T),
    Case("mv_missing", "mv nope c; echo $?", T),
    Case("mv_same_file", "mv a a; echo $?", T),
    Case("mv_into_itself", "mv d d/sub; echo $?", T),
    Case("mv_dir_onto_file", "mv d a; echo $?", T),
    Case("mv_file_onto_dir_T", "mv -T a d; echo $?", T),
    Case("mv_nonempty_target", "mv d full; echo $?", T),
    Case("mv_T_dir", "mv -T e f; ls -d f", T),
    Case("mv_t", "mv -t e a b; ls e; ls", T),
    Case("mv_n", "mv -n a b; cat a b", T),
    Case("mv_f", "mv -f a b; cat b", T),
    Case("mv_n_then_f", "mv -n -f a b; cat b", T),
    Case("mv_v", "mv -v a c", T),
    Case("mv_target_missing", "mv a b nodir; echo $?", T),
    Case("mv_target_not_dir", "mv a b x; echo $?", T),
    Case("mv_link", "mv la lb; readlink lb", T),
    Case("mv_dashdash", "mv -- -z c; cat c", {"-z": "dash\n"}),
    Case("mv_bad_option", "mv -y a b; echo $?", T),
    Case("mv_bad_long", "mv --bogus a b; echo $?", T),
    Case("mv_permission_src", "mv ro/r .; echo $?", T, user=1000),
    Case("mv_permission_dst", "mv a ro/; echo $?", T, user=1000),
    Case("mv_trailing_slash_file", "mv a nodir/; echo $?", T),
    Case("mv_up_via_dotdot", "mv a d/sub/..; ls d", T),
    Case("mv_interactive_no", "echo n | mv -i a b; echo $?; ls; cat b", T),
    Case("mv_interactive_yes", "echo y | mv -i a b; ls; cat b", T),
    Case("mv_dir_over_empty_dir", "mkdir -p f/d; mv d f; ls f/d", T),
    Case("mv_dir_trailing_slash", "mv d/ f; ls f", T),
    Case("mv_several_errors", "mv a nope b e; echo $?; ls e", T),
    Case("mv_hidden_file", "mv d/sub/h .hh; ls -A d/sub; cat .hh", T),
]

INSTALL = [
    Case("install_file", "install a c; stat -c %a c; cat c", T),
    Case("install_mode", "install -m 640 a c; stat -c %a c", T),
    Case("install_mode_symbolic", "install -m u=rw,go=r a c; stat -c %a c", T),
    Case("install_over_readonly", "chmod 444 b; install a b; cat b; stat -c %a b", T),
    Case("install_into_dir", "install a b e; ls e", T),
    Case("install_t", "install -t e a b; ls e", T),
    Case("install_d", "install -d p/q/r; stat -c %a p p/q/r", T),
    Case("install_d_mode", "install -d -m 700 p/q; stat -c %a p p/q", T),
    Case("install_d_existing_file", "install -d a; echo $?", T),
    Case("install_D", "install -D a p/q/c; cat p/q/c", T),
    Case("install_D_verbose", "install -Dv a p/q/c", T),
    Case("install_D_t", "install -D -t p/q a; ls p/q", T),
    Case("install_verbose", "install -v a c", T),
    Case("install_p", "install -p x c; stat -c %Y c", T),
    Case("install_no_operand", "install; echo $?", T),
    Case("install_one_operand", "install a; echo $?", T),
    Case("install_missing", "install nope c; echo $?", T),
    Case("install_dir_source", "install d c; echo $?", T),
    Case("install_bad_mode", "install -m xyz a c; echo $?", T),
    Case("install_same_file", "install a a; echo $?", T),
    Case("install_target_missing", "install a b nodir; echo $?", T),
    Case("install_bad_option", "install -y a c; echo $?", T),
    Case("install_permission", "install a ro/; echo $?", T, user=1000),
    Case("install_unreadable", "install secret c; echo $?", T, user=1000),
]

MKTEMP = [
    Case("mktemp_default", "f=$(mktemp); stat -c %a \"$f\"; test -f \"$f\" && echo file; "
         "dirname $f; case ${f##*/} in tmp.??????????) echo shape;; esac", T),
    Case("mktemp_dir", "f=$(mktemp -d); stat -c %a \"$f\"; test -d \"$f\" && echo dir", T),
    Case("mktemp_template_cwd", "f=$(mktemp fooXXXX); case $f in foo????) echo shape;; esac; stat -c %a $f", T),
    Case("mktemp_p", "f=$(mktemp -p e); case $f in e/tmp.??????????) echo shape;; esac", T),
    Case("mktemp_p_template", "f=$(mktemp -p e aXXXXX); case $f in e/a?????) echo shape;; esac", T),
    Case("mktemp_t", "f=$(mktemp -t zzXXXX); dirname $f; case ${f##*/} in zz????) echo shape;; esac", T),
    Case("mktemp_suffix", "f=$(mktemp --suffix=.txt xXXX); case $f in x???.txt) echo shape;; esac", T),
    Case("mktemp_dry_run", "f=$(mktemp -u); test -e \"$f\" || echo absent", T),
    Case("mktemp_unique", "a=$(mktemp -p e); b=$(mktemp -p e); test \"$a\" != \"$b\" && ls e | wc -l", T),
    Case("mktemp_too_few_x", "mktemp abc; echo $?", T),
    Case("mktemp_too_few_x_quiet", "mktemp -q abXX; echo $?", T),
    Case("mktemp_t_slash", "mktemp -t a/bXXX; echo $?", T),
    Case("mktemp_missing_dir", "mktemp nodir/aXXX; echo $?", T),
    Case("mktemp_missing_p", "mktemp -p nodir; echo $?", T),
    Case("mktemp_missing_dir_d", "mktemp -d nodir/aXXX; echo $?", T),
    Case("mktemp_two_templates", "mktemp aXXX bXXX; echo $?", T),
    Case("mktemp_bad_option", "mktemp -y; echo $?", T),
    Case("mktemp_permission", "mktemp -p ro; echo $?", T, user=1000),
]

# cp and mv options agents use beyond the common ones: -u, backups (-b, --backup, -S,
# VERSION_CONTROL), --parents, --preserve/--no-preserve lists, -l, -s, --remove-destination
B = {"s": "a\n", "t": File("b\n", 0o600, 946684800), "d/": Dir(), "d/x/": Dir(), "d/x/f": "q\n", "e/": Dir(),
     "new": File("n\n", 0o644, 2000000000)}
MORE = [
    Case("cp_backup", "cp -b s t; ls; cat t~; cp --backup=numbered s t; cp --backup=numbered s t; ls; cp -bv s t; "
         "cp -v --backup=existing s t; ls; cp -S .bak -b s t; ls", B),
    Case("cp_backup_env_and_errors", "VERSION_CONTROL=numbered cp -b s t; ls; cp --backup=bogus s t; echo $?", B),
    Case("cp_parents", "cp -v --parents d/x/f e; find e | sort; cp --parents d/x/f nodir; echo $?; "
         "cp --parents d/x/f s; echo $?", B),
    Case("cp_update", "cp -u s t; cat t; cp -u new s; cat s; cp -uv s new; cat new", B),
    Case("cp_preserve_lists", "cp --preserve=mode,timestamps t t3; stat -c '%a %Y' t3; cp --preserve t t5; "
         "stat -c '%a %Y' t5; cp -a --no-preserve=mode t t4; stat -c '%a %Y' t4; cp --preserve=bogus t v; echo $?", B),
    Case("cp_links", "cp -l s hl; stat -c %h s hl; cp -s s sl; readlink sl; cat sl", B),
    Case("cp_remove_destination_and_noops", "cp --remove-destination s t; cat t; cp -x s t5; cp --reflink=auto s t6; "
         "cp --sparse=always s t7; ls t*; cp --strip-trailing-slashes d/ f; echo $?", B),
    Case("mv_update_backup", "mv -u s t; cat t; mv -u new s; cat s; cp s s2; mv -bv s2 t; ls; cp t t2; "
         "mv -b --suffix=.old t2 s; ls; cp s s3; mv --backup=numbered s3 t; ls", B),
]


@pytest.mark.parametrize("case", CP + MORE, ids=Case.id)
def test_cp_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", MV, ids=Case.id)
def test_mv_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", INSTALL, ids=Case.id)
def test_install_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", MKTEMP, ids=Case.id)
def test_mktemp_matches_gnu(case: Case) -> None:
    assert_same(case)
