"""cksum (the POSIX CRC, -a bsd/sysv/crc/md5/sha*/blake2b/sm3, --untagged, -l, -c), b2sum
(-l, with md5sum's options) and sum (-r BSD, -s System V), as GNU coreutils 9.1.

The digest output and -c verification are digest.py's, shared with md5sum and the sha*sums; the
three legacy checksums are computed here. The CRC is zlib's reflected CRC-32 run over
bit-reversed bytes (C speed, not a Python loop per byte): reversing every bit of the input and
of the register turns one into the other.
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.digest import _SUM_LONG, Hasher, _check, _check_modes, fixed_hasher, print_digests
from kshell.tools.text.textio import Output, message, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_REVERSE = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))
_ALGORITHMS = ("bsd", "sysv", "crc", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "sm3")
_TAGS = {"md5": "MD5", "sha1": "SHA1", "sha224": "SHA224", "sha256": "SHA256", "sha384": "SHA384",
         "sha512": "SHA512", "blake2b": "BLAKE2b", "sm3": "SM3"}


def _reverse32(v: int) -> int:
    return int(f"{v:032b}"[::-1], 2)


def crc(chunks: Iterator[bytes]) -> tuple[int, int]:
    """(POSIX cksum CRC, byte count): CRC-32 poly 0x04C11DB7, MSB first, the length appended
    in its fewest little-endian bytes, the result complemented."""
    reg = 0xFFFFFFFF  # zlib complements on entry and exit: this is a raw register of 0
    total = 0
    for chunk in chunks:
        total += len(chunk)
        reg = binascii.crc32(chunk.translate(_REVERSE), reg)
    n = total
    tail = bytearray()
    while n:
        tail.append(n & 0xFF)
        n >>= 8
    reg = binascii.crc32(bytes(tail).translate(_REVERSE), reg)
    return ~_reverse32(reg ^ 0xFFFFFFFF) & 0xFFFFFFFF, total


def bsd_sum(chunks: Iterator[bytes]) -> tuple[int, int]:
    """(16-bit rotating checksum, byte count), as sum -r."""
    checksum = total = 0
    for chunk in chunks:
        total += len(chunk)
        for c in chunk:
            checksum = ((checksum >> 1) + ((checksum & 1) << 15) + c) & 0xFFFF
    return checksum, total


def sysv_sum(chunks: Iterator[bytes]) -> tuple[int, int]:
    """(System V checksum, byte count), as sum -s: the byte sum folded to 16 bits."""
    s = total = 0
    for chunk in chunks:
        total += len(chunk)
        s += sum(chunk)
    r = (s & 0xFFFF) + ((s & 0xFFFFFFFF) >> 16)
    return (r & 0xFFFF) + (r >> 16), total


def _legacy_line(algo: str, value: int, size: int, name: str | None) -> str:
    if algo == "crc":
        text = f"{value} {size}"
    elif algo == "bsd":
        text = f"{value:05d} {-(-size // 1024):5d}"
    else:
        text = f"{value} {-(-size // 512)}"
    return text + (f" {name}" if name is not None else "") + "\n"


def _legacy(sh: ToolContext, prog: str, algo: str, files: list[str], out: Output) -> int:
    """crc, bsd or sysv for every operand; the name is shown for operands given, not for
    standard input read by default."""
    fn = {"crc": crc, "bsd": bsd_sum, "sysv": sysv_sum}[algo]
    status = 0
    for f in files or ["-"]:
        try:
            value, size = fn(open_chunks(sh, f))
        except IsADirectoryError:
            if algo != "crc":
                out.flush()
                sh.write_err(f"{prog}: {f}: Is a directory\n")
                status = 1
                continue
            value, size = fn(iter(()))  # GNU 9.1's CRC loop takes a directory's EISDIR for its end
        except OSError as e:
            out.flush()
            sh.write_err(f"{prog}: {f}: {message(e)}\n")
            status = 1
            continue
        shown = f if files else None
        out.write(_legacy_line(algo, value, size, shown).encode("utf-8", "surrogateescape"))
    out.flush()
    return status


def _blake2b_bits(prog: str, value: str) -> int:
    """-l BITS: a multiple of 8 up to 512; 0 is the default (512)."""
    if not value.isdigit():
        raise Fail(f"invalid length: '{value}'")
    bits = int(value)
    if bits % 8:
        raise Fail(f"invalid length: '{value}'\n{prog}: length is not a multiple of 8")
    if bits > 512:
        raise Fail(f"invalid length: '{value}'\n{prog}: maximum digest length for 'BLAKE2b' is 512 bits")
    return bits or 512


def _blake2b(bits: int) -> Hasher:
    return lambda: hashlib.blake2b(digest_size=bits // 8)


def _blake2b_tag(bits: int) -> str:
    return "BLAKE2b" if bits == 512 else f"BLAKE2b-{bits}"


def _tagged_hasher(only: str | None) -> Callable[[str | None, int], Hasher | None]:
    """cksum -c: the algorithm named by each line's tag (`BLAKE2b-128`), or `only` (-a) for an
    untagged line; blake2b's length from the tag, else from the digest."""

    def pick(tag: str | None, length: int) -> Hasher | None:
        if tag is None:
            if only is None:
                return None
            algo, size = only, None  # an untagged line's blake2b length is its digest's, whatever -l says
        else:
            base, _, suffix = tag.partition("-")
            algo = next((a for a, t in _TAGS.items() if t == base), "")
            if not algo or (only is not None and algo != only) or (suffix and algo != "blake2b"):
                return None
            size = int(suffix) if suffix.isdigit() else None
        if algo == "blake2b":
            size = size or length * 4
            if size % 8 or not 8 <= size <= 512 or size != length * 4:
                return None
            return _blake2b(size)
        return fixed_hasher(algo)(tag, length)

    return pick


_CKSUM_LONG = {k: v for k, v in _SUM_LONG.items() if k not in ("binary", "text")}
_CKSUM_LONG.update(algorithm=("a", REQUIRED), length=("l", REQUIRED), untagged=("untagged", NONE),
                   debug=("debug", NONE))


def _algorithm(value: str) -> str:
    """-a TYPE, named in full (GNU 9.1 takes no abbreviation here)."""
    if value in _ALGORITHMS:
        return value
    valid = "".join(f"  - '{a}'\n" for a in _ALGORITHMS)
    raise Usage(f"invalid argument '{value}' for '--algorithm'\nValid arguments are:\n{valid.rstrip()}")


@tool("cksum")
def cksum(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "a:l:cwz", _CKSUM_LONG)
    keys = {k for k, _ in opts}
    algo = "crc"
    bits: int | None = None
    for key, value in opts:
        if key == "a":
            algo = _algorithm(value)
        elif key == "l":
            bits = _blake2b_bits("cksum", value)
        elif key == "help":
            sh.out(b"Usage: cksum [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"cksum (GNU coreutils) 9.1\n")
            return 0
    if bits is not None and algo != "blake2b":
        raise Fail("--length is only supported with --algorithm=blake2b")
    out = Output(sh)
    if "c" in keys:
        if algo in ("bsd", "sysv", "crc") and any(k == "a" for k, _ in opts):
            raise Fail("--check is not supported with --algorithm={bsd,sysv,crc}")
        _check_modes(keys - {"untagged", "tag"}, [])
        only = None if algo == "crc" else algo
        return _check(sh, "cksum", files or ["-"], keys, out, _tagged_hasher(only), (only or "").upper())
    _check_modes(keys, [])
    if algo in ("bsd", "sysv", "crc"):
        return _legacy(sh, "cksum", algo, files, out)
    if algo == "blake2b":
        size = bits or 512
        new, tag = _blake2b(size), _blake2b_tag(size)
    else:
        new, tag = (lambda: hashlib.new(algo)), _TAGS[algo]
    shown = keys - {"tag"} if "untagged" in keys else keys | {"tag"}
    return print_digests(sh, "cksum", files, new, tag, shown, out)


_B2_LONG = dict(_SUM_LONG, length=("l", REQUIRED))


@tool("b2sum")
def b2sum(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "bctwzl:", _B2_LONG)
    keys = {k for k, _ in opts}
    bits: int | None = None
    for key, value in opts:
        if key == "l":
            bits = _blake2b_bits("b2sum", value)
        elif key == "help":
            sh.out(b"Usage: b2sum [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"b2sum (GNU coreutils) 9.1\n")
            return 0
    _check_modes(keys, [k for k, _ in opts if k in ("b", "t", "tag")][-1:])
    out = Output(sh)
    if "c" in keys:
        return _check(sh, "b2sum", files or ["-"], keys, out, _tagged_hasher("blake2b"), "BLAKE2b")
    size = bits or 512
    return print_digests(sh, "b2sum", files, _blake2b(size), _blake2b_tag(size), keys, out)


_SUMS_LONG = {"sysv": ("s", NONE), "help": ("help", NONE), "version": ("version", NONE)}


@tool("sum")
def sum_(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "rs", _SUMS_LONG)
    algo = "bsd"
    for key, _ in opts:
        if key == "r":
            algo = "bsd"
        elif key == "s":
            algo = "sysv"
        elif key == "help":
            sh.out(b"Usage: sum [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"sum (GNU coreutils) 9.1\n")
            return 0
    return _legacy(sh, "sum", algo, files, Output(sh))
