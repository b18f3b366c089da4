"""file (-b -L -h -i --mime-type): basic type detection in the words of Debian's `file` 5.44
(libmagic): empty, directory, symlink, ASCII/UTF-8/ISO-8859 text with its qualifiers, JSON,
scripts by their #! line, ELF headers and gzip. Anything else is `data`.

ELF files are described from their header only: libmagic also reads program and section
headers (interpreter, BuildID, stripped), which this does not."""

from __future__ import annotations

import json
import stat as st
import struct
import time
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, Usage, parse

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

USAGE = (
    "Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n"
    "            [--mime-type] [-e <testname>] [-F <separator>]  [-f <namefile>]\n"
    "            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]\n"
    "            <file> ...\n"
    "       file -C [-m <magicfiles>]\n"
    "       file [--help]\n"
)
LONG = {"brief": ("b", NONE), "dereference": ("L", NONE), "no-dereference": ("h", NONE), "mime": ("i", NONE),
        "mime-type": ("mime-type", NONE), "mime-encoding": ("mime-encoding", NONE)}
_TEXT = frozenset(range(0x20, 0x7F)) | {7, 8, 9, 10, 11, 12, 13, 27}
_INTERPRETERS = {"sh": "POSIX shell script", "bash": "Bourne-Again shell script", "python": "Python script",
                 "python3": "Python script", "python2": "Python script", "zsh": "Paul Falstad's zsh script",
                 "dash": "POSIX shell script", "ksh": "Korn shell script"}
_MACHINES = {3: "Intel 80386", 62: "x86-64", 183: "ARM aarch64", 40: "ARM", 243: "UCB RISC-V"}
_ELF_TYPES = {0: ("no file type", "application/octet-stream"), 1: ("relocatable", "application/x-object"),
              2: ("executable", "application/x-executable"), 3: ("shared object", "application/x-sharedlib"),
              4: ("core file", "application/x-coredump")}


def _encoding(data: bytes) -> tuple[str, str] | None:
    """(libmagic's text label, mime charset) or None for binary data."""
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            data[3:].decode("utf-8")
            return "Unicode text, UTF-8 (with BOM) text", "utf-8"
        except UnicodeDecodeError:
            return None
    if all(b in _TEXT for b in data):
        return "ASCII text", "us-ascii"
    if 0 in data:
        return None
    try:
        text = data.decode("utf-8")
        if all(ord(c) >= 0x80 or ord(c) in _TEXT for c in text):
            return "Unicode text, UTF-8 text", "utf-8"
    except UnicodeDecodeError:
        pass
    if all(b in _TEXT or b >= 0xA0 for b in data):
        return "ISO-8859 text", "iso-8859-1"
    if all(b in _TEXT or b >= 0x80 for b in data):
        return "Non-ISO extended-ASCII text", "unknown-8bit"
    return None


def _qualifiers(data: bytes) -> str:
    parts: list[str] = []
    longest = max((len(line) for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")), default=0)
    if longest > 300:
        parts.append(f"with very long lines ({longest})")
    crlf = data.count(b"\r\n")
    cr = data.count(b"\r") - crlf
    lf = data.count(b"\n") - crlf
    if not (crlf or cr or lf):
        parts.append("with no line terminators")
    elif crlf or cr:
        kinds = [name for name, n in (("CRLF", crlf), ("CR", cr), ("LF", lf)) if n]
        parts.append(f"with {', '.join(kinds)} line terminators")
    if b"\x1b" in data:
        parts.append("with escape sequences")
    if b"\x08" in data:
        parts.append("with overstriking")
    return "".join(", " + p for p in parts)


def _script(data: bytes) -> str | None:
    if not data.startswith(b"#!"):
        return None
    line = data[2:].split(b"\n", 1)[0].decode("latin-1").strip()
    words = line.split()
    if not words:
        return None
    prog = words[0]
    name = prog.rsplit("/", 1)[-1]
    if name == "env" and len(words) > 1:
        name = words[1]
    elif prog not in ("/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/sh", "/bin/dash", "/bin/zsh",
                      "/usr/bin/zsh", "/bin/ksh", "/usr/bin/python", "/usr/bin/python3", "/usr/bin/python2"):
        return f"a {prog} script"
    return _INTERPRETERS.get(name, f"a {prog} script" if name != "env" else None)


def _elf(data: bytes) -> tuple[str, str]:
    if len(data) < 20 or data[4] not in (1, 2) or data[5] not in (1, 2):
        return "ELF", "application/octet-stream"
    bits = "32-bit" if data[4] == 1 else "64-bit"
    little = data[5] == 1
    order = "<" if little else ">"
    etype, machine = struct.unpack(order + "HH", data[16:20])
    kind, mime = _ELF_TYPES.get(etype, (f"unknown type 0x{etype:x}", "application/octet-stream"))
    arch = _MACHINES.get(machine, f"*unknown arch 0x{machine:x}*")
    osabi = {0: "SYSV", 3: "GNU/Linux"}.get(data[7], "SYSV")
    return f"ELF {bits} {'LSB' if little else 'MSB'} {kind}, {arch}, version {data[6]} ({osabi})", mime


def _gzip(data: bytes) -> str:
    text = "gzip compressed data"
    if len(data) < 10:
        return text
    flags, mtime, xfl, os_byte = data[3], struct.unpack("<I", data[4:8])[0], data[8], data[9]
    pos = 10
    if flags & 4 and len(data) >= 12:
        pos += 2 + struct.unpack("<H", data[10:12])[0]
    if flags & 8:
        end = data.find(b"\0", pos)
        if end > 0:
            text += f', was "{data[pos:end].decode("latin-1")}"'
    if mtime:
        text += ", last modified: " + time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(mtime))
    if xfl == 2:
        text += ", max compression"
    elif xfl == 4:
        text += ", max speed"
    if os_byte == 3:
        text += ", from Unix"
    if len(data) >= 18:
        text += f", original size modulo 2^32 {struct.unpack('<I', data[-4:])[0]}"
    return text


def describe(data: bytes) -> tuple[str, str]:
    """(description, mime) of a regular file's content."""
    if not data:
        return "empty", "inode/x-empty; charset=binary"
    if data.startswith(b"\x7fELF"):
        text, mime = _elf(data)
        return text, mime + "; charset=binary"
    if data.startswith(b"\x1f\x8b"):
        return _gzip(data), "application/gzip; charset=binary"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        endian = "little" if data[0] == 0xFF else "big"
        body = data[2:]
        lines = body.count(b"\n\0" if endian == "little" else b"\0\n")
        tail = "" if lines else ", with no line terminators"
        return f"Unicode text, UTF-16, {endian}-endian text{tail}", f"text/plain; charset=utf-16{endian[0]}e"
    enc = _encoding(data)
    if enc is None:
        return "data", "application/octet-stream; charset=binary"
    label, charset = enc
    script = _script(data)
    if script is not None:
        return f"{script}, {label}{_qualifiers(data)} executable", f"text/x-shellscript; charset={charset}" \
            if "shell" in script else f"text/x-script; charset={charset}"
    stripped = data.strip()
    if stripped[:1] in (b"{", b"["):
        try:
            json.loads(data)
            return "JSON text data", f"application/json; charset={charset}"
        except ValueError:
            pass
    return label + _qualifiers(data), f"text/plain; charset={charset}"


def file(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "bLhi", LONG)
    except Usage as e:
        sh.write_err(f"file: {e.message}\n" + USAGE)
        return 1
    if not operands:
        sh.write_err(USAGE)
        return 1
    given = dict(opts)
    brief = "b" in given
    follow = [k for k, _ in opts if k in "Lh"][-1:] == ["L"]
    mime = "full" if "i" in given else "type" if "mime-type" in given else None
    fs = sh.fs
    rows: list[tuple[str, str]] = []
    for name in operands:
        shown = "/dev/stdin" if name == "-" else name
        rows.append((shown, _one(sh, fs, name, follow, mime)))
    width = max(len(n) for n, _ in rows) + 1
    out = []
    for name, text in rows:
        out.append(text if brief else f"{name + ':':<{width}} {text}")
    sh.out("".join(line + "\n" for line in out))
    return 0


def _one(sh: ToolContext, fs, name: str, follow: bool, mime: str | None) -> str:
    def pick(text: str, kind: str) -> str:
        if mime is None:
            return text
        return kind if mime == "full" else kind.split(";")[0]

    if name == "-":
        from kshell.tools.text.textio import read_all

        text, kind = describe(read_all(sh, "-"))
        return pick(text, kind)
    try:
        inode = devices.stat(sh, name, follow=follow)
    except OSError as e:
        return f"cannot open `{name}' ({e.strerror or 'No such file or directory'})"
    if inode.is_lnk:
        target = devices.readlink(sh, name)
        if not devices.exists(sh, name):
            return pick(f"broken symbolic link to {target}", "inode/symlink")
        return pick(f"symbolic link to {target}", "inode/symlink; charset=binary")
    if inode.is_dir:
        return pick("directory", "inode/directory; charset=binary")
    if st.S_ISCHR(inode.mode):
        return pick(f"character special ({inode.rdev >> 8}/{inode.rdev & 0xFF})", "inode/chardevice; charset=binary")
    if not inode.is_reg:
        return pick("special", "inode/x-special; charset=binary")
    try:
        data = devices.read_file(sh, name)
    except OSError:
        flags = "".join(w for w, bit in (("writable, ", 2), ("executable, ", 1)) if fs.access(name, bit))
        return pick(f"{flags}regular file, no read permission", "regular file, no read permission")
    text, kind = describe(data[: 1 << 20])
    return pick(text, kind)
