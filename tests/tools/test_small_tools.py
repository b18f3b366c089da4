"""Differential cases for the small tools: rev, tac, rmdir, yes, sleep, timeout, true/false,
egrep/fgrep, the digest sums, gunzip/zcat, printenv, which, id/whoami, hostname, uname, nproc,
pwd, df and help: each run in the K shell and by bash with the real GNU tools (Debian 12).

Where the appliance must differ from the host by design (uname/hostname print the appliance's
virtual node, release and version; df reports the VFS, not the host's disks; help lists the K
shell's builtins and tools, where bash's help documents bash's builtins), the cases compare
what both must share: exit statuses, the messages for bad options and operands, and the shape
of the output (a field, a header, a count) -- never a hard-coded value."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, Link, assert_same

F = {
    "a": "alpha\nbeta\ngamma\n",
    "b": "one\ntwo\nthree\n",
    "nonl": "x\ny",
    "empty": "",
    "tabs": "a\tb c\n\tz \n",
    "d/": Dir(),
    "d/in": "inside\n",
    "locked": File("secret\n", mode=0o000),
    "shut/": Dir(0o000),
    "ro/": Dir(0o555),
    "ro/sub/": Dir(),
    "link": Link("d"),
}

# --------------------------------------------------------------------------- rev, tac

REV = [
    Case("rev_file", "rev a", F),
    Case("rev_stdin", "rev < b", F),
    Case("rev_pipe", "printf 'abc\\ndef\\n' | rev", F),
    Case("rev_two_files", "rev a b", F),
    Case("rev_no_newline", "rev nonl; echo '|'", F),
    Case("rev_empty_file", "rev empty; echo $?", F),
    Case("rev_blank_lines", "printf '\\n\\nab\\n\\n' | rev | cat -A", F),
    Case("rev_tabs_spaces", "rev tabs | cat -A", F),
    Case("rev_twice", "rev a | rev | cmp - a && echo same", F),
    Case("rev_dash_is_a_name", "rev - < a; echo $?", F),
    Case("rev_missing", "rev nope; echo $?", F),
    Case("rev_missing_then_file", "rev nope b; echo $?", F),
    Case("rev_directory", "rev d; echo $?", F),
    Case("rev_denied", "rev locked; echo $?", F, user=1000),
    Case("rev_bad_option", "rev -x; echo $?", F),
    Case("rev_long_line", "printf '%0500d\\n' 7 | rev | cut -c1-3", F),
]
TAC = [
    Case("tac_file", "tac a", F),
    Case("tac_stdin", "tac < b", F),
    Case("tac_two_files", "tac a b", F),
    Case("tac_dash", "tac - a < b", F),
    Case("tac_no_newline", "tac nonl; echo '|'", F),
    Case("tac_empty", "tac empty; echo $?", F),
    Case("tac_before", "tac -b a | cat -A", F),
    Case("tac_separator", "tac -s e a | cat -A", F),
    Case("tac_separator_long", "printf 'aXYbXYc' | tac -s XY; echo", F),
    Case("tac_separator_before", "printf 'aXbXXc' | tac -b -s X; echo", F),
    Case("tac_separator_empty_is_nul", "printf 'a\\0b\\0c' | tac -s '' | tr '\\0' '|'; echo", F),
    Case("tac_regex", "tac -r -s '[ae]' a | cat -A", F),
    Case("tac_regex_alternation", "printf 'a1b22c' | tac -r -s 'b\\|c'; echo", F),
    Case("tac_regex_empty", "tac -r -s '' a; echo $?", F),
    Case("tac_long_separator_option", "tac --separator=, <<< '1,2,3'", F),
    Case("tac_missing", "tac nope; echo $?", F),
    Case("tac_missing_then_file", "tac nope b; echo $?", F),
    Case("tac_directory", "tac d; echo $?", F),
    Case("tac_denied", "tac locked; echo $?", F, user=1000),
    Case("tac_bad_option", "tac -x; echo $?", F),
    Case("tac_missing_separator", "tac -s; echo $?", F),
]

# --------------------------------------------------------------------------- rmdir

RMDIR = [
    Case("rmdir_empty", "mkdir e; rmdir e; ls", F),
    Case("rmdir_nonempty", "rmdir d; echo $?", F),
    Case("rmdir_missing", "rmdir nope; echo $?", F),
    Case("rmdir_file", "rmdir a; echo $?", F),
    Case("rmdir_symlink", "rmdir link; echo $?", F),
    Case("rmdir_symlink_slash", "rmdir link/; echo $?", F),
    Case("rmdir_trailing_slash", "mkdir e; rmdir e/; echo $?; ls", F),
    Case("rmdir_parents", "mkdir -p x/y/z; rmdir -p x/y/z; echo $?; ls", F),
    Case("rmdir_parents_verbose", "mkdir -p x/y/z; rmdir -pv x/y/z; echo $?", F),
    Case("rmdir_parents_stop", "mkdir -p x/y; touch x/f; rmdir -p x/y; echo $?; ls x", F),
    Case("rmdir_parents_verbose_stop", "mkdir -p x/y/z; touch x/f; rmdir -pv x/y/z; echo $?", F),
    Case("rmdir_verbose", "mkdir e; rmdir -v e", F),
    Case("rmdir_ignore_nonempty", "rmdir --ignore-fail-on-non-empty d; echo $?; ls d", F),
    Case("rmdir_several", "mkdir e f; rmdir e nope f; echo $?; ls", F),
    Case("rmdir_dot", "rmdir .; echo $?; rmdir ..; echo $?", F),
    Case("rmdir_no_operand", "rmdir; echo $?", F),
    Case("rmdir_bad_option", "rmdir -x; echo $?", F),
    Case("rmdir_denied", "rmdir ro/sub; echo $?; ls ro", F, user=1000),
    Case("rmdir_denied_search", "rmdir shut/x; echo $?", F, user=1000),
]

# --------------------------------------------------------------------------- yes, sleep, timeout

YES = [
    Case("yes_default", "yes | head -3", F),
    Case("yes_word", "yes abc | head -2", F),
    Case("yes_words", "yes a b c | head -2", F),
    Case("yes_empty_string", "yes '' | head -3 | cat -A", F),
    Case("yes_dash_dash", "yes -- -x | head -1", F),
    Case("yes_bytes", "yes | head -c 11 | cat -A", F),
    Case("yes_count", "yes | head -n 5000 | wc -l", F),
    Case("yes_long_count", "yes 0123456789 | head -n 2000 | sort -u", F),
    Case("yes_tab", "yes \"$(printf 'a\\tb')\" | head -1 | cat -A", F),
    Case("yes_sed_quit", "yes x | sed 3q", F),
    Case("yes_grep_m", "yes hello | grep -m2 -n hello", F),
    Case("yes_bad_option", "yes -x; echo $?", F),
    Case("yes_bad_long_option", "yes --bogus; echo $?", F),
    Case("yes_into_while", "yes n | { read a; read b; echo $a$b; }", F),
    Case("yes_status_piped", "yes | head -1 >/dev/null; echo ${PIPESTATUS[1]}", F),
    Case("yes_awk", "yes 'a b' | awk 'NR==3{print $2, NR; exit}'", F),
]
SLEEP = [
    Case("sleep_zero", "sleep 0; echo $?", F),
    Case("sleep_fraction", "sleep 0.01; echo $?", F),
    Case("sleep_leading_dot", "sleep .01; echo $?", F),
    Case("sleep_suffixes", "sleep 0s 0m 0h 0d; echo $?", F),
    Case("sleep_exponent", "sleep 1e-2; echo $?", F),
    Case("sleep_plus", "sleep +0.01; echo $?", F),
    Case("sleep_sum", "sleep 0.01 0.01; echo $?", F),
    Case("sleep_missing", "sleep; echo $?", F),
    Case("sleep_invalid", "sleep x; echo $?", F),
    Case("sleep_negative", "sleep -1; echo $?", F),
    Case("sleep_bad_suffix", "sleep 1x; echo $?", F),
    Case("sleep_bad_number", "sleep 0.5.; echo $?", F),
    Case("sleep_one_bad", "sleep 0 x; echo $?", F),
    Case("sleep_bad_exponent", "sleep 1e; echo $?", F),
    Case("sleep_bad_long_option", "sleep --bogus; echo $?", F),
    Case("sleep_in_list", "sleep 0 && echo done", F),
]
TIMEOUT = [
    Case("timeout_ok", "timeout 1 true; echo $?", F),
    Case("timeout_status", "timeout 1 false; echo $?", F),
    Case("timeout_output", "timeout 5 echo hi", F),
    Case("timeout_file", "timeout 2 cat a", F),
    Case("timeout_stdin", "timeout 2 cat < b", F),
    Case("timeout_sh_exit", "timeout 2 sh -c 'exit 3'; echo $?", F),
    Case("timeout_expires", "timeout 0.1 sleep 2; echo $?", F),
    Case("timeout_kill_after", "timeout -k 1 0.1 sleep 2; echo $?", F),
    Case("timeout_preserve", "timeout --preserve-status 0.1 sleep 2; echo $?", F),
    Case("timeout_preserve_int", "timeout -s INT --preserve-status 0.1 sleep 2; echo $?", F),
    Case("timeout_signal_hup", "timeout -s HUP 0.1 sleep 2; echo $?", F),
    Case("timeout_signal_long", "timeout --signal=SIGINT 0.1 sleep 2; echo $?", F),
    Case("timeout_zero_disables", "timeout 0 true; echo $?", F),
    Case("timeout_missing_command", "timeout 1 nosuchcmd; echo $?", F),
    Case("timeout_path_missing", "timeout 1 ./nope; echo $?", F),
    Case("timeout_not_executable", "timeout 1 ./a; echo $?", F),
    Case("timeout_directory", "timeout 1 ./d; echo $?", F),
    Case("timeout_no_operand", "timeout; echo $?", F),
    Case("timeout_no_command", "timeout 1; echo $?", F),
    Case("timeout_bad_interval", "timeout x true; echo $?", F),
    Case("timeout_bad_signal", "timeout -s BOGUS 1 true; echo $?", F),
    Case("timeout_bad_signal_number", "timeout -s 99 1 true; echo $?", F),
    Case("timeout_bad_option", "timeout --bogus; echo $?", F),
]

# --------------------------------------------------------------------------- true, false

TRUE_FALSE = [
    Case("true_status", "true; echo $?", F),
    Case("false_status", "false; echo $?", F),
    Case("true_ignores_args", "true --help -x a; echo $?", F),
    Case("false_ignores_args", "false x y; echo $?", F),
    Case("true_false_pipe", "true | false; echo $?; false | true; echo $?", F),
    Case("true_negated", "! true; echo $?; ! false; echo $?", F),
    Case("false_pipefail", "set -o pipefail; false | true; echo $?", F),
    Case("true_redirect_creates", "true > f; wc -c < f", F),
    Case("true_false_command", "command true; echo $?; command false; echo $?", F),
    Case("true_false_env", "env true; echo $?; env false; echo $?", F),
    Case("true_false_type", "type true false", F),
    Case("true_false_timeout", "timeout 1 true; echo $?; timeout 1 false; echo $?", F),
    Case("true_false_lists", "true && echo yes; false || echo no; false && echo never; echo $?", F),
    Case("true_false_loops", "until true; do :; done; echo $?; while false; do :; done; echo $?", F),
    Case("true_false_if", "if false; then echo a; elif true; then echo b; fi", F),
    Case("false_errexit", "set -e; false || true; echo alive; false; echo dead", F),
    Case("true_false_xargs", "echo x | xargs false; echo $?; echo x | xargs true; echo $?", F),
]

# --------------------------------------------------------------------------- egrep, fgrep

EGREP = [
    Case("egrep_alternation", "egrep 'al|ga' a", F),
    Case("egrep_count", "egrep -c 'e|o' a b", F),
    Case("egrep_invert", "egrep -v 'a$' a", F),
    Case("egrep_ignore_case_number", "egrep -in 'BETA|ONE' a b", F),
    Case("egrep_only", "egrep -o 'a.' a", F),
    Case("egrep_word", "egrep -w 'one|tw' b; echo $?", F),
    Case("egrep_interval", "egrep 'm{2}' a; egrep -x '(on|tw)[eo]' b", F),
    Case("egrep_files_with_matches", "egrep -l 'o|a' a b empty", F),
    Case("egrep_quiet", "egrep -q gamma a; echo $?; egrep -q zzz a; echo $?", F),
    Case("egrep_stdin", "printf 'ab\\ncd\\n' | egrep 'b|c'", F),
    Case("egrep_no_filename", "egrep -h e a b", F),
    Case("egrep_recursive", "egrep -r 'ins|x' d", F),
    Case("egrep_unmatched_paren", "egrep '(' a; echo $?", F),
    Case("egrep_missing_pattern", "egrep; echo $?", F),
    Case("egrep_bad_option", "egrep --bogus x a; echo $?", F),
    Case("egrep_missing_file", "egrep x nope; echo $?", F),
    Case("egrep_missing_and_match", "egrep -l 'o|a' a nope b; echo $?", F),
    Case("egrep_directory", "egrep x d; echo $?", F),
    Case("egrep_denied", "egrep x locked a; echo $?", F, user=1000),
]
FGREP = [
    Case("fgrep_literal_dot", "fgrep 'a.' a; echo $?", F),
    Case("fgrep_bracket", "fgrep '[' a; echo $?; printf 'x[y\\n' | fgrep '['", F),
    Case("fgrep_line", "fgrep -x beta a", F),
    Case("fgrep_count", "fgrep -c a a b", F),
    Case("fgrep_ignore_case", "fgrep -i ALPHA a", F),
    Case("fgrep_invert", "fgrep -v a a", F),
    Case("fgrep_several", "fgrep -e one -e gam a b", F),
    Case("fgrep_word", "fgrep -w et a; echo $?; fgrep -w two b", F),
    Case("fgrep_pattern_file", "printf 'one\\nal\\n' > p; fgrep -f p a b", F),
    Case("fgrep_newline_patterns", "fgrep \"$(printf 'ee\\nph')\" a b", F),
    Case("fgrep_recursive", "fgrep -r ins .", F),
    Case("fgrep_star_literal", "printf 'a*b\\nab\\n' | fgrep 'a*b'", F),
    Case("fgrep_pattern_file_missing", "fgrep -f nope a; echo $?", F),
    Case("fgrep_missing_file", "fgrep x nope; echo $?", F),
    Case("fgrep_directory", "fgrep x d; echo $?", F),
    Case("fgrep_bad_option", "fgrep -k x a; echo $?", F),
    Case("fgrep_denied", "fgrep x locked; echo $?", F, user=1000),
    Case("fgrep_no_match", "fgrep zzz a b; echo $?", F),
]

# --------------------------------------------------------------------------- the digest sums


def _digest_cases(tool: str) -> list[Case]:
    c = tool.removesuffix("sum")
    return [
        Case(f"{c}_files", f"{tool} a b", F),
        Case(f"{c}_stdin", f"{tool} < a; printf '' | {tool}", F),
        Case(f"{c}_dash", f"{tool} - a - < b", F),
        Case(f"{c}_empty", f"{tool} empty", F),
        Case(f"{c}_tag", f"{tool} --tag a b", F),
        Case(f"{c}_binary_text", f"{tool} -b a; {tool} -t a; {tool} -t --tag a", F),
        Case(f"{c}_zero", f"{tool} -z a b | tr '\\0' '|'; echo", F),
        Case(f"{c}_escaped_name", f"touch 'x\\y'; {tool} 'x\\y'; {tool} -z 'x\\y' | tr '\\0' '|'", F),
        Case(f"{c}_check_ok", f"{tool} a b > s; {tool} -c s; echo $?", F),
        Case(f"{c}_check_tagged", f"{tool} --tag a b > s; {tool} -c s; echo $?", F),
        Case(f"{c}_check_failed", f"{tool} a b > s; echo x >> b; {tool} -c s; echo $?", F),
        Case(f"{c}_check_quiet_status",
             f"{tool} a b > s; echo x >> b; {tool} --quiet -c s; echo $?; {tool} --status -c s; echo $?", F),
        Case(f"{c}_check_format",
             f"{tool} a > s; echo junk >> s; {tool} -c s; echo $?; {tool} -c --strict s; echo $?; {tool} -cw s", F),
        Case(f"{c}_check_no_lines", f"printf 'junk\\n' > s; {tool} -c s; echo $?", F),
        Case(f"{c}_check_missing",
             f"{tool} a nope b > s; {tool} -c s; echo $?; {tool} -c --ignore-missing s; echo $?", F),
        Case(f"{c}_check_listing_missing", f"{tool} -c nope; echo $?", F),
        Case(f"{c}_check_listing_directory", f"{tool} -c d; echo $?", F),
        Case(f"{c}_check_refused", f"{tool} -c --tag s; echo $?; {tool} -c -z s; echo $?; {tool} -b -c s; echo $?", F),
        Case(f"{c}_check_only", f"{tool} --quiet a; echo $?; {tool} --strict a; echo $?; {tool} -w a; echo $?", F),
        Case(f"{c}_missing", f"{tool} nope a; echo $?", F),
        Case(f"{c}_directory", f"{tool} d; echo $?", F),
        Case(f"{c}_denied", f"{tool} locked a; echo $?", F, user=1000),
        Case(f"{c}_bad_option", f"{tool} -x; echo $?", F),
    ]


DIGESTS = [case for t in ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum")
           for case in _digest_cases(t)]

# --------------------------------------------------------------------------- gunzip, zcat
# K's deflate need not produce GNU's bytes: the cases compare only what comes out of a
# decompression (GNU documents its truncated-stream output as whatever it had decoded).

GUNZIP = [
    Case("gunzip_replaces", "gzip a; gunzip a.gz; echo $?; ls; cat a", F),
    Case("gunzip_keep", "gzip -k a; rm a; gunzip -k a.gz; ls; cat a", F),
    Case("gunzip_stdout", "gzip -c a > z.gz; gunzip -c z.gz; ls", F),
    Case("gunzip_stdin", "gzip -c a | gunzip", F),
    Case("gunzip_stdin_dash", "gzip -c b > z.gz; gunzip -c - < z.gz", F),
    Case("gunzip_without_suffix", "gzip a; gunzip a; echo $?; cat a", F),
    Case("gunzip_exists", "gzip -k a; gunzip a.gz; echo $?; ls", F),
    Case("gunzip_force", "gzip -k a; gunzip -f a.gz; echo $?; ls", F),
    Case("gunzip_several", "gzip a b; gunzip a.gz b.gz; cat a b", F),
    Case("gunzip_concatenated", "gzip -c a > z.gz; gzip -c b >> z.gz; gunzip -c z.gz", F),
    Case("gunzip_test", "gzip -c a > z.gz; gunzip -t z.gz; echo $?; gunzip -tv z.gz; ls", F),
    Case("gunzip_test_bad", "cp a a.gz; gunzip -t a.gz; echo $?; gunzip -t a; echo $?", F),
    Case("gunzip_not_gzip", "cp a a.gz; gunzip a.gz; echo $?; ls", F),
    Case("gunzip_trailing_garbage", "gzip -c a > z.gz; printf junk >> z.gz; gunzip -c z.gz; echo $?; "
         "gunzip -tq z.gz; echo $?; gunzip z.gz; echo $?; cat z", F),
    Case("gunzip_empty_file", "touch e.gz; gunzip -c e.gz; echo $?; gunzip -t e.gz; echo $?", F),
    Case("gunzip_empty_stdin", "gunzip; echo $?", F),
    Case("gunzip_truncated", "gzip -c a > z.gz; head -c 20 z.gz > t.gz; gunzip -c t.gz > /dev/null; echo $?", F),
    Case("gunzip_unknown_suffix", "gunzip b; echo $?", F),
    Case("gunzip_missing", "gunzip nope; echo $?; gunzip nope.gz; echo $?", F),
    Case("gunzip_directory", "gunzip d; echo $?", F),
    Case("gunzip_bad_option", "gunzip -x; echo $?", F),
    Case("gunzip_denied", "gzip -c a > z.gz; chmod 0 z.gz; gunzip z.gz; echo $?; ls", F, user=1000),
]
ZCAT = [
    Case("zcat_file", "gzip -k a; zcat a.gz", F),
    Case("zcat_stdin", "gzip -c a | zcat", F),
    Case("zcat_several", "gzip a b; zcat a.gz b.gz", F),
    Case("zcat_adds_suffix", "gzip a; zcat a; echo $?", F),
    Case("zcat_keeps_file", "gzip a; zcat a.gz > /dev/null; ls", F),
    Case("zcat_concatenated", "gzip -c a > z.gz; gzip -c b >> z.gz; zcat z.gz | wc -l", F),
    Case("zcat_into_pipeline", "gzip -c b > z.gz; zcat z.gz | sort | head -1", F),
    Case("zcat_force_plain", "zcat -f a - < b; echo $?", F),
    Case("zcat_force_mixed", "gzip -c a > z.gz; cat z.gz b > q.gz; zcat -f q.gz; echo $?", F),
    Case("zcat_not_gzip", "zcat a; echo $?", F),
    Case("zcat_trailing_garbage", "gzip -c a > z.gz; printf junk >> z.gz; zcat z.gz; echo $?", F),
    Case("zcat_empty", "touch e.gz; zcat e.gz; echo $?; zcat -f e.gz; echo $?", F),
    Case("zcat_missing", "zcat nope; echo $?", F),
    Case("zcat_missing_then_file", "gzip -k b; zcat nope.gz b.gz; echo $?", F),
    Case("zcat_directory", "zcat d; echo $?", F),
    Case("zcat_bad_option", "zcat -x; echo $?", F),
    Case("zcat_denied", "gzip -c a > z.gz; chmod 0 z.gz; zcat z.gz; echo $?", F, user=1000),
]

# --------------------------------------------------------------------------- printenv, which

PRINTENV = [
    Case("printenv_null", "printenv -0 HOME USER | tr '\\0' '|'; echo", F),
    Case("printenv_some_missing", "printenv HOME NOPE USER; echo $?", F),
    Case("printenv_assignment_operand", "printenv A=B; echo $?", F),
    Case("printenv_bad_long", "printenv --bogus; echo $?", F),
    Case("printenv_multiline_value", "export X='a b\nc'; printenv X", F),
    Case("printenv_unset", "export X=1; unset X; printenv X; echo $?", F),
    Case("printenv_env_i", "env -i printenv; echo $?", F),
    Case("printenv_subshell", "(export Y=1; printenv Y); printenv Y; echo $?", F),
    Case("printenv_dash_dash", "printenv -- HOME", F),
    Case("printenv_empty_name", "printenv ''; echo $?", F),
    Case("printenv_all_has_home", "printenv | grep -c \"^HOME=$HOME\\$\"", F),
    Case("printenv_prefix_assignment", "Z=9 printenv Z; printenv Z; echo $?", F),
    Case("printenv_empty_value", "export E=; printenv E | cat -A", F),
]
WHICH = [
    Case("which_tools", "which ls cat; echo $?", F),
    Case("which_one_missing", "which ls nosuch; echo $?", F),
    Case("which_bad_option", "which -x; echo $?", F),
    Case("which_bad_option_cluster", "which -ax ls; echo $?", F),
    Case("which_all_nothing", "which -a; echo $?", F),
    Case("which_dash_dash", "which -- ls", F),
    Case("which_directory_name", "mkdir bin; which bin; echo $?", F),
    Case("which_all_scripts", "mkdir -p b1 b2; printf x > b1/t; printf x > b2/t; chmod +x b1/t b2/t; "
         "PATH=$PWD/b1:$PWD/b2:$PATH which -a t; PATH=$PWD/b1:$PWD/b2:$PATH which t", F),
    Case("which_relative", "printf x > t; chmod +x t; which ./t t; echo $?", F),
    Case("which_relative_not_exec", "which ./a; echo $?", F),
    Case("which_dir_path", "which d/; echo $?; which ./d; echo $?", F),
    Case("which_denied_dir", "mkdir -p bin; printf x > bin/t; chmod +x bin/t; chmod 0 bin; "
         "PATH=$PWD/bin:$PATH which t; echo $?", F, user=1000),
]

# --------------------------------------------------------------------------- id, whoami
# K names ids from its own agent records, the real side from the host's user database: the cases
# name root (both have it) or names neither has; agents' names are checked in
# tests/kshell/test_machine_shape.py. Both run as root or as uid 1000 (numbers only for that one).

ID = [
    Case("id_named_users", "id -u root; id -g root; id root; id -un root; id -Gn root", F),
    Case("id_several_users", "id root root; id -u root root", F),
    Case("id_missing_user", "id -un nope root; echo $?", F),
    Case("id_missing_users", "id a b; echo $?", F),
    Case("id_bad_long", "id --bogus; echo $?", F),
    Case("id_zero_default", "id -z; echo $?", F),
    Case("id_zero", "id -zu root root | tr '\\0' '|'; id -zG | tr '\\0' '|'; echo", F),
    Case("id_real", "id -ur; id -gr", F),
    Case("id_as_user", "id -u; id -g; id -G", F, user=1000),
    Case("id_as_user_default", "id | cut -d' ' -f1-2 | sed 's/([^)]*)//g'", F, user=1000),
]
WHOAMI = [
    Case("whoami_root", "whoami", F),
    Case("whoami_bad_long", "whoami --bogus; echo $?", F),
    Case("whoami_extra_operands", "whoami a b; echo $?", F),
    Case("whoami_dash_dash", "whoami --; echo $?", F),
    Case("whoami_dash_dash_operand", "whoami -- x; echo $?", F),
    Case("whoami_one_line", "whoami | wc -l", F),
    Case("whoami_vs_id", "[ \"$(whoami)\" = \"$(id -un)\" ] && echo same", F),
    Case("whoami_in_subst", "echo \"me=$(whoami)\" | cut -d= -f1", F),
    Case("whoami_vs_stat", "touch f; [ \"$(whoami)\" = \"$(stat -c %U f)\" ] && echo owner", F),
    Case("whoami_vs_ls", "touch f; ls -l f | grep -c \" $(whoami) \"", F),
    Case("whoami_user_in_env", "[ \"$(whoami)\" = \"$USER\" ] && echo same", F),
]

# --------------------------------------------------------------------------- hostname, uname, nproc
# The node name, release and version are the appliance's own (kshell/tools/system/identity.py):
# the cases compare their shape and how they relate, not the host's values.

HOSTNAME = [
    Case("hostname_one_line", "hostname | wc -l", F),
    Case("hostname_status", "hostname > /dev/null; echo $?", F),
    Case("hostname_is_uname_n", "[ \"$(hostname)\" = \"$(uname -n)\" ] && echo same", F),
    Case("hostname_short_no_dot", "hostname -s | grep -c '\\.'", F),
    Case("hostname_short_prefix", "case $(hostname) in \"$(hostname -s)\"*) echo prefix;; esac", F),
    Case("hostname_long_short", "[ \"$(hostname --short)\" = \"$(hostname -s)\" ] && echo same", F),
    Case("hostname_set_denied", "hostname newname; echo $?", F, user=1000),
    Case("hostname_not_empty", "[ -n \"$(hostname)\" ] && echo named", F),
    Case("hostname_no_space", "hostname | grep -c ' '", F),
    Case("hostname_in_var", "h=$(hostname); [ ${#h} -gt 0 ] && echo ok", F),
    Case("hostname_uname_a_field", "[ \"$(uname -a | cut -d' ' -f2)\" = \"$(hostname)\" ] && echo same", F),
    Case("hostname_bad_option", "hostname -x; echo $?", F),
    Case("hostname_bad_long_option", "hostname --bogus; echo $?; hostname --short=3; echo $?", F),
    Case("hostname_short_one_line", "hostname -s | wc -l", F),
    Case("hostname_as_user", "hostname | wc -l", F, user=1000),
    Case("hostname_nodename", "[ \"$(hostname)\" = \"$(uname --nodename)\" ] && echo same", F),
]
UNAME = [
    Case("uname_kernel_name", "uname; uname -s; uname --kernel-name", F),
    Case("uname_os", "uname -o; uname --operating-system", F),
    Case("uname_machine", "uname -m; uname --machine | wc -w", F),
    Case("uname_processor_platform", "uname -p; uname -i", F),
    Case("uname_combined", "uname -sm; uname -sp; uname -mi; uname -so", F),
    Case("uname_all_ends", "uname -a | awk '{print $1, $NF}'", F),
    Case("uname_all_machine", "[ \"$(uname -a | awk '{print $(NF-1)}')\" = \"$(uname -m)\" ] && echo same", F),
    Case("uname_release_line", "uname -r | wc -l; uname -v | wc -l; uname -n | wc -l", F),
    Case("uname_every_option", "uname -snrvmpio | wc -l", F),
    Case("uname_order", "uname -ms; uname -om", F),
    Case("uname_extra_operand", "uname a; echo $?", F),
    Case("uname_bad_option", "uname -x; echo $?", F),
    Case("uname_bad_long", "uname --bogus; echo $?", F),
    Case("uname_in_case", "case $(uname -s) in Linux) echo linux;; *) echo other;; esac", F),
    Case("uname_as_user", "uname -s; uname -o", F, user=1000),
]
NPROC = [
    Case("nproc_shape", "nproc | grep -c '^[1-9][0-9]*$'", F),
    Case("nproc_all_shape", "nproc --all | grep -c '^[1-9][0-9]*$'", F),
    Case("nproc_all_ge", "[ $(nproc --all) -ge $(nproc) ] && echo ok", F),
    Case("nproc_ignore_many", "nproc --ignore=100", F),
    Case("nproc_ignore_zero", "[ $(nproc --ignore=0) = $(nproc) ] && echo same", F),
    Case("nproc_ignore_bad", "nproc --ignore=x; echo $?", F),
    Case("nproc_ignore_missing", "nproc --ignore; echo $?", F),
    Case("nproc_omp", "OMP_NUM_THREADS=1 nproc; OMP_NUM_THREADS=5,2 nproc", F),
    Case("nproc_omp_limit", "OMP_THREAD_LIMIT=1 nproc; OMP_NUM_THREADS=3 OMP_THREAD_LIMIT=2 nproc", F),
    Case("nproc_omp_invalid", "[ $(OMP_NUM_THREADS=x nproc) = $(nproc) ] && echo ignored", F),
    Case("nproc_omp_all", "[ $(OMP_NUM_THREADS=1 nproc --all) = $(nproc --all) ] && echo all", F),
    Case("nproc_omp_ignore", "OMP_NUM_THREADS=1 nproc --ignore=1; OMP_NUM_THREADS=4 nproc --ignore=1", F),
    Case("nproc_bad_option", "nproc -x; echo $?", F),
    Case("nproc_extra_operand", "nproc 3; echo $?", F),
    Case("nproc_arith", "echo $(( $(nproc) > 0 ))", F),
]

# --------------------------------------------------------------------------- pwd

PWD = [
    Case("pwd_home", "pwd", F),
    Case("pwd_subdir", "cd d; pwd", F),
    Case("pwd_parent", "cd d/..; pwd; cd d; cd ..; pwd", F),
    Case("pwd_tmp", "cd /tmp; pwd; cd /; pwd", F),
    Case("pwd_link_logical", "cd link; pwd; pwd -L", F),
    Case("pwd_link_physical", "cd link; pwd -P", F),
    Case("pwd_cd_physical", "cd -P link; pwd", F),
    Case("pwd_subshell", "(cd d && pwd); pwd", F),
    Case("pwd_var", "cd d; [ \"$PWD\" = \"$(pwd)\" ] && echo same", F),
    Case("pwd_oldpwd", "cd d; cd - >/dev/null; pwd; echo $OLDPWD", F),
    Case("pwd_bad_option", "pwd -x; echo $?", F),
    Case("pwd_operand_ignored", "pwd extra; echo $?", F),
    Case("pwd_trailing_slash", "cd d/; pwd", F),
    Case("pwd_removed_dir_logical", "mkdir e; cd e; rmdir ../e; pwd; echo $?", F),
    Case("pwd_denied_cd", "cd shut; echo $?; pwd", F, user=1000),
    Case("pwd_both_options", "cd link; pwd -L -P; pwd -P -L", F),
]

# --------------------------------------------------------------------------- df
# df reports the VFS (one file system, "kfs"), not the host's disks: the cases compare headers
# (squeezed: column widths follow the values), field counts, line counts and errors.

DF = [
    Case("df_header", "df . | head -1 | tr -s ' '", F),
    Case("df_header_human", "df -h . | head -1 | tr -s ' '", F),
    Case("df_header_si", "df -H . | head -1 | tr -s ' '", F),
    Case("df_header_kib", "df -k . | head -1 | tr -s ' '", F),
    Case("df_header_posix", "df -P . | head -1 | tr -s ' '; df -Ph . | head -1 | tr -s ' '", F),
    Case("df_header_type", "df -T . | head -1 | tr -s ' '", F),
    Case("df_fields", "df . | awk 'NR==2{print NF}'; df -h . | awk 'NR==2{print NF}'", F),
    Case("df_fields_type", "df -hT . | awk 'NR==2{print NF}'; df -P . | awk 'NR==2{print NF}'", F),
    Case("df_lines", "df . | wc -l; df . a | wc -l", F),
    Case("df_percent", "df . | awk 'NR==2{print ($5 ~ /^[0-9]+%$/)}'", F),
    Case("df_missing", "df nosuch; echo $?", F),
    Case("df_missing_and_found", "df . nosuch | wc -l; df . nosuch > /dev/null; echo $?", F),
    Case("df_option_needs_argument", "df -x; echo $?", F),
    Case("df_bad_option", "df --bogus; echo $?", F),
    Case("df_no_such_type", "df -t nosuchfs; echo $?", F),
    Case("df_denied", "df shut/x; echo $?", F, user=1000),
]

# --------------------------------------------------------------------------- help
# bash's help documents bash's builtins, K's lists the K shell's builtins and tools
# (kshell/tools/system/which.py): the cases compare statuses, errors and the shape of a topic.

HELP = [
    Case("help_status", "help > /dev/null; echo $?", F),
    Case("help_lists_cd", "help | grep -qw cd && echo has-cd", F),
    Case("help_bad_option", "help -x; echo $?", F),
    Case("help_bad_option_cluster", "help -dx; echo $?", F),
    Case("help_no_match", "help nosuch; echo $?", F),
    Case("help_no_match_last", "help nosuch other; echo $?", F),
    Case("help_some_match", "help nosuch cd > /dev/null; echo $?", F),
    Case("help_dash", "help -; echo $?", F),
    Case("help_topic", "help cd | head -1 | cut -d: -f1", F),
    Case("help_describe", "help -d cd | cut -d' ' -f1,2", F),
    Case("help_synopsis", "help -s pwd | cut -d: -f1", F),
    Case("help_manpage", "help -m cd | head -1", F),
    Case("help_glob_header", "help 'pw*' | head -2", F),
    Case("help_dash_dash", "help -- cd | head -1 | cut -d: -f1", F),
    Case("help_topic_status", "help pwd > /dev/null; echo $?", F),
]

ALL = (REV + TAC + RMDIR + YES + SLEEP + TIMEOUT + TRUE_FALSE + EGREP + FGREP + DIGESTS + GUNZIP + ZCAT
       + PRINTENV + WHICH + ID + WHOAMI + HOSTNAME + UNAME + NPROC + PWD + DF + HELP)


@pytest.mark.parametrize("case", ALL, ids=Case.id)
def test_small_tool(case: Case) -> None:
    assert_same(case)


def test_case_names_unique() -> None:
    names = [c.name for c in ALL]
    assert len(names) == len(set(names))
