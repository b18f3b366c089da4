"""Tools that merge files line by line: paste (-d -s -z), comm (-1 -2 -3 --total
--output-delimiter --check-order) and join (-1 -2 -j -t -a -v -e -o -i --header), as GNU
coreutils. Comparisons are bytewise (the C locale)."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, read_all, split_lines

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


def _read(sh: ToolContext, prog: str, name: str, stdin_cache: dict) -> bytes:
    if name == "-":
        if "data" not in stdin_cache:
            stdin_cache["data"] = read_all(sh, "-")
            return stdin_cache["data"]
        return b""
    try:
        return read_all(sh, name)
    except OSError as e:
        if e.errno == errno.EISDIR and prog == "join":
            raise Fail("read error: Is a directory") from None
        raise Fail(f"{name}: {message(e)}") from None


# --------------------------------------------------------------------------- paste

_PASTE_LONG = {"delimiters": ("d", REQUIRED), "serial": ("s", NONE), "zero-terminated": ("z", NONE),
               "help": ("help", NONE), "version": ("version", NONE)}


def _delims(text: str) -> list[bytes]:
    raw = text.encode("utf-8", "surrogateescape")
    out: list[bytes] = []
    i = 0
    while i < len(raw):
        c = raw[i : i + 1]
        if c == b"\\":
            if i + 1 >= len(raw):
                raise Fail(f"delimiter list ends with an unescaped backslash: {text}")
            e = raw[i + 1 : i + 2]
            out.append({b"n": b"\n", b"t": b"\t", b"\\": b"\\", b"0": b"", b"b": b"\b", b"f": b"\f",
                        b"r": b"\r", b"v": b"\v"}.get(e, e))
            i += 2
        else:
            out.append(c)
            i += 1
    return out


@tool("paste")
def paste(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "d:sz", _PASTE_LONG)
    delims = [b"\t"]
    serial = False
    eol = b"\n"
    for key, value in opts:
        if key == "d":
            delims = _delims(value) or [b""]
        elif key == "s":
            serial = True
        elif key == "z":
            eol = b"\0"
    files = files or ["-"]
    out = Output(sh)
    if serial:
        status = 0
        for name in files:
            try:
                data = read_all(sh, name)
            except OSError as e:
                out.flush()
                sh.write_err(f"paste: {name}: {message(e)}\n")
                status = 1
                if e.errno != errno.EISDIR:
                    continue
                data = b""
            rows = split_lines(data, eol)
            res = bytearray()
            for i, row in enumerate(rows):
                if i:
                    res += delims[(i - 1) % len(delims)]
                res += row
            out.write(bytes(res) + eol)
        out.flush()
        return status
    columns: list[list[bytes]] = []
    unreadable: list[str] = []
    stdin_rows: list[bytes] | None = None
    stdin_users = files.count("-")
    positions: list[tuple[str, int]] = []
    for name in files:
        if name == "-":
            if stdin_rows is None:
                stdin_rows = split_lines(read_all(sh, "-"), eol)
            positions.append(("-", files[: len(positions)].count("-")))
            columns.append([])
            continue
        try:
            columns.append(split_lines(read_all(sh, name), eol))
        except OSError as e:
            if e.errno != errno.EISDIR:
                raise Fail(f"{name}: {message(e)}") from None
            unreadable.append(name)
            columns.append([])
        positions.append((name, 0))
    if stdin_rows is not None:  # several `-` take turns reading standard input's lines
        for i, (name, k) in enumerate(positions):
            if name == "-":
                columns[i] = stdin_rows[k::stdin_users]
    height = max((len(c) for c in columns), default=0)
    for r in range(height):
        res = bytearray()
        for i, col in enumerate(columns):
            if i:
                res += delims[(i - 1) % len(delims)]
            if r < len(col):
                res += col[r]
        out.write(bytes(res) + eol)
    out.flush()
    for name in unreadable:
        sh.write_err(f"paste: {name}: Is a directory\n")
    return 1 if unreadable else 0


# --------------------------------------------------------------------------- comm

_COMM_LONG = {"check-order": ("check", NONE), "nocheck-order": ("nocheck", NONE),
              "output-delimiter": ("delim", REQUIRED), "total": ("total", NONE),
              "zero-terminated": ("z", NONE), "help": ("help", NONE), "version": ("version", NONE)}


@tool("comm")
def comm(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "123z", _COMM_LONG)
    hide = set()
    check = None
    delim: bytes | None = None
    total = False
    eol = b"\n"
    for key, value in opts:
        if key in "123":
            hide.add(key)
        elif key == "check":
            check = True
        elif key == "nocheck":
            check = False
        elif key == "delim":
            d = value.encode("utf-8", "surrogateescape")
            if delim is not None and d != delim:
                raise Fail("multiple output delimiters specified")
            delim = d
        elif key == "total":
            total = True
        elif key == "z":
            eol = b"\0"
    if len(files) < 2:
        if not files:
            raise Usage("missing operand")
        raise Usage(f"missing operand after '{files[-1]}'")
    if len(files) > 2:
        raise Usage(f"extra operand '{files[2]}'")
    sep = b"\t" if delim is None else (delim or b"\0")
    cache: dict = {}
    data = [split_lines(_read(sh, "comm", n, cache), eol) for n in files]
    out = Output(sh)
    counts = [0, 0, 0]
    warned = [False, False]
    seen_unpairable = False
    idx = [0, 0]
    status = 0

    def write(line: bytes, col: int) -> None:
        if str(col) in hide:
            return
        prefix = b""
        if col >= 2 and "1" not in hide:
            prefix += sep
        if col == 3 and "2" not in hide:
            prefix += sep
        out.write(prefix + line + eol)

    def step(i: int) -> None:
        nonlocal status
        idx[i] += 1
        k = idx[i]
        lines = data[i]
        active = check is not False and (check or seen_unpairable) and not warned[i]
        if active and k < len(lines) and lines[k - 1] > lines[k]:
            warned[i] = True
            out.flush()
            sh.write_err(f"comm: file {i + 1} is not in sorted order\n")
            if check:
                raise _Stop()

    try:
        while idx[0] < len(data[0]) or idx[1] < len(data[1]):
            a = data[0][idx[0]] if idx[0] < len(data[0]) else None
            b = data[1][idx[1]] if idx[1] < len(data[1]) else None
            if a is None:
                order = 1
            elif b is None:
                order = -1
            else:
                order = (a > b) - (a < b)
            if order == 0:
                counts[2] += 1
                write(b, 3)  # type: ignore[arg-type]
            else:
                seen_unpairable = True
                if order < 0:
                    counts[0] += 1
                    write(a, 1)  # type: ignore[arg-type]
                else:
                    counts[1] += 1
                    write(b, 2)  # type: ignore[arg-type]
            if order >= 0:
                step(1)
            if order <= 0:
                step(0)
    except _Stop:
        out.flush()
        return 1
    if total:
        out.write(b"%d%s%d%s%d%stotal%s" % (counts[0], sep, counts[1], sep, counts[2], sep, eol))
    out.flush()
    if check is None and (warned[0] or warned[1]):
        sh.write_err("comm: input is not in sorted order\n")
        status = 1
    return status


class _Stop(Exception):
    pass


# --------------------------------------------------------------------------- join

_JOIN_LONG = {"ignore-case": ("i", NONE), "check-order": ("check", NONE), "nocheck-order": ("nocheck", NONE),
              "zero-terminated": ("z", NONE), "header": ("header", NONE), "help": ("help", NONE),
              "version": ("version", NONE)}


def _field_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise Fail(f"invalid field number: '{text}'")
    return int(text) - 1


@tool("join")
def join(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "1:2:j:t:a:v:e:o:iz", _JOIN_LONG)
    keys = [0, 0]
    tab: bytes | None = None
    unpaired: set[int] = set()
    only = False
    empty: bytes | None = None
    fmt: list[tuple[int, int]] | str | None = None
    icase = header = False
    check = None
    eol = b"\n"
    for key, value in opts:
        if key in ("1", "2"):
            keys[int(key) - 1] = _field_number(value)
        elif key == "j":
            keys = [_field_number(value)] * 2
        elif key == "t":
            t = value.encode("utf-8", "surrogateescape")
            if len(t) > 1 and t != b"\\0":
                raise Fail(f"multi-character tab '{value}'")
            tab = b"\0" if t == b"\\0" else t if t else b"\n"
        elif key in ("a", "v"):
            if value not in ("1", "2"):
                raise Fail(f"invalid field number: '{value}'")
            if key == "v" and not only:
                only = True
                unpaired = set()
            unpaired.add(int(value))
        elif key == "e":
            empty = value.encode("utf-8", "surrogateescape")
        elif key == "o":
            if value == "auto":
                fmt = "auto"
                continue
            spec: list[tuple[int, int]] = [] if not isinstance(fmt, list) else fmt
            for item in value.replace(",", " ").split():
                if item == "0":
                    spec.append((0, -1))
                    continue
                f, dot, n = item.partition(".")
                if f not in ("1", "2") or not dot:
                    raise Fail(f"invalid file number in field spec: '{item}'")
                spec.append((int(f), _field_number(n)))
            fmt = spec
        elif key == "i":
            icase = True
        elif key == "header":
            header = True
        elif key == "check":
            check = True
        elif key == "nocheck":
            check = False
        elif key == "z":
            eol = b"\0"
    if len(files) < 2:
        if not files:
            raise Usage("missing operand")
        raise Usage(f"missing operand after '{files[-1]}'")
    if len(files) > 2:
        raise Usage(f"extra operand '{files[2]}'")
    cache: dict = {}
    rows = [split_lines(_read(sh, "join", n, cache), eol) for n in files]

    def split(line: bytes) -> list[bytes]:
        if tab is not None:
            return line.split(tab)
        return line.replace(b"\t", b" ").split()

    recs = [[split(r) for r in rs] for rs in rows]
    out = Output(sh)
    osep = tab if tab is not None else b" "
    width = [max((len(r) for r in recs[0][:1]), default=0), max((len(r) for r in recs[1][:1]), default=0)]

    def keyof(i: int, rec: list[bytes]) -> bytes:
        k = rec[keys[i]] if keys[i] < len(rec) else b""
        return k.lower() if icase else k

    def emit(r1: list[bytes] | None, r2: list[bytes] | None) -> None:
        key = (r1[keys[0]] if r1 is not None and keys[0] < len(r1) else
               r2[keys[1]] if r2 is not None and keys[1] < len(r2) else empty or b"")
        if fmt is None:
            parts = [key]
            for i, r in ((0, r1), (1, r2)):
                if r is not None:
                    parts += [f for j, f in enumerate(r) if j != keys[i]]
        else:
            parts = []
            spec = fmt if isinstance(fmt, list) else [(0, -1)] + [
                (i + 1, j) for i in (0, 1) for j in range(width[i]) if j != keys[i]]
            for f, n in spec:
                if f == 0:
                    parts.append(key)
                    continue
                r = r1 if f == 1 else r2
                parts.append(r[n] if r is not None and n < len(r) else (empty or b""))
        if empty is not None and fmt is None:
            parts = [p if p else empty for p in parts]
        out.write(osep.join(parts) + eol)

    a = b = 0
    if header:
        if recs[0] and recs[1]:
            emit(recs[0][0], recs[1][0])
        a, b = min(1, len(recs[0])), min(1, len(recs[1]))
    warned = [False, False]
    seen_unpaired = False

    def check_order(i: int, lo: int, hi: int) -> None:
        if warned[i] or check is False or hi >= len(recs[i]):
            return
        if check is None and not seen_unpaired:
            return
        if keyof(i, recs[i][lo]) > keyof(i, recs[i][hi]):
            warned[i] = True
            out.flush()
            if check:
                raise Fail(f"{files[i]}:{hi + 1}: is not sorted: "
                           + rows[i][hi].decode("utf-8", "surrogateescape"))
            sh.write_err(f"join: {files[i]}:{hi + 1}: is not sorted: "
                         f"{rows[i][hi].decode('utf-8', 'surrogateescape')}\n")

    n0, n1 = len(recs[0]), len(recs[1])
    while a < n0 and b < n1:
        k1, k2 = keyof(0, recs[0][a]), keyof(1, recs[1][b])
        if k1 < k2:
            seen_unpaired = True
            if 1 in unpaired:
                emit(recs[0][a], None)
            check_order(0, a, a + 1)
            a += 1
            continue
        if k1 > k2:
            seen_unpaired = True
            if 2 in unpaired:
                emit(None, recs[1][b])
            check_order(1, b, b + 1)
            b += 1
            continue
        ea = a
        while ea + 1 < n0 and keyof(0, recs[0][ea + 1]) == k1:
            ea += 1
        eb = b
        while eb + 1 < n1 and keyof(1, recs[1][eb + 1]) == k2:
            eb += 1
        if not only:
            for i in range(a, ea + 1):
                for j in range(b, eb + 1):
                    emit(recs[0][i], recs[1][j])
        check_order(0, ea, ea + 1)
        check_order(1, eb, eb + 1)
        a, b = ea + 1, eb + 1
    while a < n0:
        if 1 in unpaired:
            emit(recs[0][a], None)
        seen_unpaired = True
        check_order(0, a, a + 1)
        a += 1
    while b < n1:
        if 2 in unpaired:
            emit(None, recs[1][b])
        seen_unpaired = True
        check_order(1, b, b + 1)
        b += 1
    out.flush()
    if check is None and (warned[0] or warned[1]):
        sh.write_err("join: input is not in sorted order\n")
        return 1
    return 0
