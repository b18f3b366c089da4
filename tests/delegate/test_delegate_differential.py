"""Agent-shaped scripts, differential: bash with the host's real programs in a temp directory
against the K shell over ssh, whose builtins and tools run on the VFS and whose other commands
(python3, git, make, sh and python scripts with `#!` lines) are delegated to the sandbox.

Each script runs in a fresh directory of its own on both sides; stdout and the exit status must
match byte for byte (stderr too where a script sends it to stdout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest
from delegation import run
from kserver import Bench, need

PY_LINES = "python3 -c 'import sys; [print(f\"{i} item{i % 7} {i * i % 13}\") for i in range(200)]'"
PY_COPY = "python3 -c 'import sys, shutil; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)'"
PY_JSON = "python3 -c 'import json; print(json.dumps([{\"n\": i, \"even\": i % 2 == 0, \"tag\": \"t%d\" % (i % 3)} for i in range(12)]))'"
GIT = "git -c user.name=Agent -c user.email=agent@k -c init.defaultBranch=main -c advice.detachedHead=false"

# (name, script)
CASES: list[tuple[str, str]] = [
    # python3 output through K tools
    ("py-sort", f"{PY_LINES} | sort -k3n -k1n | head -5"),
    ("py-uniq", f"{PY_LINES} | cut -d' ' -f2 | sort | uniq -c"),
    ("py-awk-sum", f"{PY_LINES} | awk '{{s += $3}} END {{print s, NR}}'"),
    ("py-grep-count", f"{PY_LINES} | grep -c 'item3'"),
    ("py-sed", f"{PY_LINES} | sed -n '10,15s/item/ITEM/p'"),
    ("py-tail", f"{PY_LINES} | tail -n 3"),
    ("py-wc", f"{PY_LINES} | wc -l"),
    ("py-tr", f"{PY_LINES} | head -3 | tr a-z A-Z"),
    ("py-jq", f"{PY_JSON} | jq -c '[.[] | select(.even) | .n]'"),
    ("py-jq-group", f"{PY_JSON} | jq -r 'group_by(.tag)[] | \"\\(.[0].tag) \\(length)\"'"),
    ("py-xargs", "python3 -c 'print(\"a b c\")' | xargs -n1 echo item"),
    ("py-tee", f"{PY_LINES} | tee all.txt | tail -1; wc -l < all.txt"),
    # K tools into python3
    ("seq-py-sum", "seq 1 100 | python3 -c 'import sys; print(sum(int(l) for l in sys.stdin))'"),
    ("printf-py", "printf 'b\\na\\nc\\n' | python3 -c 'import sys; print(sorted(sys.stdin.read().split()))'"),
    ("heredoc-py", "python3 - <<'EOF'\nimport sys\nfor w in ['x', 'y']:\n    print(w * 3)\nEOF"),
    ("heredoc-var-py", "name=world; python3 - <<EOF\nprint('hello $name')\nEOF"),
    ("file-py", "echo '3 4' > n.txt; python3 -c 'a, b = map(int, open(\"n.txt\").read().split()); print(a * b)'"),
    ("py-writes-k-reads", "python3 -c 'open(\"o.txt\", \"w\").write(\"\\n\".join(map(str, range(5))) + \"\\n\")'; cat o.txt | paste -sd+"),
    ("k-writes-py-reads", "printf 'k1\\nk2\\n' > k.txt; python3 -c 'print(open(\"k.txt\").read().splitlines())'"),
    ("py-both-ways", f"seq 1 50 | {PY_COPY} | awk '$1 % 10 == 0' | {PY_COPY} | tr '\\n' ' '; echo"),
    ("py-binary", f"python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 40)' | {PY_COPY} | od -An -tx1 | tail -2"),
    ("py-cmdsub", "x=$(python3 -c 'print(6 * 7)'); echo \"answer=$x\""),
    ("py-cmdsub-lines", "for w in $(python3 -c 'print(\"a b c\")'); do echo \"<$w>\"; done"),
    ("py-procsub", "diff <(python3 -c 'print(1); print(2)') <(printf '1\\n3\\n'); echo $?"),
    ("py-stdin-file", "seq 5 > s.txt; python3 -c 'import sys; print(len(sys.stdin.read()))' < s.txt"),
    ("py-stderr-2to1", "python3 -u -c 'import sys; print(\"out\"); print(\"err\", file=sys.stderr)' 2>&1"),
    ("py-stderr-null", "python3 -c 'import sys; print(\"err\", file=sys.stderr); print(\"out\")' 2>/dev/null"),
    ("py-stderr-file", "python3 -c 'import sys; sys.stderr.write(\"e1\\n\")' 2> e.txt; cat e.txt"),
    ("py-append", "python3 -c 'print(1)' > a.txt; python3 -c 'print(2)' >> a.txt; cat a.txt"),
    # exit statuses
    ("py-exit3", "python3 -c 'raise SystemExit(3)'; echo $?"),
    ("py-exit-in-if", "if python3 -c 'raise SystemExit(1)'; then echo yes; else echo no; fi"),
    ("py-exit-and-or", "python3 -c 'import sys; sys.exit(0)' && echo ok || echo bad"),
    ("py-pipestatus", "python3 -c 'raise SystemExit(2)' | cat; echo ${PIPESTATUS[0]} ${PIPESTATUS[1]}"),
    ("py-pipefail", "set -o pipefail; python3 -c 'raise SystemExit(4)' | sort; echo $?"),
    ("py-set-e", "set -e; python3 -c 'print(1)'; python3 -c 'raise SystemExit(7)'; echo never"),
    ("py-killed", "python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'; echo $?"),
    ("py-sigpipe", "python3 -c 'import sys\nfor i in range(10**6): print(i)' | head -2; echo ${PIPESTATUS[0]}"),
    ("py-not", "! python3 -c 'raise SystemExit(1)'; echo $?"),
    ("py-leaves-stdin", "printf 'a\\nb\\nc\\n' > list; while read f; do python3 -c 'pass'; echo \"got $f\"; done < list"),
    ("py-leaves-pipe", "printf 'abc\\n' | { python3 -c 'import time; time.sleep(0.2)'; cat; }"),
    ("py-takes-stdin", "printf 'x\\ny\\n' | { python3 -c 'import sys; print(sys.stdin.readline().strip())'; cat; }"),
    ("py-reads-some", "seq 1 5 > five; { python3 -c 'import os; print(os.read(0, 4))'; cat; } < five"),
    ("py-while-read", "python3 -c 'print(\"x 1\\ny 2\")' | while read k v; do echo \"$v=$k\"; done"),
    ("py-loop", "for i in 1 2 3; do python3 -c \"print($i ** 2)\"; done"),
    ("py-func", "sq() { python3 -c \"print($1 * $1)\"; }; sq 9; sq 12"),
    ("py-case", "case $(python3 -c 'print(\"b\")') in a) echo A;; b) echo B;; esac"),
    ("py-arith", "n=$(python3 -c 'print(20)'); echo $((n * 2 + 1))"),
    ("py-env", "export GREETING=hi; python3 -c 'import os; print(os.environ[\"GREETING\"])'"),
    ("py-env-prefix", "FOO=bar python3 -c 'import os; print(os.environ.get(\"FOO\"))'; python3 -c 'import os; print(os.environ.get(\"FOO\"))'"),
    ("py-unexported", "LOCAL=1; python3 -c 'import os; print(os.environ.get(\"LOCAL\"))'"),
    ("py-args", "python3 -c 'import sys; print(sys.argv[1:])' a 'b c' \"${HOME:+set}\" ''"),
    ("py-cwd", "mkdir -p sub/deep && cd sub/deep && python3 -c 'import os; print(os.path.basename(os.getcwd()))'"),
    ("py-relative", "mkdir d; echo data > d/f; cd d; python3 -c 'print(open(\"f\").read().strip())'; cd ..; python3 -c 'print(open(\"d/f\").read().strip())'"),
    ("py-listdir", "mkdir x; touch x/b x/a x/c; python3 -c 'import os; print(sorted(os.listdir(\"x\")))'"),
    ("py-mkdir-k-ls", "python3 -c 'import os; os.makedirs(\"p/q\"); open(\"p/q/r\", \"w\").close()'; find p | sort"),
    ("py-chmod", "python3 -c 'import os; open(\"f\", \"w\").close(); os.chmod(\"f\", 0o640)'; stat -c %a f"),
    ("k-chmod-py", "touch g; chmod 600 g; python3 -c 'import os, stat; print(oct(stat.S_IMODE(os.stat(\"g\").st_mode)))'"),
    ("py-symlink", "echo t > target; python3 -c 'import os; os.symlink(\"target\", \"ln\")'; readlink ln; cat ln"),
    ("k-symlink-py", "echo t2 > target; ln -s target ln2; python3 -c 'import os; print(os.readlink(\"ln2\"), open(\"ln2\").read().strip())'"),
    ("py-rename", "echo r > old; python3 -c 'import os; os.rename(\"old\", \"new\")'; ls; cat new"),
    ("py-unlink", "touch gone keep; python3 -c 'import os; os.unlink(\"gone\")'; ls"),
    ("py-big", "python3 -c 'import sys; sys.stdout.write(\"y\" * 3000000)' > big; wc -c < big; python3 -c 'print(len(open(\"big\").read()))'"),
    ("py-seek", "printf 'abcdefghij' > s; python3 -c 'f = open(\"s\", \"r+\"); f.seek(3); f.write(\"XY\"); f.close()'; cat s; echo"),
    ("py-truncate", "printf '0123456789' > t; python3 -c 'import os; os.truncate(\"t\", 4)'; cat t; echo"),
    ("py-mtime", "touch -d '2020-01-02 03:04:05' m; python3 -c 'import os, time; print(time.strftime(\"%Y-%m-%d\", time.gmtime(os.stat(\"m\").st_mtime)))'"),
    ("py-json-file", f"{PY_JSON} > d.json; jq '.[3].tag' d.json; python3 -c 'import json; print(len(json.load(open(\"d.json\"))))'"),
    ("py-csv", "printf 'a,1\\nb,2\\nc,3\\n' > t.csv; python3 -c 'import csv; print(sum(int(r[1]) for r in csv.reader(open(\"t.csv\"))))'"),
    ("py-tmp", "f=$(mktemp); echo tmpdata > \"$f\"; python3 -c \"print(open('$f').read().strip())\"; rm -f \"$f\""),
    ("py-tmpfile", "python3 -c 'import tempfile; f = tempfile.NamedTemporaryFile(\"w\", delete=False); f.write(\"x\"); f.close(); print(f.name.startswith(\"/tmp/\"))'"),
    ("py-gzip", "python3 -c 'import gzip, sys; sys.stdout.buffer.write(gzip.compress(b\"zipped\\n\"))' | gzip -dc"),
    ("k-gzip-py", "echo hello | gzip -c | python3 -c 'import gzip, sys; print(gzip.decompress(sys.stdin.buffer.read()).decode().strip())'"),
    ("py-base64", "echo -n hello | base64 | python3 -c 'import base64, sys; print(base64.b64decode(sys.stdin.read()).decode())'"),
    ("py-sha", "printf abc | python3 -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())'; printf abc | sha256sum"),
    ("py-bg-wait", "python3 -c 'import time; time.sleep(0.3); print(\"late\")' & echo early; wait; echo done"),
    ("py-bg-status", "python3 -c 'raise SystemExit(5)' & wait $!; echo $?"),
    ("py-subshell", "(cd /tmp && python3 -c 'import os; print(os.getcwd())'); python3 -c 'import os; print(os.path.basename(os.getcwd()) != \"tmp\")'"),
    ("py-group-redirect", "{ python3 -c 'print(1)'; echo 2; python3 -c 'print(3)'; } > g.txt; cat g.txt"),
    ("py-timeout", "timeout 0.5 python3 -c 'import time; time.sleep(5)'; echo $?"),
    ("py-timeout-ok", "timeout 10 python3 -c 'print(\"quick\")'; echo $?"),
    ("py-command-v", "command -v python3 >/dev/null && echo has-python"),
    ("py-type", "type -t python3; type -t cat"),
    ("py-notfound", "no-such-program-xyz 2>/dev/null; echo $?"),
    # shebang scripts
    ("sh-shebang", "printf '#!/bin/sh\\necho \"sh args: $*\"\\n' > s.sh; chmod +x s.sh; ./s.sh 1 2"),
    ("bash-shebang", "printf '#!/bin/bash\\narr=(a b c); echo ${#arr[@]}\\n' > b.sh; chmod +x b.sh; ./b.sh"),
    ("env-bash-shebang", "printf '#!/usr/bin/env bash\\necho \"$0\" | sed s@.*/@@\\n' > e.sh; chmod +x e.sh; ./e.sh"),
    ("py-shebang", "printf '#!/usr/bin/env python3\\nimport sys\\nprint(\"py\", sys.argv[1:])\\n' > p.py; chmod +x p.py; ./p.py x y"),
    ("py-shebang-direct", "printf '#!/usr/bin/python3\\nprint(2 ** 10)\\n' > q.py; chmod +x q.py; ./q.py"),
    ("py-shebang-stdin", "printf '#!/usr/bin/env python3\\nimport sys\\nprint(sys.stdin.read().upper(), end=\"\")\\n' > u.py; chmod +x u.py; echo shout | ./u.py"),
    ("py-shebang-exit", "printf '#!/usr/bin/env python3\\nraise SystemExit(9)\\n' > x.py; chmod +x x.py; ./x.py; echo $?"),
    ("py-noexec", "printf 'print(1)\\n' > n.py; ./n.py 2>/dev/null; echo $?; python3 n.py"),
    ("sh-calls-py", "printf '#!/bin/sh\\npython3 -c \"print(40 + 2)\"\\n' > c.sh; chmod +x c.sh; ./c.sh"),
    ("py-calls-sh", "python3 -c 'import subprocess; print(subprocess.run([\"sh\", \"-c\", \"echo from-sh\"], capture_output=True, text=True).stdout.strip())'"),
    ("sh-dash-c", "sh -c 'echo $((1 + 2))'"),
    # git
    ("git-init-commit", f"{GIT} init -q r && cd r && echo a > f && {GIT} add f && {GIT} commit -qm one && {GIT} log --format=%s"),
    ("git-status", f"{GIT} init -q r && cd r && echo a > f && {GIT} status --porcelain && {GIT} add f && {GIT} status --porcelain"),
    ("git-diff", f"{GIT} init -q r && cd r && printf '1\\n2\\n' > f && {GIT} add f && {GIT} commit -qm c && printf '1\\n3\\n' > f && {GIT} diff --stat | tail -1"),
    ("git-branch", f"{GIT} init -q r && cd r && touch f && {GIT} add f && {GIT} commit -qm c && {GIT} checkout -qb feature && {GIT} branch --format='%(refname:short)'"),
    ("git-log-grep", f"{GIT} init -q r && cd r && for i in 1 2 3; do echo $i > f; {GIT} add f; {GIT} commit -qm \"commit $i\"; done; {GIT} log --format=%s | grep -c commit"),
    ("git-show-k", f"{GIT} init -q r && cd r && printf 'x\\ny\\n' > f && {GIT} add f && {GIT} commit -qm c && {GIT} show HEAD:f | sort -r"),
    ("git-ls-files", f"{GIT} init -q r && cd r && mkdir -p a/b && touch a/b/c d && {GIT} add . && {GIT} ls-files | sort"),
    ("git-rm", f"{GIT} init -q r && cd r && touch f g && {GIT} add . && {GIT} commit -qm c && {GIT} rm -q f && ls && {GIT} status --porcelain"),
    ("git-ignore", f"{GIT} init -q r && cd r && echo '*.log' > .gitignore && touch a.log b.txt && {GIT} status --porcelain --untracked-files=all | sort"),
    ("git-tag", f"{GIT} init -q r && cd r && touch f && {GIT} add f && {GIT} commit -qm c && {GIT} tag v1 && {GIT} describe --tags"),
    ("git-stash", f"{GIT} init -q r && cd r && echo 1 > f && {GIT} add f && {GIT} commit -qm c && echo 2 > f && {GIT} stash -q && cat f && {GIT} stash pop -q && cat f"),
    ("git-k-edit", f"{GIT} init -q r && cd r && echo v1 > f && {GIT} add f && {GIT} commit -qm c && sed -i s/v1/v2/ f && {GIT} diff --numstat"),
    ("git-rev-count", f"{GIT} init -q r && cd r && for i in a b; do touch $i; {GIT} add $i; {GIT} commit -qm $i; done; {GIT} rev-list --count HEAD"),
    # make
    ("make-simple", "printf 'all:\\n\\t@echo built\\n' > Makefile; make"),
    ("make-target-file", "printf 'out.txt: in.txt\\n\\ttr a-z A-Z < in.txt > out.txt\\n' > Makefile; echo hey > in.txt; make -s; cat out.txt; make -s; echo $?"),
    ("make-vars", "printf 'N ?= 3\\nall:\\n\\t@echo n=$(N)\\n' > Makefile; make -s; make -s N=5"),
    ("make-fail", "printf 'all:\\n\\t@exit 3\\n' > Makefile; make -s 2>/dev/null; echo $?"),
    ("make-py", "printf 'all:\\n\\t@python3 -c \"print(1+1)\"\\n' > Makefile; make -s"),
    ("make-phony-deps", "printf '.PHONY: a b\\na: b\\n\\t@echo a\\nb:\\n\\t@echo b\\n' > Makefile; make -s a"),
    ("make-C", "mkdir sub; printf 'x:\\n\\t@pwd | sed s@.*/@@\\n' > sub/Makefile; make -s -C sub x"),
    # mixed agent workflows
    ("workflow-test-runner", "mkdir -p proj && cd proj && printf 'def add(a, b):\\n    return a + b\\n' > m.py && python3 -c 'import m; assert m.add(2, 3) == 5; print(\"tests ok\")'"),
    ("workflow-generate-and-check", "python3 -c 'print(\"\\n\".join(\"line%d\" % i for i in range(30)))' > gen.txt && grep -q line29 gen.txt && echo complete"),
    ("workflow-config-edit", "printf 'port=80\\nhost=a\\n' > app.conf; sed -i 's/port=80/port=8080/' app.conf; python3 -c 'print(dict(l.strip().split(\"=\") for l in open(\"app.conf\")))'"),
    ("workflow-log-scan", "python3 -c 'import random; random.seed(1); [print(random.choice([\"INFO\", \"WARN\", \"ERROR\"]), i) for i in range(100)]' > app.log; awk '{c[$1]++} END {for (k in c) print k, c[k]}' app.log | sort"),
    ("workflow-find-py", "mkdir -p src/a src/b; touch src/a/x.py src/b/y.py src/b/z.txt; find src -name '*.py' | sort | xargs -I{} python3 -c 'import sys; print(sys.argv[1].upper())' {}"),
    ("workflow-patch", "printf 'a\\nb\\n' > f1; printf 'a\\nc\\n' > f2; diff -u f1 f2 > p.diff; python3 -c 'print(sum(1 for l in open(\"p.diff\") if l[:1] in \"+-\"))'"),
    ("workflow-tar", "mkdir t; echo 1 > t/a; tar cf t.tar t; python3 -c 'import tarfile; print(sorted(tarfile.open(\"t.tar\").getnames()))'"),
    ("workflow-py-tar", "python3 -c 'import tarfile, io\nt = tarfile.open(\"p.tar\", \"w\")\ni = tarfile.TarInfo(\"z.txt\"); d = b\"zz\\n\"; i.size = len(d); t.addfile(i, io.BytesIO(d)); t.close()'; tar xf p.tar; cat z.txt"),
    ("workflow-venv", "python3 -m venv --without-pip v && v/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'"
                      " && PATH=$PWD/v/bin:$PATH python -c 'import sys; print(sys.executable.endswith(\"v/bin/python\"))'"),
    ("workflow-venv-like", "python3 -c 'import sys; print(sys.version_info[0])' > ver; test \"$(cat ver)\" = 3 && echo py3"),
    ("workflow-count-words", "printf 'the cat the dog\\n' | python3 -c 'import sys, collections; print(collections.Counter(sys.stdin.read().split()).most_common(1))'"),
    ("workflow-sort-py-uniq", "printf '3\\n1\\n3\\n2\\n' | sort -n | python3 -c 'import sys; print(list(dict.fromkeys(l.strip() for l in sys.stdin)))'"),
    ("workflow-nl", "python3 -c 'print(\"a\\nb\\nc\")' | nl -ba | python3 -c 'import sys; print(len(sys.stdin.readlines()))'"),
]


def _real(script: str, where: str, home: str) -> tuple[int, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LC_ALL": "C.UTF-8", "TMPDIR": "/tmp"}
    done = subprocess.run(["bash", "-c", script], cwd=where, env=env, capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(errors="replace")


@pytest.fixture(scope="module")
def real_home() -> str:
    home = tempfile.mkdtemp(prefix="k-real-home-")
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_there_are_at_least_a_hundred_cases() -> None:
    assert len(CASES) >= 100
    assert len({name for name, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(("name", "script"), CASES, ids=[c[0] for c in CASES])
def test_k_with_delegation_matches_bash_with_real_programs(mounted: Bench, real_home: str, name: str,
                                                          script: str) -> None:
    need("git")
    need("make")
    where = os.path.join(real_home, name)
    os.mkdir(where)
    want_status, want_out = _real(script, where, real_home)
    status, out, err = run(mounted, f"rm -rf ~/diff/{name} && mkdir -p ~/diff/{name} && cd ~/diff/{name} && {{\n{script}\n}}")
    assert (status, out) == (want_status, want_out), err
