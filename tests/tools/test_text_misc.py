"""xargs, base64, sha*sum/md5sum, seq, yes, sleep, timeout, tac and rev against GNU tools."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same

F = {"a": "one\ntwo\nthree\n", "b": "hello world\n", "d/": Dir(), "d/x": "x\n", "d/y": "yy\n",
     "secret": File("s\n", 0o200), "list": "a b\n'c d' e\\ f\n", "nl": "tail"}

XARGS = [
    Case("xargs_default", "echo a b c | xargs", F), Case("xargs_n1", "echo a b c | xargs -n1 echo x", F),
    Case("xargs_n2", "seq 5 | xargs -n 2", F), Case("xargs_null", "printf 'a b\\0c\\0' | xargs -0 -n1 echo", F),
    Case("xargs_replace", "printf 'a\\nb\\n' | xargs -I{} echo '<{}>'", F),
    Case("xargs_replace_str", "printf 'a\\nb\\n' | xargs -I X echo X-X", F),
    Case("xargs_lines", "printf 'a b\\nc\\nd e f\\n' | xargs -L 2 echo", F),
    Case("xargs_quotes", "xargs -n1 < list", F), Case("xargs_delim", "printf 'a:b:c' | xargs -d: -n1", F),
    Case("xargs_empty_runs", "xargs echo hi < /dev/null", F),
    Case("xargs_empty_r", "xargs -r echo hi < /dev/null; echo $?", F),
    Case("xargs_wc", "printf 'a\\nb\\n' | xargs wc -l", F),
    Case("xargs_cat_files", "ls d | sed 's|^|d/|' | xargs cat" if False else "printf 'd/x d/y' | xargs cat", F),
    Case("xargs_status_123", "echo nope | xargs cat; echo $?", F),
    Case("xargs_not_found", "echo a | xargs no-such-cmd; echo $?", F),
    Case("xargs_verbose", "echo a b | xargs -t echo", F),
    Case("xargs_unmatched_quote", "echo \"a 'b\" | xargs; echo $?", F),
    Case("xargs_bad_option", "xargs -y; echo $?", F), Case("xargs_bad_n", "xargs -n 0 < /dev/null; echo $?", F),
    Case("xargs_find_print0", "find d -type f -print0 | sort -z | xargs -0 -n1 wc -c", F),
    Case("xargs_arg_file", "xargs -a a echo", F),
]
DIGEST = [
    Case("b64_encode", "base64 a", F), Case("b64_stdin", "echo -n hi | base64", F),
    Case("b64_decode", "echo aGVsbG8K | base64 -d", F), Case("b64_wrap", "seq 100 | base64 -w 20", F),
    Case("b64_nowrap", "seq 100 | base64 -w0", F), Case("b64_roundtrip", "base64 b | base64 -d", F),
    Case("b64_invalid", "echo '!!!' | base64 -d; echo $?", F), Case("b64_missing", "base64 nope; echo $?", F),
    Case("b64_bad_option", "base64 -q; echo $?", F), Case("b64_dir", "base64 d; echo $?", F),
    Case("b64_empty", "base64 < /dev/null", F), Case("b64_extra", "base64 a b; echo $?", F),
    Case("b64_ignore_garbage", "echo 'aGk=!' | base64 -di", F), Case("b64_decode_long", "echo -n aGk= | base64 --decode", F),
    Case("b64_permission", "base64 secret; echo $?", F, user=1000),
    Case("sha256", "sha256sum a b", F), Case("sha1", "sha1sum a", F), Case("md5", "md5sum a b", F),
    Case("sha512", "sha512sum b", F), Case("sha_stdin", "echo x | sha256sum", F),
    Case("sha_missing", "sha256sum nope a; echo $?", F), Case("sha_dir", "md5sum d; echo $?", F),
    Case("sha_check_ok", "sha256sum a b > s; sha256sum -c s; echo $?", F),
    Case("sha_check_fail", "sha256sum a b > s; echo changed > a; sha256sum -c s; echo $?", F),
    Case("sha_check_missing", "md5sum a > s; rm a; md5sum -c s; echo $?", F),
    Case("sha_check_quiet", "sha1sum a b > s; sha1sum --quiet -c s; echo $?", F),
    Case("sha_check_status", "sha1sum a > s; echo z > a; sha1sum --status -c s; echo $?", F),
    Case("sha_check_badformat", "echo junk > s; sha256sum -c s; echo $?", F),
    Case("sha_tag", "sha256sum --tag a", F), Case("sha_binary", "md5sum -b a", F),
    Case("sha_bad_option", "sha256sum -q a; echo $?", F),
    Case("sha_permission", "md5sum secret; echo $?", F, user=1000),
]
SEQ = [
    Case("seq_last", "seq 5", F), Case("seq_first_last", "seq 3 6", F), Case("seq_step", "seq 1 3 10", F),
    Case("seq_reverse", "seq 5 -1 1", F), Case("seq_negative", "seq -3 -1", F),
    Case("seq_float", "seq 0 0.5 2", F), Case("seq_float_step", "seq 1 0.25 2", F),
    Case("seq_sep", "seq -s, 5", F), Case("seq_width", "seq -w 8 11", F),
    Case("seq_format", "seq -f 'n%03g' 3", F), Case("seq_empty", "seq 5 1; echo $?", F),
    Case("seq_bad", "seq x; echo $?", F), Case("seq_zero_step", "seq 1 0 5; echo $?", F),
    Case("seq_missing", "seq; echo $?", F), Case("seq_big", "seq 100000 | tail -n 1", F),
    Case("seq_width_negative", "seq -w -5 5", F), Case("seq_extra", "seq 1 2 3 4; echo $?", F),
]
SMALL = [
    Case("yes_default", "yes | head -n 2", F), Case("yes_word", "yes ab c | head -n 3", F),
    Case("yes_many", "yes | head -c 100000 | wc -c", F),
    Case("sleep_fraction", "sleep 0.01; echo $?", F), Case("sleep_suffix", "sleep 0.001m; echo ok", F),
    Case("sleep_bad", "sleep x; echo $?", F), Case("sleep_missing", "sleep; echo $?", F),
    Case("timeout_expires", "timeout 0.2 sleep 5; echo $?", F),
    Case("timeout_ok", "timeout 5 echo hi; echo $?", F),
    Case("timeout_status", "timeout 5 cat nope; echo $?", F),
    Case("timeout_pipeline_yes", "timeout 0.2 yes > /dev/null; echo $?", F),
    Case("timeout_missing", "timeout; echo $?", F),
    Case("timeout_bad_duration", "timeout x echo; echo $?", F),
    Case("tac_file", "tac a", F), Case("tac_stdin", "seq 3 | tac", F), Case("tac_missing", "tac nope; echo $?", F),
    Case("tac_no_newline", "tac nl a", F),
    Case("rev_file", "rev a b", F), Case("rev_stdin", "echo abc | rev", F), Case("rev_no_newline", "rev nl", F),
]


@pytest.mark.parametrize("case", XARGS + DIGEST + SEQ + SMALL, ids=Case.id)
def test_misc(case: Case) -> None:
    assert_same(case)
