"""Virtual hosts: a host name bound to canned responses or a Python handler, and the one fetch
that curl and wget share (virtual host first; real HTTP only when the shell allows it).

    Shell(fs, hosts={"api": {"/hello": "hello\\n", "/data.json": {"ok": True},
                             "/old": Response(301, {"Location": "/hello"})},
                     "echo": lambda req: Response(200, {}, req.body)})

A canned value is bytes (application/octet-stream), str (text/plain), a `Response`, a callable
taking the `Request`, or anything else JSON-serialisable (application/json). A host may also be
one callable handling every path. The handler may return any of those values.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from kfs.values import field, value_class


@value_class
class Request:
    method: str
    url: str
    host: str
    path: str  # with the query string
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    timeout: float | None = None  # curl's --max-time: what a handler may take


@value_class
class Response:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | str | Any = b""


@value_class
class Reply:
    """A response as received: the status line's reason, headers in order, the body bytes."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    version: str = "HTTP/1.1"

    def header(self, name: str) -> str | None:
        lower = name.lower()
        return next((v for k, v in self.headers if k.lower() == lower), None)

    def head_text(self) -> str:
        lines = [f"{self.version} {self.status} {self.reason}\r\n"]
        lines += [f"{k}: {v}\r\n" for k, v in self.headers]
        return "".join(lines) + "\r\n"


class FetchError(Exception):
    """A transfer failure with curl's exit code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


Handler = Callable[[Request], Any]


def _reason(status: int) -> str:
    try:
        from http import HTTPStatus

        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _encode(value: Any) -> tuple[bytes, str]:
    if isinstance(value, bytes | bytearray):
        return bytes(value), "application/octet-stream"
    if isinstance(value, str):
        return value.encode(), "text/plain; charset=utf-8"
    import json

    return (json.dumps(value) + "\n").encode(), "application/json"


def _reply(value: Any, method: str) -> Reply:
    if not isinstance(value, Response):
        value = Response(200, {}, value)
    body, ctype = _encode(value.body)
    headers = dict(value.headers)
    names = {k.lower() for k in headers}
    if "content-type" not in names and (body or value.status < 300):
        headers["Content-Type"] = ctype
    if "content-length" not in names:
        headers["Content-Length"] = str(len(body))
    return Reply(value.status, _reason(value.status), list(headers.items()),
                 b"" if method == "HEAD" else body)


class HostTable:
    """The virtual hosts bound to one shell, and whether real HTTP is allowed. `rules`: the
    policy rules on hosts (kfs.runtime.rules, first match decides), asked before any host is
    reached, redirects included; `approve(host, url, rule)` waits for a decision on an `ask`
    (-> allowed, why not; None: nobody can decide, and `ask` refuses)."""

    def __init__(self, hosts: Mapping[str, Any] | None = None, *, network: bool | list[str] = False) -> None:
        self.hosts: dict[str, Any] = dict(hosts or {})
        self.network = network  # the real network: all, none, or the hosts matching these globs
        self.rules: tuple[Any, ...] = ()
        self.approve: Callable[[str, str, Any], tuple[bool, str]] | None = None

    def check(self, host: str, url: str) -> None:
        """Raise FetchError (curl's 7, couldn't connect) when a rule keeps `host` out of reach."""
        rule = next((r for r in self.rules if r.matches(host)), None)
        if rule is None or rule.action == "allow":
            return
        if rule.action == "deny":
            why = f"denied by policy ({rule.describe()})"
        elif self.approve is None:
            why = f"needs an approval ({rule.describe()}), which nothing here can wait for"
        else:
            allowed, why = self.approve(host, url, rule)
            if allowed:
                return
        raise FetchError(7, f"Failed to connect to {host}: {why or 'interrupted'}")

    def markdown(self) -> str:
        lines = ["# Virtual hosts", "",
                 "Reachable with curl and wget, e.g. `curl http://HOST/PATH`.", ""]
        for name in sorted(self.hosts):
            table = self.hosts[name]
            paths = getattr(table, "paths", None)
            if paths is not None:
                lines.append(f"- `{name}`: " + ", ".join(p if " " in p else f"`{p}`" for p in paths()))
            elif callable(table):
                lines.append(f"- `{name}`: any path (handler)")
            else:
                lines.append(f"- `{name}`: " + ", ".join(f"`{p}`" for p in sorted(table)))
        if not self.hosts:
            lines.append("(none)")
        if self.network is True:
            lines += ["", "Other hosts are fetched from the real network."]
        elif self.network:
            lines += ["", "The real network: only hosts matching " + ", ".join(f"`{p}`" for p in self.network) + "."]
        else:
            lines += ["", "Other hosts are not reachable (no real network)."]
        return "\n".join(lines) + "\n"

    def reaches(self, host: str) -> bool:
        """Whether the real network may be used for `host`."""
        if isinstance(self.network, bool):
            return self.network
        return any(fnmatch.fnmatchcase(host.lower(), pattern.lower()) for pattern in self.network)

    def fetch(self, req: Request, timeout: float | None, insecure: bool = False) -> Reply:
        if self.rules:
            self.check(req.host, req.url)
        table = self.hosts.get(req.host)
        if table is not None:
            req.timeout = timeout
            return self._virtual(table, req)
        if not self.reaches(req.host):
            if self.network:  # a list that leaves this host out
                raise FetchError(7, f"Failed to connect to {req.host}: not in this agent's network allow-list")
            raise FetchError(6, f"Could not resolve host: {req.host}")
        return _real(req, timeout, insecure)

    @staticmethod
    def _virtual(table: Any, req: Request) -> Reply:
        if callable(table):
            return _reply(table(req), req.method)
        plain = req.path.split("?", 1)[0] or "/"
        value = table.get(req.path, table.get(plain))
        if value is None:
            return _reply(Response(404, {}, "Not Found\n"), req.method)
        if callable(value):
            value = value(req)
        return _reply(value, req.method)


def _real(req: Request, timeout: float | None, insecure: bool) -> Reply:
    import http.client  # the real network's modules: imported when a fetch needs them
    import socket
    import ssl

    parts = urlsplit(req.url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    started = time.monotonic()
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        context = ssl._create_unverified_context() if insecure else ssl.create_default_context()
        conn = http.client.HTTPSConnection(req.host, port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(req.host, port, timeout=timeout)
    try:
        try:
            conn.connect()
        except socket.gaierror as e:
            raise FetchError(6, f"Could not resolve host: {req.host}") from e
        except TimeoutError as e:
            ms = int((time.monotonic() - started) * 1000)
            raise FetchError(28, f"Failed to connect to {req.host} port {port} after {ms} ms: "
                                 "Timeout was reached") from e
        except ssl.SSLError as e:
            raise FetchError(60, f"SSL certificate problem: {e.reason}") from e
        except OSError as e:
            ms = int((time.monotonic() - started) * 1000)
            raise FetchError(7, f"Failed to connect to {req.host} port {port} after {ms} ms: "
                                "Couldn't connect to server") from e
        try:
            conn.request(req.method, req.path, body=req.body or None, headers=req.headers)
            resp = conn.getresponse()
            body = b"" if req.method == "HEAD" else resp.read()
        except TimeoutError as e:
            ms = int((time.monotonic() - started) * 1000)
            raise FetchError(28, f"Operation timed out after {ms} milliseconds with 0 bytes "
                                 "received") from e
        except (OSError, http.client.HTTPException) as e:
            raise FetchError(56, f"Failure when receiving data from the peer: {e}") from e
        version = "HTTP/1.0" if resp.version == 10 else "HTTP/1.1"
        return Reply(resp.status, resp.reason, list(resp.getheaders()), body, version)
    finally:
        conn.close()


def split_url(url: str) -> tuple[str, str, str, str]:
    """(scheme, host, path with query, the URL normalised as curl shows it)."""
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.scheme.lower(), parts.hostname or "", path, url


def bind(sh_session: Any, hosts: Mapping[str, Any] | None, network: bool | list[str]) -> HostTable:
    """Attach a host table to a session (where curl and wget look it up)."""
    table = HostTable(hosts, network=network)
    sh_session.hosts = table
    return table


def hosts_to_wire(hosts: Mapping[str, Any]) -> dict[str, Any]:
    """Virtual hosts given as Python values (Komputer.boot(hosts=...)), for a session worker:
    workers are processes of their own, so only values cross (bytes, str, a Response, anything
    JSON-serialisable); a handler (a callable) belongs in the image, where workers load it."""
    import base64
    import json

    wire: dict[str, Any] = {}
    for name, paths in hosts.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"host name {name!r}: expected a non-empty string")
        if not isinstance(paths, Mapping):
            raise TypeError(f"host {name!r}: expected a mapping of path -> response (a handler belongs "
                            "in the image's [hosts]: session workers cannot call this process's functions)")
        table: dict[str, Any] = {}
        for path, value in paths.items():
            if callable(value):
                raise TypeError(f"host {name!r} path {path!r}: a handler belongs in the image's [hosts]; "
                                "boot(hosts=...) takes values (str, bytes, a Response or JSON)")
            if isinstance(value, Response):
                body = value.body
                table[path] = {"response": [value.status, dict(value.headers),
                                            base64.b64encode(body if isinstance(body, bytes) else
                                                             str(body).encode()).decode()]}
            elif isinstance(value, bytes):
                table[path] = {"bytes": base64.b64encode(value).decode()}
            elif isinstance(value, str):
                table[path] = {"text": value}
            else:
                json.dumps(value)  # TypeError here, not in the worker
                table[path] = {"json": value}
        wire[name] = table
    return wire


def hosts_from_wire(wire: Mapping[str, Any] | None) -> dict[str, Any]:
    """The worker's side of hosts_to_wire."""
    import base64

    hosts: dict[str, Any] = {}
    for name, table in (wire or {}).items():
        paths: dict[str, Any] = {}
        for path, value in table.items():
            if "response" in value:
                status, headers, body = value["response"]
                paths[path] = Response(status, headers, base64.b64decode(body))
            elif "bytes" in value:
                paths[path] = base64.b64decode(value["bytes"])
            elif "text" in value:
                paths[path] = value["text"]
            else:
                paths[path] = value["json"]
        hosts[name] = paths
    return hosts
