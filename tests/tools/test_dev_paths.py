"""Device paths as tool operands (/dev/null, /dev/zero, /dev/stdin, /dev/stdout, /dev/stderr,
/dev/fd/N), against real bash and the GNU tools: the shell resolves them the same way for a
tool operand as for a redirection (kshell/exec/devices.py)."""

from __future__ import annotations

import pytest
from differential import Case, assert_same

F = {"f": "one\ntwo\n", "g": "b\n"}

CASES = [
    # reading /dev/null
    Case("cat_null", "cat /dev/null; echo $?; cat f /dev/null f", F),
    Case("wc_null", "wc -l /dev/null; wc /dev/null f", F),
    Case("grep_null", "grep x /dev/null; echo $?; grep -c x /dev/null /dev/null; grep -r x /dev/null; echo $?"),
    Case("sort_uniq_null", "sort /dev/null; echo $?; uniq /dev/null; echo $?"),
    Case("head_tail_null", "head -n 2 /dev/null; tail /dev/null; echo $?"),
    Case("diff_null", "diff /dev/null f; echo $?; diff f /dev/null | head -n 1; diff /dev/null /dev/null; echo $?", F),
    Case("cmp_null", "cmp f /dev/null; echo $?; cmp /dev/null /dev/null; echo $?", F),
    Case("digests_null", "sha256sum /dev/null; md5sum /dev/null; sha1sum /dev/null"),
    Case("sed_awk_null", "sed -n p /dev/null; awk 'END{print NR}' /dev/null; echo $?"),
    Case("misc_filters_null", "cut -f1 /dev/null; nl /dev/null; tac /dev/null; rev /dev/null; echo $?"),
    # /dev/zero
    Case("head_zero", "head -c 10 /dev/zero | tr '\\0' z; echo; head -c 70000 /dev/zero | wc -c"),
    # /dev/stdin and /dev/fd/N
    Case("cat_stdin", "echo hi | cat /dev/stdin; echo hi | cat - /dev/stdin; echo hi | cat /dev/fd/0"),
    Case("awk_sed_stdin", "echo hi | awk 1 /dev/stdin; echo hi | sed p /dev/stdin"),
    Case("wc_grep_stdin", "echo abc | wc -c /dev/stdin; echo x | grep -H x /dev/stdin; cut -c1 /dev/stdin <<< abc"),
    Case("stdin_from_file", "wc -c /dev/stdin < f; tail -n 1 /dev/stdin < f", F),
    Case("merge_stdin", "echo b | sort f /dev/stdin; echo b | comm /dev/stdin g; echo a | paste - /dev/null", F),
    Case("jq_stdin", "echo '{\"a\":1}' | jq . /dev/stdin; echo '{}' | jq -c . /dev/null /dev/stdin;"
         " echo '[1]' | jq -c --slurpfile x /dev/stdin -n '$x'"),
    Case("sed_r_stdin", "printf 'a\\nb\\n' | sed '1r /dev/stdin' f", F),
    Case("fd_numbers", "cat f 3<f /dev/fd/3; cat /dev/fd/5; echo $?", F),
    # writing
    Case("tee_devices", "echo hi | tee /dev/stderr; echo hi | tee /dev/stdout; echo hi | tee /dev/null;"
         " echo hi | tee /dev/fd/2 >/dev/null"),
    Case("write_options", "sort -o /dev/stdout g; uniq f /dev/stdout; echo x | sed 'w /dev/null';"
         " echo x | awk '{print > \"/dev/null\"}'; echo $?", F),
    Case("cp_devices", "cp /dev/null e; wc -c e; ls -l e | cut -c1-10; cp f /dev/null; echo $?", F),
    Case("tar_null", "tar cf /dev/null f; echo $?; tar tf /dev/null; echo $?", F),
    # metadata
    Case("ls_null", "ls /dev/null /dev/stdin; ls -l /dev/null /dev/zero | cut -d' ' -f1-6"),
    Case("ls_stdin_link", "ls -l /dev/stdin | cut -d' ' -f1,2,3,4,5,10-"),
    Case("stat_null", "stat -c '%F %a %s %t %T %u %g %h %U' /dev/null /dev/zero; stat -c '%N %F' /dev/stderr"),
    Case("test_devices", "[ -c /dev/null ] && [ -c /dev/zero ] && [ -e /dev/stdout ] && echo ok;"
         " [ -L /dev/stdout ]; echo $?; [ -f /dev/null ]; echo $?"),
    Case("find_null", "find /dev/null; find /dev/null /dev/zero -type c; find /dev/null -maxdepth 0 -printf '%y %m\\n'"),
    Case("file_du_null", "file /dev/null /dev/zero; file /dev/stdin < /dev/null; du /dev/null; du -a /dev/null"),
    Case("readlink_std", "readlink /dev/stdin /dev/stderr; echo $?; readlink /dev/null; echo $?"),
    Case("source_stdin", "echo 'echo sourced' | . /dev/stdin; echo 'echo run' | bash /dev/stdin; source /dev/null; echo $?"),
    Case("missing_device", "cat /dev/nul; echo $?; echo hi | cat /dev//stdin"),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_dev_paths(case: Case) -> None:
    assert_same(case)
