"""The image over real ssh: curl and wget against the image's virtual hosts (files, JSON, texts,
redirects, a Python handler), /sys/hosts.md and /sys/secrets.md per session view, the real
network allowed per agent by host allow-list, and a secret the image's code uses while no
value ever shows to the agent, in the state's files, events or receipts."""

from __future__ import annotations

import hashlib
import http.server
import logging
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from kserver import Bench

from kfs.journal import events_since
from kfs.runtime import image, secrets
from kshell.server import ServerConfig

ROOT = Path(__file__).resolve().parents[2]
PLANTED = "planted-secret-6c1d9e"


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"real hello\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served(make_server, tmp_path: Path) -> Iterator[tuple[Bench, int]]:  # noqa: ANN001
    """A server whose image is the example plus: alice may reach 127.0.0.1 for real, bob sees
    only `api` and no network; a handler that uses the secret `token`."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    folder = Path(shutil.copytree(ROOT / "image", tmp_path / "img"))
    with (folder / "komputer.toml").open("a") as f:
        f.write('\n[agents.alice]\nnetwork = ["127.0.0.1"]\n\n[agents.bob]\nhosts = ["api"]\nnetwork = false\n'
                '\n[hosts.vault]\nhandler = "vault:digest"\n'
                '\n[hosts.leak]\nhandler = "vault:leak"\n'
                '\n[secrets.token]\ndescription = "the upstream token"\nagents = ["alice"]\n')
    (folder / "vault.py").write_text(
        "import hashlib\n\n\ndef digest(request):\n"
        "    return hashlib.sha256(secret('token').encode()).hexdigest()[:12] + '\\n'\n\n\n"
        "def leak(request):\n    raise ValueError('the token is ' + secret('token'))\n")
    b = make_server(ServerConfig())
    image.apply(b.state, image.load(folder), by="test")
    secrets.put(b.state, "token", PLANTED.encode(), by="test", agents=["alice"])
    try:
        yield b, httpd.server_address[1]
    finally:
        httpd.shutdown()


def test_curl_and_wget_against_bound_hosts(served: tuple[Bench, int]) -> None:
    b, _ = served
    done = b.ssh("curl -fsSL http://api/old; curl -s http://api/status | jq -c .; curl -s -o - http://api/hello;"
                 " curl -sI http://api/hello | head -1; curl -si http://api/status | grep -ci content-type;"
                 " curl -s -D hdr.txt -o /dev/null http://api/docs/guide.md; grep -c '200 OK' hdr.txt;"
                 " curl -sO http://api/docs/guide.md; head -1 guide.md; wget -qO- http://api/hello;"
                 " curl -s http://api/ | grep -c 'virtual API'; curl -s -o /dev/null -w '%{http_code}\\n' http://api/nope;"
                 " curl -fsS http://api/nope; echo rc=$?")
    assert done.stdout.decode() == ("hello from the image\n" '{"ok":true,"version":1}\n' "hello from the image\n"
                                    "HTTP/1.1 200 OK\r\n" "1\n" "1\n" "# The api host\n" "hello from the image\n"
                                    "1\n" "404\n" "rc=22\n")
    assert b"curl: (22) The requested URL returned error: 404" in done.stderr
    done = b.ssh("curl -s -X POST --data-binary hi http://echo/path?q=1 | jq -r '.method, .path, .body'")
    assert done.stdout == b"POST\n/path?q=1\nhi\n"


def test_hosts_md_is_each_sessions_own(served: tuple[Bench, int]) -> None:
    b, _ = served
    alice = b.ssh("cat /sys/hosts.md").stdout.decode()
    bob = b.ssh("cat /sys/hosts.md; curl -sS http://echo/; echo rc=$?", user="bob")
    assert "`api`" in alice and "`echo`" in alice and "`vault`" in alice and "`127.0.0.1`" in alice
    text = bob.stdout.decode()
    assert "`api`" in text and "`echo`" not in text and "not reachable" in text and text.endswith("rc=6\n")
    assert b"Could not resolve host: echo" in bob.stderr


def test_the_real_network_follows_the_agents_list(served: tuple[Bench, int]) -> None:
    b, port = served
    done = b.ssh(f"curl -s http://127.0.0.1:{port}/; curl -sS http://localhost:{port}/; echo rc=$?")
    assert done.stdout == b"real hello\nrc=7\n"
    assert b"Failed to connect to localhost: not in this agent's network allow-list" in done.stderr
    done = b.ssh(f"curl -sS http://127.0.0.1:{port}/; echo rc=$?", user="bob")
    assert done.stdout == b"rc=6\n"


def test_a_secret_reaches_the_image_code_and_nothing_else(served: tuple[Bench, int],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the server's log: it runs in this process
    b, _ = served
    outputs = [b.ssh("cat /sys/secrets.md; curl -s http://vault/; env; set; cat /sys/hosts.md; "
                     "grep -r planted /home /tmp /sys; curl -sS -i http://leak/; echo done")]
    text = outputs[0].stdout.decode()
    assert "HTTP/1.1 500" in text and "raised ValueError at vault.py:9" in text  # the handler that raised, by file and line
    assert "- `token`: the upstream token" in text
    assert hashlib.sha256(PLANTED.encode()).hexdigest()[:12] in text
    outputs.append(b.ssh("cat /sys/secrets.md", user="bob"))
    assert b"`token`" not in outputs[1].stdout and b"- `api_token`: the token" in outputs[1].stdout
    assert outputs[1].stdout.endswith(b" (not set)\n")
    listing = subprocess.run([sys.executable, "-m", "kshell.cli", "secrets", "list", "--state", str(b.root / "state")],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert listing.stdout.startswith("token alice ")
    seen = [o.stdout + o.stderr for o in outputs] + [listing.stdout.encode(), listing.stderr.encode()]
    seen += [str(e).encode() for e in events_since(b.state)]
    seen += [f.read_bytes() for f in (b.root / "state").iterdir() if f.is_file()]
    seen += [caplog.text.encode()]
    assert all(PLANTED.encode() not in blob for blob in seen)


def test_image_commands_python_and_markdown(served: tuple[Bench, int]) -> None:
    b, _ = served
    done = b.ssh("greet ann bo; greet; echo rc=$?; mkdir -p w && cd w && echo one > a.txt;"
                 " inspect | tail -2; ls -A; echo two > b.txt && echo wrote-after")
    assert done.stdout.decode().splitlines() == [
        "hello, ann", "hello, bo", "(from /home/alice)", "rc=2", "1 ./a.txt", "(readonly: nothing written)",
        "a.txt", "wrote-after"]
    assert done.stderr == b"usage: greet NAME...\n"


@pytest.fixture
def locked(make_server) -> Bench:  # noqa: ANN001
    """A server whose image is the locked example (examples/image-locked): its one write hook."""
    b = make_server(ServerConfig())
    image.apply(b.state, image.load(ROOT / "examples" / "image-locked"), by="test")
    return b


def test_a_write_hook_denies_a_write(locked: Bench) -> None:
    done = locked.ssh("mkdir locked; echo rc=$?; echo x > notes.txt && cat notes.txt")
    assert done.stdout == b"rc=1\nx\n"
    assert b"K: /home/alice/locked: denied by image hook 1: deny path 'hooks:no_writes_to_locked': " \
           b"locked folders are read-only in this image" in done.stderr


def test_a_command_hook_asks_before_a_command(served: tuple[Bench, int]) -> None:
    from test_approvals import pending, start

    from kfs.runtime import approvals

    b, _ = served
    assert b.ssh("mkdir locked && echo x > locked/f && cat locked/f").stdout == b"x\n"  # the example has no write hook
    p = start(b, "git push origin main; echo rc=$?")
    record = pending(b.state)
    assert record["action"] == "git push origin main" and record["kind"] == "command"
    approvals.decide(b.state, record["id"], False, by="test", reason="not now")
    out, err = p.communicate(timeout=60)
    assert out == b"rc=126\n"
    assert b"waiting for approval" in err and b"not now" in err


def test_the_push_hook_catches_git_with_global_options_and_wrapped(served: tuple[Bench, int]) -> None:
    """The example image's hook asks on `git push`: git's own options before `push` (and a
    wrapper before git) do not go around it."""
    from test_approvals import pending, start

    from kfs.runtime import approvals

    b, _ = served
    forms = ("git --no-pager push", "git -C . push origin", "git -c k=v push", "git --git-dir=x push",
             "nice -n 5 git push")
    p = start(b, "".join(f"{form}; echo rc=$?; " for form in forms))
    for form in forms:
        record = pending(b.state)
        assert record["action"] == form and record["kind"] == "command"
        approvals.decide(b.state, record["id"], False, by="test", reason="not now")
    out, err = p.communicate(timeout=60)
    assert out == b"rc=126\n" * len(forms)
    assert err.count(b"not now") == len(forms)


def test_write_hooks_judge_sftp_too(locked: Bench, tmp_path: Path) -> None:
    """SFTP's writes meet the same hooks as the shell's: no way around them."""
    from test_drives import sftp

    b = locked
    assert b.ssh("mkdir -p open && echo ok").stdout == b"ok\n"
    (tmp_path / "up.txt").write_text("uploaded\n")
    done = sftp(b, f"put {tmp_path / 'up.txt'} open/up.txt\nmkdir locked\n", tmp_path)
    assert "remote mkdir \"/home/alice/locked\": Permission denied" in done.stderr, done.stderr
    assert b.ssh("cat open/up.txt; ls -d locked 2>&1").stdout == (
        b"uploaded\nls: cannot access 'locked': No such file or directory\n")


def test_a_session_start_hook_refuses_a_session(make_server, tmp_path: Path) -> None:  # noqa: ANN001
    folder = tmp_path / "gate"
    folder.mkdir()
    (folder / "komputer.toml").write_text('[[hooks]]\non = "session_start"\nhandler = "gate:start"\n'
                                          'agents = ["bob"]\n')
    (folder / "gate.py").write_text("def start(ctx):\n    return 'deny', f'{ctx.agent} is off today'\n")
    b = make_server(ServerConfig())
    image.apply(b.state, image.load(folder), by="test")
    assert b.ssh("echo hi").stdout == b"hi\n"
    done = b.ssh("echo hi", user="bob")
    assert (done.stdout, done.returncode) == (b"", 1)
    assert done.stderr == b"K: this session is refused (image hook 1: deny 'gate:start': bob is off today)\n"
