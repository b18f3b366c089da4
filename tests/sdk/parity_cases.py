"""Command lines that must give the same stdout, stderr and exit status whichever front end runs
them: OpenSSH's `ssh AGENT@HOST CMD`, `kshell.sdk.remote.connect(...).exec(CMD)` and the local
`AgentSession.exec(CMD)`. Each is (command, stdin). They run one after another in one session,
so none leaves the session changed (a `cd` or an export stays in a subshell), and each gives
the same result when run again (writes go under ~/proj/parity and replace what was there).

Run in a `limited` session whose scope is `~/proj` (as tests/sdk/test_remote.py does), the
write to `~/outside.txt` is the denied one; in a `full` session it succeeds, the same on every
front end.
"""

from __future__ import annotations

CASES: list[tuple[str, bytes]] = [
    # builtins and the shell's own grammar
    ("echo hello world", b""),
    ("printf '%s-%03d|%x\\n' abc 42 255", b""),
    ("true", b""),
    ("false", b""),
    ("exit 7", b""),
    ("echo out; echo err >&2; exit 3", b""),
    ("echo $((6 * 7)) $((17 % 5))", b""),
    ('x=5; if [ "$x" -gt 3 ]; then echo big; else echo small; fi', b""),
    ('f() { echo "fn:$1:$#"; return 4; }; f one two', b""),
    ("for i in 1 2 3; do printf '%s,' $i; done; echo", b""),
    ("case foo.txt in *.txt) echo text;; *) echo other;; esac", b""),
    ('set -- a "b c" d; echo $#; echo "$2"', b""),
    ('echo "${UNSET_VAR:-default}" "${#HOME}"', b""),
    ('echo "$HOME $USER"', b""),
    ("[ -e /no/such/path ]; echo $?", b""),
    ("(cd ~/proj && pwd)", b""),
    ("no-such-command-here", b""),
    ("cat /no/such/file", b""),
    ("ls /no/such/dir", b""),
    # stdin
    ("cat", b"stdin bytes\n\x00\xff\xfe raw\n"),
    ('read a b; echo "$b|$a"', b"one two three\n"),
    ("while read line; do echo \"<$line>\"; done", b"x\ny\nz\n"),
    ("wc -l", b"a\nb\nc\n"),
    ("head -c 5", b"abcdefgh"),
    # tools
    ("sort -r", b"b\na\nc\n"),
    ("tr a-z A-Z", b"shout\n"),
    ("grep -c foo", b"foo\nbar\nfoo\n"),
    ("grep zzz", b"abc\n"),
    ("sed 's/a/o/g'", b"banana\n"),
    ("awk '{ s += $1 } END { print s, NR }'", b"1\n2\n3\n"),
    ("cut -d: -f2", b"a:b:c\nd:e:f\n"),
    ("uniq -c", b"a\na\nb\n"),
    ("base64", b"hello, world"),
    ("sha256sum", b"abc"),
    ("basename /a/b/c.txt .txt; dirname /a/b/c.txt", b""),
    ("date -u -d @0 +%Y-%m-%dT%H", b""),
    ("seq 3 | tac", b""),
    # pipelines
    ("seq 1 10 | grep 1 | wc -l", b""),
    ("printf 'b\\na\\nb\\n' | sort | uniq", b""),
    ("echo 'a b  c' | xargs -n1 echo item", b""),
    ("cat | tr -d '\\n' | wc -c", b"12\n34\n"),
    ("false | true; echo $?", b""),
    # files: writes inside the scope, then the denied one
    ("mkdir -p ~/proj/parity && echo data > ~/proj/parity/f && cat ~/proj/parity/f && rm ~/proj/parity/f", b""),
    ("echo teed | tee ~/proj/parity/t.txt; cat ~/proj/parity/t.txt", b""),
    ("echo x > ~/outside.txt", b""),
]
