"""curl and wget on the shell's virtual hosts (and real HTTP when the shell allows it).

curl: -f -s -S -L -I -i -o FILE (`-o -`) -O -D FILE -X -H -d/--data-binary/--data-raw (@file,
@-) -w FORMAT -u USER:PASS -m/--max-time -k -A --connect-timeout, compact flags like -fsSL;
exit codes 2 (usage), 6 (no such host), 7 (connection refused), 22 (-f and status >= 400),
23 (cannot write), 28 (timeout), 47 (too many redirects). K's curl draws no progress meter.
wget: -q -O FILE / -O - (`-qO-`), follows redirects; exit 4 (network), 8 (server error).
"""

from __future__ import annotations

import base64
import contextlib
import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from kshell.exec import devices
from kshell.tools.net.hosts import FetchError, HostTable, Reply, Request, split_url
from kshell.core.options import NONE, REQUIRED, Usage, parse
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

MAX_REDIRECTS = 50
_CURL_HINT = "curl: try 'curl --help' or 'curl --manual' for more information\n"

_CURL_LONG = {
    "fail": ("f", NONE), "silent": ("s", NONE), "show-error": ("S", NONE), "location": ("L", NONE),
    "head": ("I", NONE), "include": ("i", NONE), "insecure": ("k", NONE), "output": ("o", REQUIRED),
    "remote-name": ("O", NONE), "dump-header": ("D", REQUIRED), "request": ("X", REQUIRED),
    "header": ("H", REQUIRED), "data": ("d", REQUIRED), "data-ascii": ("d", REQUIRED),
    "data-binary": ("data-binary", REQUIRED), "data-raw": ("data-raw", REQUIRED),
    "write-out": ("w", REQUIRED), "user": ("u", REQUIRED), "max-time": ("m", REQUIRED),
    "user-agent": ("A", REQUIRED), "connect-timeout": ("connect-timeout", REQUIRED),
    "compressed": ("compressed", NONE), "max-redirs": ("max-redirs", REQUIRED),
    "url": ("url", REQUIRED),
}


def hosts_of(sh: ToolContext) -> HostTable:
    table = getattr(sh.session, "hosts", None)
    return table if isinstance(table, HostTable) else HostTable()


def _curl_usage(sh: ToolContext, message: str) -> int:
    sh.write_err(f"curl: {message}\n{_CURL_HINT}")
    return 2


def _usage_message(e: Usage) -> str:
    m = re.match(r"unrecognized option '(.*)'", e.message)
    if m:
        return f"option {m.group(1)}: is unknown"
    m = re.match(r"invalid option -- '(.)'", e.message)
    if m:
        return f"option -{m.group(1)}: is unknown"
    m = re.match(r"option requires an argument -- '(.)'", e.message)
    if m:
        return f"option -{m.group(1)}: requires parameter"
    m = re.match(r"option '(--[^']*)' requires an argument", e.message)
    if m:
        return f"option {m.group(1)}: requires parameter"
    return e.message


def _write_out(fmt: str, reply: Reply | None, url: str, redirects: int, size: int, code: int) -> str:
    fmt = fmt.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")
    values = {
        "http_code": f"{reply.status if reply else 0:03d}",
        "response_code": f"{reply.status if reply else 0:03d}",
        "url_effective": url, "url": url,
        "content_type": (reply.header("Content-Type") or "") if reply else "",
        "size_download": str(size), "num_redirects": str(redirects), "exitcode": str(code),
        "redirect_url": (reply.header("Location") or "") if reply and 300 <= reply.status < 400 else "",
        "time_total": "0.000000",
    }

    def sub(m: re.Match) -> str:
        return values.get(m.group(1), "")

    return re.sub(r"%\{([a-z_]+)\}", sub, fmt)


def _data_arg(sh: ToolContext, key: str, value: str) -> bytes:
    if key != "data-raw" and value.startswith("@"):
        try:
            data = read_all(sh, value[1:])
        except OSError:
            sh.write_err(f'Warning: Couldn\'t read data from file "{value[1:]}", this makes an '
                         "empty POST.\n")
            return b""
        if key == "d":
            data = data.replace(b"\r", b"").replace(b"\n", b"")
        return data
    return value.encode("utf-8", "surrogateescape")


def curl(sh: ToolContext, argv: list[str]) -> int:
    if len(argv) == 1:
        sh.write_err(_CURL_HINT)
        return 2
    try:
        opts, urls = parse(argv, "fsSLIikOo:D:X:H:d:w:u:m:A:", _CURL_LONG)
    except Usage as e:
        return _curl_usage(sh, _usage_message(e))
    flags = {k for k, v in opts if v == ""}
    outputs: list[str] = []
    headers: dict[str, str] = {}
    data: list[bytes] = []
    method = None
    dump = write_out = user = None
    max_time: float | None = None
    max_redirs = MAX_REDIRECTS
    try:
        for k, v in opts:
            if k == "o":
                outputs.append(v)
            elif k == "D":
                dump = v
            elif k == "X":
                method = v
            elif k == "H":
                name, _, value = v.partition(":")
                headers[name.strip()] = value.strip()
            elif k in ("d", "data-binary", "data-raw"):
                data.append(_data_arg(sh, k, v))
            elif k == "w":
                write_out = v
            elif k == "u":
                user = v
            elif k == "m":
                max_time = float(v)
            elif k == "A":
                headers["User-Agent"] = v
            elif k == "max-redirs":
                max_redirs = int(v)
            elif k == "url":
                urls.append(v)
    except ValueError:
        return _curl_usage(sh, f"option -{k}: expected a proper numerical parameter")
    if not urls:
        return _curl_usage(sh, "no URL specified!")
    silent = "s" in flags and "S" not in flags
    quiet_errors = "s" in flags
    fail = "f" in flags
    head_only = "I" in flags
    include = "i" in flags or head_only
    body = b"&".join(data)
    if user is not None:
        headers.setdefault("Authorization", "Basic " + base64.b64encode(user.encode()).decode())
    if data:
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    headers.setdefault("User-Agent", "curl/7.88.1")
    headers.setdefault("Accept", "*/*")
    verb = method or ("HEAD" if head_only else "POST" if data else "GET")
    status = 0
    table = hosts_of(sh)
    dumped: list[str] = []
    for index, url in enumerate(urls):
        out_name = outputs[index] if index < len(outputs) else None
        if out_name is None and "O" in flags:
            out_name = split_url(url)[2].split("?", 1)[0].rsplit("/", 1)[-1]
            if not out_name:
                if not silent or "S" in flags:
                    sh.write_err("curl: Remote file name has no length!\n")
                status = 23
                if not quiet_errors or "S" in flags:
                    sh.write_err("curl: (23) Failed writing received data to disk/application\n")
                continue
        code, reply, final, redirects = _transfer(sh, table, url, verb, headers, body, max_time,
                                                  "L" in flags, max_redirs, "k" in flags, dumped)
        if code == 0 and reply is not None and fail and reply.status >= 400:
            code = 22
            msg = f"The requested URL returned error: {reply.status}"
        elif code:
            msg = dumped.pop()
        if code in (0, 22) and reply is not None and (code == 0 or include):
            payload = (reply.head_text().encode() if include else b"")
            if include and "L" in flags and redirects:
                payload = "".join(dumped[-(redirects + 1):]).encode()
            payload += reply.body if code == 0 else b""
            try:
                _emit(sh, out_name, payload)
            except OSError:
                code, msg = 23, "Failure writing output to destination"
        if write_out is not None:
            size = len(reply.body) if reply is not None and code != 22 else 0
            sh.out(_write_out(write_out, reply, final, redirects, size, code))
        if code:
            status = code
            if not quiet_errors or "S" in flags:
                sh.write_err(f"curl: ({code}) {msg}\n")
    if dump is not None:
        try:
            _emit(sh, dump, "".join(d for d in dumped if d.startswith("HTTP/")).encode())
        except OSError as e:
            sh.write_err(f"Warning: Failed to open {dump}: {e.strerror}\n")
    return status


def _emit(sh: ToolContext, name: str | None, data: bytes) -> None:
    if name is None or name == "-":
        sh.out(data)
    else:
        devices.write_file(sh, name, data)


def _transfer(sh: ToolContext, table: HostTable, url: str, method: str, headers: dict[str, str],
              body: bytes, max_time: float | None, follow: bool, max_redirs: int,
              insecure: bool, dumped: list[str]) -> tuple[int, Reply | None, str, int]:
    """(exit code, the last reply, the effective URL, redirects followed); the heads of the
    replies (or an error message, on failure) are appended to `dumped`."""
    redirects = 0
    while True:
        scheme, host, path, url = split_url(url)
        if scheme not in ("http", "https"):
            dumped.append(f'Protocol "{scheme}" not supported or disabled in libcurl')
            return 1, None, url, redirects
        if not host:
            dumped.append("No host part in the URL")
            return 3, None, url, redirects
        req = Request(method, url, host, path, dict(headers, Host=host), body)
        try:
            reply = table.fetch(req, max_time, insecure)
        except FetchError as e:
            dumped.append(e.message)
            return e.code, None, url, redirects
        dumped.append(reply.head_text())
        location = reply.header("Location")
        if not (follow and location and 300 <= reply.status < 400):
            return 0, reply, url, redirects
        if redirects >= max_redirs:
            dumped.append(f"Maximum ({max_redirs}) redirects followed")
            return 47, None, url, redirects
        redirects += 1
        url = urljoin(url, location)
        if reply.status in (301, 302, 303) and method == "POST":
            method, body = "GET", b""


_WGET_LONG = {"quiet": ("q", NONE), "output-document": ("O", REQUIRED), "verbose": ("v", NONE),
              "no-verbose": ("nv", NONE), "timeout": ("T", REQUIRED), "tries": ("t", REQUIRED),
              "header": ("header", REQUIRED), "post-data": ("post-data", REQUIRED),
              "no-check-certificate": ("k", NONE), "user-agent": ("U", REQUIRED),
              "max-redirect": ("max-redirect", REQUIRED), "directory-prefix": ("P", REQUIRED)}


def wget(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, urls = parse(argv, "qvO:P:T:t:U:", _WGET_LONG)
    except Usage as e:
        sh.write_err(f"wget: {e.message}\nUsage: wget [OPTION]... [URL]...\n\n"
                     "Try `wget --help' for more options.\n")
        return 2
    if not urls:
        sh.write_err("wget: missing URL\nUsage: wget [OPTION]... [URL]...\n\n"
                     "Try `wget --help' for more options.\n")
        return 1
    quiet = any(k in ("q", "nv") for k, _ in opts)
    output = None
    timeout: float | None = 900.0
    headers = {"User-Agent": "Wget/1.21.3", "Accept": "*/*"}
    body = b""
    max_redirs = 20
    for k, v in opts:
        if k == "O":
            output = v
        elif k == "T":
            timeout = float(v) if v.replace(".", "", 1).isdigit() else timeout
        elif k == "header":
            name, _, value = v.partition(":")
            headers[name.strip()] = value.strip()
        elif k == "post-data":
            body = v.encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif k == "U":
            headers["User-Agent"] = v
        elif k == "max-redirect" and v.isdigit():
            max_redirs = int(v)
    insecure = any(k == "k" for k, _ in opts)
    prefix = ([v for k, v in opts if k == "P"] or [""])[-1]
    if output is not None and output != "-":  # wget opens (truncates) -O's file first
        try:
            devices.write_file(sh, output, b"")
        except OSError as e:
            sh.write_err(f"{output}: {e.strerror}\n")
            return 1
    table = hosts_of(sh)
    status = 0
    collected: list[bytes] = []
    for url in urls:
        dumped: list[str] = []
        code, reply, final, _ = _transfer(sh, table, url, "POST" if body else "GET", headers, body,
                                          timeout, True, max_redirs, insecure, dumped)
        if code:
            status = 4
            if not quiet:
                host = split_url(url)[1]
                if code == 6:
                    sh.write_err(f"wget: unable to resolve host address \u2018{host}\u2019\n")
                else:
                    sh.write_err(f"wget: {dumped[-1]}\n")
            continue
        assert reply is not None
        if reply.status >= 400:
            status = 8
            if not quiet:
                sh.write_err(f"{url}:\n{reply.status} {reply.reason}.\n"
                             f"ERROR {reply.status}: {reply.reason}.\n")
            continue
        if output is not None:
            collected.append(reply.body)
            continue
        name = split_url(final)[2].split("?", 1)[0].rsplit("/", 1)[-1] or "index.html"
        if prefix:  # -P: under that directory, made as needed
            with contextlib.suppress(OSError):
                sh.fs.mkdir(prefix, parents=True)
            name = f"{prefix.rstrip('/')}/{name}"
        target, n = name, 0
        while sh.fs.exists(target):
            n += 1
            target = f"{name}.{n}"
        try:
            sh.fs.write_file(target, reply.body)
        except OSError as e:
            sh.write_err(f"{target}: {e.strerror}\n")
            status = 3
            continue
        if not quiet:
            sh.write_err(f"\u2018{target}\u2019 saved [{len(reply.body)}]\n")
    if output is not None:
        try:
            _emit(sh, output, b"".join(collected))
        except OSError as e:
            sh.write_err(f"{output}: {e.strerror}\n")
            return 3
    return status
