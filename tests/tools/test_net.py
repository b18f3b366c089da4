"""curl and wget: the seed's examples on virtual hosts, error cases, and real HTTP against a
loopback server this test starts, compared with the real curl and wget where outputs can match
(K draws no progress meter, so the compared cases use -s / -q)."""

from __future__ import annotations

import http.server
import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from differential import require_tools

from kfs.kstate import KState
from kfs.vfs import VFS, PathFS
from kshell import Result, Shell
from kshell.tools.net.hosts import Request, Response

HOME = "/home/agent"

HOSTS = {
    "api": {
        "/hello": "hello\n",
        "/data.json": {"ok": True, "field": "value", "items": [1, 2, 3]},
        "/x": "x marks the spot\n",
        "/bin": b"\x00\x01\x02",
        "/old": Response(301, {"Location": "/hello"}),
        "/loop": Response(302, {"Location": "/loop"}),
        "/teapot": Response(418, {"X-Kind": "teapot"}, "short and stout\n"),
        "/dyn": lambda req: {"method": req.method, "path": req.path, "body": req.body.decode()},
    },
    "echo": lambda req: Response(200, {"X-Method": req.method},
                                 f"{req.method} {req.path} {req.body.decode()} "
                                 f"{req.headers.get('Authorization', '-')} "
                                 f"{req.headers.get('X-Token', '-')}\n"),
}


@pytest.fixture
def sh():
    with tempfile.TemporaryDirectory(prefix="knet-") as tmp:
        state = KState(Path(tmp) / "state", create=True)
        try:
            vfs = VFS(state, by="test")
            root = PathFS(vfs, cwd="/", home=HOME, umask=0o022)
            root.mkdir(f"{HOME}/work", parents=True)
            fs = PathFS(vfs, cwd=HOME, home=HOME, umask=0o022, tilde=False)
            yield Shell(fs, name="bash", env={"HOME": HOME}, hosts=HOSTS)
        finally:
            state.close()


def k_shell(tmp: Path, *, network: bool, hosts: dict | None = None) -> tuple[Shell, KState]:
    state = KState(tmp / "state", create=True)
    vfs = VFS(state, by="test")
    root = PathFS(vfs, cwd="/", home=HOME, umask=0o022)
    root.mkdir(HOME, parents=True)
    fs = PathFS(vfs, cwd=HOME, home=HOME, umask=0o022, tilde=False)
    return Shell(fs, name="bash", env={"HOME": HOME}, hosts=hosts, network=network), state


def run(sh: Shell, script: str, stdin: bytes = b"") -> tuple[str, str, int]:
    r = sh.run(script, stdin=stdin)
    return r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace"), r.status


# --------------------------------------------------------------------------- the seed's examples


def test_hosts_md_lists_bound_hosts(sh):
    out, _, status = run(sh, "cat /sys/hosts.md")
    assert status == 0
    assert "`api`" in out and "`/hello`" in out and "`/data.json`" in out
    assert "`echo`: any path" in out


def test_seed_curl_hello(sh):
    assert run(sh, "curl http://api/hello") == ("hello\n", "", 0)


def test_seed_curl_head(sh):
    out, err, status = run(sh, "curl -I http://api/data.json")
    assert status == 0 and err == ""
    assert out.startswith("HTTP/1.1 200 OK\r\n")
    assert "Content-Type: application/json\r\n" in out
    assert out.endswith("\r\n\r\n")


def test_seed_curl_include(sh):
    out, _, status = run(sh, "curl -i http://api/data.json")
    head, _, body = out.partition("\r\n\r\n")
    assert status == 0 and head.startswith("HTTP/1.1 200 OK")
    assert json.loads(body) == HOSTS["api"]["/data.json"]


def test_seed_curl_fssl_dump_header(sh):
    out, err, status = run(sh, "curl -fsSL -D ~/work/headers.txt http://api/data.json")
    assert (err, status) == ("", 0)
    assert json.loads(out)["ok"] is True
    headers, _, _ = run(sh, "cat ~/work/headers.txt")
    assert headers.startswith("HTTP/1.1 200 OK\r\n") and headers.endswith("\r\n\r\n")


def test_seed_curl_remote_name(sh):
    assert run(sh, "curl -O http://api/data.json") == ("", "", 0)
    out, _, _ = run(sh, "jq -c .items data.json")
    assert out == "[1,2,3]\n"


def test_seed_wget_q_o_dash(sh):
    assert run(sh, "wget -qO- http://api/x") == ("x marks the spot\n", "", 0)


def test_seed_curl_pipe_jq(sh):
    assert run(sh, "curl -s http://api/data.json | jq -r .field") == ("value\n", "", 0)
    assert run(sh, "curl -fsSL http://api/data.json | jq -r '.items[]'") == ("1\n2\n3\n", "", 0)


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(("script", "expected"), [
    ("curl -o - http://api/hello", ("hello\n", "", 0)),
    ("curl -o out.txt http://api/hello && cat out.txt", ("hello\n", "", 0)),
    ("curl -s -o /dev/null -w '%{http_code}\\n' http://api/hello", ("200\n", "", 0)),
    ("curl -s -w '%{http_code}' http://api/missing", ("Not Found\n404", "", 0)),
    ("curl -sw '%{http_code} %{num_redirects} %{url_effective}\\n' -L -o /dev/null http://api/old",
     ("200 1 http://api/hello\n", "", 0)),
    ("curl http://api/old", ("", "", 0)),
    ("curl -L http://api/old", ("hello\n", "", 0)),
    ("curl -sL http://api/loop", ("", "", 47)),
    ("curl -f http://api/teapot", ("", "curl: (22) The requested URL returned error: 418\n", 22)),
    ("curl -fs http://api/teapot", ("", "", 22)),
    ("curl -fsS http://api/teapot", ("", "curl: (22) The requested URL returned error: 418\n", 22)),
    ("curl http://api/teapot", ("short and stout\n", "", 0)),
    ("curl -X POST -d a=1 -d b=2 http://echo/p", ("POST /p a=1&b=2 - -\n", "", 0)),
    ("curl -d a=1 http://echo/p", ("POST /p a=1 - -\n", "", 0)),
    ("curl -X DELETE http://echo/thing?id=3", ("DELETE /thing?id=3  - -\n", "", 0)),
    ("curl -H 'X-Token: t0k' http://echo/", ("GET /  - t0k\n", "", 0)),
    ("curl -u al:pw http://echo/", ("GET /  Basic YWw6cHc= -\n", "", 0)),
    ("printf 'a\\nb\\n' > body; curl --data-binary @body http://echo/", ("POST / a\nb\n - -\n", "", 0)),
    ("printf 'a\\nb\\n' > body; curl -d @body http://echo/", ("POST / ab - -\n", "", 0)),
    ("echo hi | curl --data-binary @- http://echo/", ("POST / hi\n - -\n", "", 0)),
    ("curl -s http://api/dyn | jq -r .method", ("GET\n", "", 0)),
    ("curl -sk --max-time 5 http://api/hello", ("hello\n", "", 0)),
    ("curl -s http://api/hello http://api/x", ("hello\nx marks the spot\n", "", 0)),
    ("curl api/hello", ("hello\n", "", 0)),
    ("curl -s http://nowhere/x", ("", "", 6)),
    ("curl http://nowhere/x", ("", "curl: (6) Could not resolve host: nowhere\n", 6)),
    ("curl -sS http://nowhere/x", ("", "curl: (6) Could not resolve host: nowhere\n", 6)),
    ("curl", ("", "curl: try 'curl --help' or 'curl --manual' for more information\n", 2)),
    ("curl -s", ("", "curl: no URL specified!\n"
                     "curl: try 'curl --help' or 'curl --manual' for more information\n", 2)),
    ("curl --bogus http://api/hello", ("", "curl: option --bogus: is unknown\n"
                                           "curl: try 'curl --help' or 'curl --manual' for more information\n", 2)),
    ("curl -o", ("", "curl: option -o: requires parameter\n"
                     "curl: try 'curl --help' or 'curl --manual' for more information\n", 2)),
    ("curl -O http://api/", ("", "curl: Remote file name has no length!\n"
                                 "curl: (23) Failed writing received data to disk/application\n", 23)),
    ("curl ftp://api/x", ("", 'curl: (1) Protocol "ftp" not supported or disabled in libcurl\n', 1)),
    ("wget -q -O - http://api/hello", ("hello\n", "", 0)),
    ("wget -qO out http://api/old && cat out", ("hello\n", "", 0)),
    ("wget -q http://api/hello && wget -q http://api/hello && cat hello hello.1", ("hello\nhello\n", "", 0)),
    ("wget -q http://nowhere/", ("", "", 4)),
    ("wget http://nowhere/", ("", "wget: unable to resolve host address \u2018nowhere\u2019\n", 4)),
    ("wget -q http://api/missing", ("", "", 8)),
    ("wget", ("", "wget: missing URL\nUsage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n", 1)),
])
def test_curl_wget_virtual(sh, script, expected):
    assert run(sh, script) == expected


def test_head_shows_status_headers(sh):
    out, _, status = run(sh, "curl -sI http://api/teapot")
    assert status == 0
    assert out.startswith("HTTP/1.1 418 I'm a Teapot\r\n") or out.startswith("HTTP/1.1 418 ")
    assert "X-Kind: teapot\r\n" in out


def test_include_follow_shows_every_response(sh):
    out, _, _ = run(sh, "curl -siL http://api/old")
    assert out.count("HTTP/1.1 ") == 2 and out.endswith("\r\n\r\nhello\n")


def test_dump_header_to_stdout(sh):
    out, _, _ = run(sh, "curl -s -D - http://api/hello")
    assert out.startswith("hello\nHTTP/1.1 200 OK\r\n") or out.startswith("HTTP/1.1 200 OK\r\n")


def test_handler_sees_request():
    seen: list[Request] = []

    def handler(req: Request):
        seen.append(req)
        return Response(201, {"X-A": "b"}, b"made")

    with tempfile.TemporaryDirectory() as tmp:
        shell, state = k_shell(Path(tmp), network=False, hosts={"svc": handler})
        try:
            r = shell.run("curl -s -X PUT -H 'Content-Type: text/plain' --data-binary x http://svc/a?b=1")
        finally:
            state.close()
    assert r == Result(b"made", b"", 0)
    assert seen[0].method == "PUT" and seen[0].path == "/a?b=1" and seen[0].body == b"x"
    assert seen[0].headers["Content-Type"] == "text/plain"


def test_unbound_host_without_network_never_touches_the_network():
    with tempfile.TemporaryDirectory() as tmp:
        shell, state = k_shell(Path(tmp), network=False)
        try:
            r = shell.run("curl http://127.0.0.1:1/; echo $?; cat /sys/hosts.md 2>/dev/null || echo none")
        finally:
            state.close()
    assert r.stdout == b"6\nnone\n"
    assert r.stderr == b"curl: (6) Could not resolve host: 127.0.0.1\n"


# --------------------------------------------------------------------------- real HTTP on loopback


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        return "TestServer"

    def date_time_string(self, timestamp=None) -> str:
        return "Mon, 01 Jan 2024 00:00:00 GMT"

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/plain", extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        if path == "/hello":
            self._send(200, b"hello\n")
        elif path == "/data.json":
            self._send(200, b'{"ok": true, "field": "value"}\n', "application/json")
        elif path == "/redirect":
            self._send(302, b"", extra={"Location": "/hello"})
        elif path == "/slow":
            time.sleep(3)
            self._send(200, b"late\n")
        elif path == "/auth":
            self._send(200, (self.headers.get("Authorization", "-") + "\n").encode())
        else:
            self._send(404, b"nope\n")

    do_HEAD = do_GET

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self._send(200, b"posted:" + body + b"|" + self.headers.get("Content-Type", "-").encode() + b"\n")

    do_PUT = do_POST


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        pass  # a client that timed out (--max-time) closed its end: expected


@pytest.fixture(scope="module")
def server():
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_MS = re.compile(r"after \d+ (ms|milliseconds)")


def _norm(text: str) -> str:
    return _MS.sub(r"after N \1", text)


REAL_CASES = [
    "curl -s {u}/hello",
    "curl -sS {u}/data.json",
    "curl -s {u}/missing; echo $?",
    "curl -sf {u}/missing; echo $?",
    "curl -sSf {u}/missing; echo $?",
    "curl -s {u}/redirect; echo $?",
    "curl -sL {u}/redirect",
    "curl -si {u}/hello",
    "curl -sI {u}/hello",
    "curl -siL {u}/redirect",
    "curl -sD h.txt {u}/hello && cat h.txt",
    "curl -fsSL -D h.txt {u}/data.json && cat h.txt",
    "curl -s -o out {u}/hello && cat out",
    "curl -s -O {u}/hello && cat hello",
    "curl -s -o - {u}/hello",
    "curl -s -w '%{{http_code}}\\n' -o /dev/null {u}/missing",
    "curl -s -w '%{{http_code}}\\n' -o /dev/null {u}/hello",
    "curl -s -d a=1 -d b=2 {u}/post",
    "curl -s -X PUT --data-binary @f {u}/put",
    "curl -s -d @f {u}/post",
    "curl -s -H 'Content-Type: text/x' -d z {u}/post",
    "curl -s -u user:pass {u}/auth",
    "curl -fsSL {u}/data.json | jq -r .field",
    "curl -sS {u2}/x; echo $?",
    "curl -sS --max-time 1 {u}/slow; echo $?",
    "curl -sS -o nodir/x {u}/hello; echo $?",
    "curl -s -w '%{{http_code}} %{{content_type}} %{{size_download}}\\n' {u}/data.json",
    "curl -sSI {u}/missing; echo $?",
    "curl -sSfI {u}/missing; echo $?",
    "curl -s -X POST {u}/post",
    "curl -s {u}/hello -o out2 && cat out2",
    "curl -sSL --max-redirs 0 {u}/redirect; echo $?",
    "curl -s {u}/hello {u}/data.json",
    "curl -s -o a -o b {u}/hello {u}/data.json && cat b a",
    "curl -sS {u}/missing -f -o got; echo $?; ls",
    "wget -qO- {u}/hello",
    "wget -qO- {u}/redirect",
    "wget -q {u}/hello && cat hello",
    "wget -q -O got {u}/data.json && cat got",
    "wget -q {u}/missing; echo $?",
    "wget -qO- {u2}/x; echo $?",
    "wget -q -O - {u}/missing; echo $?",
    "wget -q -O out {u}/redirect && cat out",
    "wget -q {u}/data.json -O - | jq -r .field",
    "wget -q {u}/hello; wget -q {u}/hello; ls; cat hello.1",
    "wget -qO- {u}/hello {u}/data.json",
    "wget --bogus {u}/hello; echo $?",
    "wget -q -O; echo $?",
    "wget; echo $?",
    "wget -qO- {u}/data.json",
    "wget -q -O out {u}/missing; echo $?; ls",
    "wget -q --output-document=x {u}/hello && cat x",
    "wget -q -O nodir/x {u}/hello; echo $?",
    "wget -q -P dl {u}/hello && cat dl/hello",
    "wget -qO- --post-data 'a=1' {u}/post",
    "wget -qO- --header 'Authorization: Bearer t' {u}/auth",
    "wget -qO - {u}/hello | tr a-z A-Z",
]


@pytest.mark.parametrize("template", REAL_CASES)
def test_real_http_matches_curl(server, template):
    require_tools("curl", "wget", "jq")
    script = template.format(u=server, u2=f"http://127.0.0.1:{_free_port()}")
    files = {"f": b"line1\nline2\n"}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        real_home = base / "real"
        real_home.mkdir()
        for name, data in files.items():
            (real_home / name).write_bytes(data)
        proc = subprocess.run(["bash", "-c", script], cwd=real_home, capture_output=True, timeout=30,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(real_home), "LC_ALL": "C"})
        shell, state = k_shell(base, network=True)
        try:
            for name, data in files.items():
                shell.interp.fs.write_file(f"{HOME}/{name}", data)
            k = shell.run(script)
        finally:
            state.close()
    real = (proc.stdout.decode(), _norm(proc.stderr.decode()), proc.returncode)
    mine = (k.stdout.decode(), _norm(k.stderr.decode()), k.status)
    assert mine == real, script


def test_bash_available():
    assert shutil.which("bash")


def test_hosts_md_readable_by_agent_and_rebindable():
    """/sys/hosts.md belongs to each session's view: readable by the agent, rebound at once,
    never a shared file (another shell with other hosts sees its own; the state has none)."""
    from kfs.vfs import Cred

    with tempfile.TemporaryDirectory() as tmp:
        state = KState(Path(tmp) / "state", create=True)
        try:
            vfs = VFS(state, by="test")
            root = PathFS(vfs, cwd="/", home=HOME, umask=0o022)
            root.mkdir(HOME, parents=True)
            root.chown(HOME, 1000, 1000)
            fs = PathFS(vfs, cred=Cred(1000, 1000), cwd=HOME, home=HOME, umask=0o022, tilde=False)
            shell = Shell(fs, name="bash", env={"HOME": HOME}, hosts={"a": {"/": "root\n"}})
            r1 = shell.run("stat -c '%a %U' /sys/hosts.md; curl -s a; curl -s a/; curl -s b; echo $?")
            shell.bind_hosts({"b": {"/": "bee\n"}})
            r2 = shell.run("grep -c '`b`' /sys/hosts.md; curl -s b/; curl -s a; echo $?")
            other = Shell(fs, name="bash", env={"HOME": HOME}, hosts={"c": {"/": "sea\n"}})
            r_other = other.run("grep -c '`[abc]`' /sys/hosts.md; grep -o '`c`' /sys/hosts.md")
            shell.bind_hosts({})
            r3 = shell.run("ls /sys; curl -s b/; echo $?")
            stored = root.exists("/sys")
        finally:
            state.close()
    assert r1.stdout == b"644 root\nroot\nroot\n6\n"
    assert r2.stdout == b"1\nbee\n6\n"
    assert r_other.stdout == b"1\n`c`\n"
    assert r3.stdout == b"6\n"
    assert not stored


def test_curl_in_a_background_job(sh):
    assert run(sh, "curl -s -o bg.json http://api/data.json & wait $!; jq -r .field bg.json") == ("value\n", "", 0)
