"""base64 and base32 (-d -w -i), and md5sum/sha1sum/sha256sum/sha512sum (-b -t -c --quiet --status
--strict -w --tag), as GNU coreutils."""

from __future__ import annotations

import base64 as b64
import binascii
import contextlib
import errno
import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, open_chunks, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_B64_LONG = {"decode": ("d", NONE), "wrap": ("w", REQUIRED), "ignore-garbage": ("i", NONE),
             "help": ("help", NONE), "version": ("version", NONE)}


def _coder(name: str, encode: Callable[[bytes], bytes], decode: Callable[..., bytes], alphabet: bytes,
           quantum: int) -> object:
    """base64 or base32: one operand encoded and wrapped (-w), or decoded (-d; -i skips bytes
    outside `alphabet`); a bad input writes what decoded before it, as GNU does."""

    @tool(name)
    def run(sh: ToolContext, argv: list[str]) -> int:
        opts, files = parse(argv, "dw:i", _B64_LONG)
        decoding = garbage = False
        wrap = 76
        for key, value in opts:
            if key == "d":
                decoding = True
            elif key == "i":
                garbage = True
            elif key == "w":
                if not value.isdigit():
                    raise Fail(f"invalid wrap size: '{value}'")
                wrap = int(value)
            elif key == "help":
                sh.out(f"Usage: {name} [OPTION]... [FILE]\n".encode())
                return 0
        if len(files) > 1:
            raise Usage(f"extra operand '{files[1]}'")
        source = files[0] if files else "-"
        try:
            data = read_all(sh, source)
        except OSError as e:
            if e.errno == 21:
                raise Fail(f"read error: {message(e)}") from None
            raise Fail(f"{source}: {message(e)}") from None
        out = Output(sh)
        if decoding:
            outside = rb"[^" + alphabet + rb"=]"
            clean = re.sub(outside, b"", data) if garbage else data.replace(b"\n", b"")  # GNU skips newlines only
            try:
                result = decode(clean, validate=True) if quantum == 4 else decode(clean)
            except (binascii.Error, ValueError):
                out.write(_decoded_prefix(clean, decode, alphabet, quantum))
                out.flush()
                raise Fail("invalid input") from None
            out.write(result)
            out.flush()
            return 0
        enc = encode(data)
        if wrap:
            for i in range(0, len(enc), wrap):
                out.write(enc[i : i + wrap] + b"\n")
        else:
            out.write(enc)
        out.flush()
        return 0

    return run


# The last input character each output byte of a quantum needs (gnulib's decode_4/decode_8).
_NEEDS = {4: (1, 2, 3), 8: (1, 3, 4, 6, 7)}


def _decoded_prefix(data: bytes, decode: Callable[..., bytes], alphabet: bytes, quantum: int) -> bytes:
    """What GNU writes before `invalid input`: whole quanta, then the bytes of the bad quantum
    whose characters are all valid; a short last quantum counts for base64 only."""
    valid = re.compile(rb"[" + alphabet + rb"]*")
    done = bytearray()
    for i in range(0, len(data), quantum):
        block = data[i : i + quantum]
        if len(block) == quantum:
            with contextlib.suppress(binascii.Error, ValueError):
                done += decode(block)
                continue
        elif quantum == 8:
            break
        good = valid.match(block).end()  # type: ignore[union-attr]
        count = sum(1 for need in _NEEDS[quantum] if need < good)
        done += decode(block[:good] + b"A" * (quantum - good))[:count]
        break
    return bytes(done)


base64 = _coder("base64", b64.b64encode, b64.b64decode, rb"A-Za-z0-9+/", 4)
base32 = _coder("base32", b64.b32encode, b64.b32decode, rb"A-Z2-7", 8)


_SUM_LONG = {"binary": ("b", NONE), "check": ("c", NONE), "tag": ("tag", NONE),
             "text": ("t", NONE), "zero": ("z", NONE), "ignore-missing": ("ignore-missing", NONE),
             "quiet": ("quiet", NONE), "status": ("status", NONE), "strict": ("strict", NONE),
             "warn": ("w", NONE), "help": ("help", NONE), "version": ("version", NONE)}


def _summer(algo: str, tag: str) -> object:
    name = f"{algo}sum"

    @tool(name)
    def run(sh: ToolContext, argv: list[str]) -> int:
        opts, files = parse(argv, "bctwz", _SUM_LONG)
        keys = {k for k, _ in opts}
        if "help" in keys:
            sh.out(f"Usage: {name} [OPTION]... [FILE]...\n".encode())
            return 0
        _check_modes(keys, [k for k, _ in opts if k in ("b", "t", "tag")][-1:])
        out = Output(sh)
        if "c" in keys:
            return _check(sh, name, files or ["-"], keys, out, fixed_hasher(algo), algo.upper())
        return print_digests(sh, name, files, lambda: hashlib.new(algo), tag, keys, out)

    return run


Hasher = Callable[[], Any]


def fixed_hasher(algo: str) -> Callable[[str | None, int], Hasher | None]:
    """The hasher for a checksum line of a one-algorithm tool (md5sum): `algo` whatever the tag,
    when the digest has its length."""
    size = hashlib.new(algo).digest_size * 2
    return lambda tag, length: (lambda: hashlib.new(algo)) if length == size else None


def print_digests(sh: ToolContext, name: str, files: list[str], new: Hasher, tag: str, keys: set[str],
                  out: Output) -> int:
    """One line per operand, `DIGEST  NAME` (`*NAME` with -b) or with --tag `TAG (NAME) = DIGEST`;
    a name with a backslash or newline is escaped and the line starts with a backslash."""
    end = "\0" if "z" in keys else "\n"
    status = 0
    for f in files or ["-"]:
        try:
            h = new()
            for chunk in open_chunks(sh, f):
                h.update(chunk)
        except OSError as e:
            out.flush()
            sh.write_err(f"{name}: {f}: {message(e)}\n")
            status = 1
            continue
        shown = f
        prefix = ""
        if end == "\n" and ("\\" in shown or "\n" in shown or "\r" in shown):
            prefix = "\\"
            shown = shown.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        if "tag" in keys:
            line = f"{prefix}{tag} ({shown}) = {h.hexdigest()}{end}"
        else:
            line = f"{prefix}{h.hexdigest()} {'*' if 'b' in keys else ' '}{shown}{end}"
        out.write(line.encode("utf-8", "surrogateescape"))
    out.flush()
    return status


def _check_modes(keys: set[str], mode: list[str]) -> None:
    """GNU's refusals of options that do not fit checking (or not checking) sums."""
    if mode == ["t"] and "tag" in keys:  # --tag implies -b: only a later -t conflicts
        raise Usage("--tag does not support --text mode")
    if "c" in keys:
        if "z" in keys:
            raise Usage("the --zero option is not supported when verifying checksums")
        if "tag" in keys:
            raise Usage("the --tag option is meaningless when verifying checksums")
        if "b" in keys or "t" in keys:
            raise Usage("the --binary and --text options are meaningless when verifying checksums")
        return
    for key, option in (("ignore-missing", "ignore-missing"), ("status", "status"), ("w", "warn"),
                        ("quiet", "quiet"), ("strict", "strict")):
        if key in keys:
            raise Usage(f"the --{option} option is meaningful only when verifying checksums")


def _check(sh: ToolContext, name: str, files: list[str], keys: set[str], out: Output,
           pick: Callable[[str | None, int], Hasher | None], label: str) -> int:
    """-c: verify every `DIGEST  NAME` or `TAG (NAME) = DIGEST` line of the listings. `pick`
    gives the hasher for a line's tag (None untagged) and digest length, None when the line
    does not fit the tool (a wrong length, an unknown tag); `label` names the algorithm in -w's
    warnings."""
    line_rx = re.compile(r"^(\\?)([0-9a-fA-F]+) ([ *])(.*)$")
    tag_rx = re.compile(r"^(\\?)([\w-]+) \((.*)\) = ([0-9a-fA-F]+)$")
    status = 0
    quiet = "quiet" in keys
    silent = "status" in keys
    for listing in files:
        try:
            text = read_all(sh, listing).decode("utf-8", "surrogateescape")
        except OSError as e:
            out.flush()
            if e.errno == errno.EISDIR:  # opened, then read(2) fails: GNU says just that
                sh.write_err(f"{name}: {listing}: read error\n")
            else:
                sh.write_err(f"{name}: {listing}: {message(e)}\n")
            status = 1
            continue
        bad_format = failed = unreadable = 0
        ok_any = False
        for number, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
            m = line_rx.match(line)
            t = None if m else tag_rx.match(line)
            new = pick(None, len(m.group(2))) if m else pick(t.group(2), len(t.group(4))) if t else None
            if new is not None and m:
                esc, digest, _, path = m.groups()
            else:
                if new is None or t is None:
                    bad_format += 1
                    if "w" in keys:
                        sh.write_err(
                            f"{name}: {listing}: {number}: improperly formatted {label} checksum line\n"
                        )
                    continue
                esc, _, path, digest = t.groups()
            if esc:
                path = path.replace("\\n", "\n").replace("\\\\", "\\")
            try:
                h = new()
                for chunk in open_chunks(sh, path):
                    h.update(chunk)
            except OSError as e:
                if "ignore-missing" in keys and e.errno == 2:
                    continue
                out.flush()
                sh.write_err(f"{name}: {path}: {message(e)}\n")
                if not silent:
                    out.write(f"{path}: FAILED open or read\n".encode("utf-8", "surrogateescape"))
                unreadable += 1
                continue
            if h.hexdigest() == digest.lower():
                ok_any = True
                if not quiet and not silent:
                    out.write(f"{path}: OK\n".encode("utf-8", "surrogateescape"))
            else:
                failed += 1
                if not silent:
                    out.write(f"{path}: FAILED\n".encode("utf-8", "surrogateescape"))
        out.flush()
        if not ok_any and not failed and not unreadable:
            sh.write_err(f"{name}: {listing}: no properly formatted checksum lines found\n")
            status = 1
            continue
        if not silent:
            if bad_format:
                s = "s are" if bad_format > 1 else " is"
                sh.write_err(f"{name}: WARNING: {bad_format} line{s} improperly formatted\n")
            if unreadable:
                s = "s" if unreadable > 1 else ""
                sh.write_err(f"{name}: WARNING: {unreadable} listed file{s} could not be read\n")
            if failed:
                s = "s" if failed > 1 else ""
                sh.write_err(f"{name}: WARNING: {failed} computed checksum{s} did NOT match\n")
        if failed or unreadable or (bad_format and "strict" in keys):
            status = 1
    return status


md5sum = _summer("md5", "MD5")
sha1sum = _summer("sha1", "SHA1")
sha256sum = _summer("sha256", "SHA256")
sha512sum = _summer("sha512", "SHA512")
sha224sum = _summer("sha224", "SHA224")
sha384sum = _summer("sha384", "SHA384")
