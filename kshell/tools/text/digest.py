"""base64 (-d -w -i) and md5sum/sha1sum/sha256sum/sha512sum (-b -t -c --quiet --status
--strict -w --tag), as GNU coreutils."""

from __future__ import annotations

import base64 as b64
import binascii
import contextlib
import errno
import hashlib
import re
from typing import TYPE_CHECKING

from kshell.tools.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, open_chunks, read_all

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_B64_LONG = {"decode": ("d", NONE), "wrap": ("w", REQUIRED), "ignore-garbage": ("i", NONE),
             "help": ("help", NONE), "version": ("version", NONE)}


@tool("base64")
def base64(sh: Interp, argv: list[str]) -> int:
    opts, files = parse(argv, "dw:i", _B64_LONG)
    decode = garbage = False
    wrap = 76
    for key, value in opts:
        if key == "d":
            decode = True
        elif key == "i":
            garbage = True
        elif key == "w":
            if not value.isdigit():
                raise Fail(f"invalid wrap size: '{value}'")
            wrap = int(value)
        elif key == "help":
            sh.out(b"Usage: base64 [OPTION]... [FILE]\n")
            return 0
    if len(files) > 1:
        raise Usage(f"extra operand '{files[1]}'")
    name = files[0] if files else "-"
    try:
        data = read_all(sh, name)
    except OSError as e:
        if e.errno == 21:
            raise Fail(f"read error: {message(e)}") from None
        raise Fail(f"{name}: {message(e)}") from None
    out = Output(sh)
    if decode:
        clean = re.sub(rb"[^A-Za-z0-9+/=]", b"", data) if garbage else re.sub(rb"\s", b"", data)
        try:
            result = b64.b64decode(clean, validate=True)
        except (binascii.Error, ValueError):
            good = clean[: len(clean) // 4 * 4]
            with contextlib.suppress(binascii.Error, ValueError):
                out.write(b64.b64decode(re.sub(rb"[^A-Za-z0-9+/=].*", b"", good, flags=re.S)[: len(good) // 4 * 4]))
            out.flush()
            raise Fail("invalid input") from None
        out.write(result)
        out.flush()
        return 0
    enc = b64.b64encode(data)
    if wrap:
        for i in range(0, len(enc), wrap):
            out.write(enc[i : i + wrap] + b"\n")
    else:
        out.write(enc)
    out.flush()
    return 0


_SUM_LONG = {"binary": ("b", NONE), "check": ("c", NONE), "tag": ("tag", NONE),
             "text": ("t", NONE), "zero": ("z", NONE), "ignore-missing": ("ignore-missing", NONE),
             "quiet": ("quiet", NONE), "status": ("status", NONE), "strict": ("strict", NONE),
             "warn": ("w", NONE), "help": ("help", NONE), "version": ("version", NONE)}


def _summer(algo: str, tag: str) -> object:
    name = f"{algo}sum"

    @tool(name)
    def run(sh: Interp, argv: list[str]) -> int:
        opts, files = parse(argv, "bctwz", _SUM_LONG)
        keys = {k for k, _ in opts}
        if "help" in keys:
            sh.out(f"Usage: {name} [OPTION]... [FILE]...\n".encode())
            return 0
        binary = "b" in keys
        _check_modes(keys, [k for k, _ in opts if k in ("b", "t", "tag")][-1:])
        end = "\0" if "z" in keys else "\n"
        out = Output(sh)
        if "c" in keys:
            return _check(sh, name, algo, files or ["-"], keys, out)
        status = 0
        for f in files or ["-"]:
            try:
                h = hashlib.new(algo)
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
                line = f"{prefix}{h.hexdigest()} {'*' if binary else ' '}{shown}{end}"
            out.write(line.encode("utf-8", "surrogateescape"))
        out.flush()
        return status

    return run


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


def _check(sh: Interp, name: str, algo: str, files: list[str], keys: set[str], out: Output) -> int:
    size = hashlib.new(algo).digest_size * 2
    line_rx = re.compile(rf"^(\\?)([0-9a-fA-F]{{{size}}}) ([ *])(.*)$")
    tag_rx = re.compile(rf"^(\\?)\w+ \((.*)\) = ([0-9a-fA-F]{{{size}}})$")
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
            if m:
                esc, digest, _, path = m.groups()
            else:
                t = tag_rx.match(line)
                if not t:
                    bad_format += 1
                    if "w" in keys:
                        sh.write_err(
                            f"{name}: {listing}: {number}: improperly formatted {algo.upper()} checksum line\n"
                        )
                    continue
                esc, path, digest = t.groups()
            if esc:
                path = path.replace("\\n", "\n").replace("\\\\", "\\")
            try:
                h = hashlib.new(algo)
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
