"""K's native core: path normalisation and guards, shell glob matching, brace expansion, awk's
record fields and numbers.

Bytes in, bytes out; every function is pure. The C code (native/*.c, built by cffi into
`native._knative`) is what runs; `native.pytwin` holds a pure-Python twin with the same
signatures that serves only as the oracle of the differential tests, never as a fallback.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import compress

try:
    from native._knative import ffi as _ffi
    from native._knative import lib as _lib
except ImportError as exc:  # pragma: no cover - exercised only on a broken install
    raise ImportError("native core not built: run `make native` or `pip install -e .`") from exc

__all__ = [
    "BraceLimitError",
    "awk_columns",
    "awk_number",
    "brace_expand",
    "glob_filter",
    "glob_match",
    "has_magic",
    "is_within",
    "normalize",
    "split",
]


_MISSPLIT = int(_ffi.cast("size_t", -1))  # kglob_filter: the NULs did not split the names


class BraceLimitError(ValueError):
    """A brace expansion would produce more words than the caller allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"brace expansion: too many words (limit {limit})")
        self.limit = limit


class _Scratch(threading.local):
    """Per-thread output buffers, grown on demand: cheaper than a fresh ffi.new per call, and
    safe because results are copied out before the call returns."""

    def __init__(self) -> None:
        self.chars = _ffi.new("char[]", 4096)
        self.nchars = 4096
        self.spans = _ffi.new("size_t[]", 512)
        self.nspans = 512

    def char_buf(self, size: int):
        if size > self.nchars:
            self.nchars = max(size, 2 * self.nchars)
            self.chars = _ffi.new("char[]", self.nchars)
        return self.chars

    def span_buf(self, size: int):
        if size > self.nspans:
            self.nspans = max(size, 2 * self.nspans)
            self.spans = _ffi.new("size_t[]", self.nspans)
        return self.spans


_scratch = _Scratch()


def normalize(path: bytes, cwd: bytes = b"/", home: bytes = b"/") -> bytes:
    """Absolute, lexical form of `path`: joins cwd, expands `~` and `~/`, drops `.`, pops `..`.

    No filesystem access, so symlinks are not followed; the result starts with `/` and has no
    trailing slash unless it is `/`. cwd and home are themselves normalised from `/`.
    """
    plen, clen, hlen = len(path), len(cwd), len(home)
    out = _scratch.char_buf(plen + clen + hlen + 3)
    return _ffi.unpack(out, _lib.kpath_normalize(path, plen, cwd, clen, home, hlen, out))


def split(path: bytes) -> list[bytes]:
    """Components of `path` without empty ones and `.`, keeping `..` for physical resolution."""
    spans = _scratch.span_buf(len(path) + 2)
    k = _lib.kpath_split(path, len(path), spans)
    flat = _ffi.unpack(spans, 2 * k)
    return [path[flat[i] : flat[i] + flat[i + 1]] for i in range(0, 2 * k, 2)]


def is_within(path: bytes, root: bytes) -> bool:
    """Traversal guard: True iff normalize(path) is root or lies below it (`/rootx` is not
    within `/root`). Both sides are normalised from `/` with home `/`, so `..` cannot escape.
    """
    scratch = _scratch.char_buf(len(path) + len(root) + 10)
    return bool(_lib.kpath_is_within(path, len(path), root, len(root), scratch))


def glob_match(pattern: bytes, name: bytes, period: bool = True) -> bool:
    """Whether one name (a single path component) matches a shell pattern, as bash would.

    period=True is pathname globbing without dotglob: a leading `.` in the name must be
    matched by a literal `.` at the start of the pattern. period=False suits `[[ == ]]`/case.
    """
    return bool(_lib.kglob_match(pattern, len(pattern), name, len(name), period))


def glob_filter(pattern: bytes, names: list[bytes], period: bool = True) -> list[bytes]:
    """The names matching `pattern`, in input order, decided in one C call (the hot path of
    globbing a directory listing)."""
    count = len(names)
    if count == 0:
        return []
    hits = bytearray(count)
    out = _ffi.from_buffer(hits)
    joined = b"\0".join(names)  # names hold no NUL on Linux; C checks and says otherwise
    if (
        _lib.kglob_filter(pattern, len(pattern), joined, len(joined), _ffi.NULL, count, period, out)
        == _MISSPLIT
    ):
        joined = b"".join(names)
        lens = _ffi.new("size_t[]", [len(name) for name in names])
        _lib.kglob_filter(pattern, len(pattern), joined, len(joined), lens, count, period, out)
    return list(compress(names, hits))


def has_magic(pattern: bytes) -> bool:
    """Whether the pattern holds an unescaped `*`, `?` or `[`: without one, callers skip
    globbing and only remove quotes."""
    return bool(_lib.kglob_has_magic(pattern, len(pattern)))


def brace_expand(word: bytes, max_words: int = 10000) -> list[bytes]:
    """bash brace expansion of one unexpanded word (quotes and backslashes still in it).

    Invalid groups stay literal exactly as bash leaves them. Raises BraceLimitError when the
    result would exceed max_words; the count is known before any word is built.
    """
    if max_words < 0:
        raise ValueError("max_words must be >= 0")
    out = _ffi.new("kbrace_words **")
    rc = _lib.kbrace_expand(word, len(word), min(max_words, 2**63), out)
    if rc == _lib.KBRACE_TOO_MANY:
        raise BraceLimitError(max_words)
    if rc == _lib.KBRACE_TOO_DEEP:
        raise ValueError(
            f"brace expansion: groups nested too deeply (limit {_lib.KBRACE_MAX_NEST})"
        )
    if rc != _lib.KBRACE_OK:
        raise MemoryError("brace expansion: out of memory")
    words = out[0]
    try:
        count = words.count
        if count == 0:
            return []
        data = _ffi.unpack(words.buf, words.offs[count] - 1)
        if b"\0" not in word:  # then no word holds a NUL: the terminators split them
            return data.split(b"\0")
        offs = _ffi.unpack(words.offs, count + 1)
    finally:
        _lib.kbrace_free(words)
    return [data[offs[i] : offs[i + 1] - 1] for i in range(count)]


def awk_number(text: bytes) -> float | None:
    """The number awk reads at the start of `text` (leading white space, the longest decimal
    prefix; 0 when there is none), or None when the exact C path does not take it (more
    than 2^53 in the digits, an exponent past 10^22, "+inf", "-nan"...): then the caller's
    general conversion decides."""
    v = _lib.kawk_number(text, len(text))
    return None if v != v else v


def awk_columns(
    text: bytes, count: int, rs: int, fs: int, cuts: int, nums: Sequence[int], texts: Sequence[int],
    want_nf: bool,
) -> tuple[list[memoryview], bytes, memoryview | None, int] | None:
    """The fields an awk record loop reads, for a block of records in one call.

    `text` holds `count` records separated by the byte `rs`; fields are cut by the byte `fs`
    (-1: awk's default, runs of space, tab and newline, none at either end), at most `cuts`
    times (every index in nums and texts, 0-based, is below it; texts distinct). Returns
    (numbers: for each j in nums, the number in field j of each record, a writable view of
    doubles: 0.0 where the record has no field j, NaN where awk_number says None; the texts
    of fields `texts`, record after record, each followed by the fs byte (a space for -1)
    but the last; min(NF, cuts + 1) of each record, a view of unsigned ints, when want_nf,
    else None; the count of NaNs), or None when `text` does not hold exactly `count` records.
    """
    nnum, ntext = len(nums), len(texts)
    numv = _ffi.new("double[]", count * nnum or 1)
    nfv = _ffi.new("uint32_t[]", count) if want_nf else _ffi.NULL
    out = _ffi.new("char[]", len(text) + ntext * count if ntext else 1)  # fields never overlap
    outlen = _ffi.new("size_t *")
    spans = _ffi.new("size_t[]", 2 * cuts)
    unread = _lib.kawk_columns(text, len(text), rs, fs, count, cuts, list(nums), nnum, list(texts), ntext,
                               numv, nfv, out, outlen, spans)
    if unread < 0:
        return None
    joined = _ffi.unpack(out, outlen[0] - 1) if ntext else b""
    # views of the C arrays, not lists: iterating one makes each float as it is used, which
    # then goes back to CPython's free list (a list of 50,000 floats costs twice as much)
    view = memoryview(_ffi.buffer(numv)).cast("d")
    numbers = [view[k * count : (k + 1) * count] for k in range(nnum)]
    return numbers, joined, memoryview(_ffi.buffer(nfv)).cast("I") if want_nf else None, unread
