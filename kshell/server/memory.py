"""Giving the front end's memory back to the system once it is idle.

A storm of sessions, a big SFTP read or a flood of jobs leaves the front end's heap large:
CPython frees its objects, but glibc's malloc keeps the freed pages (in each thread's arena,
and below the top of the heap), so the process stayed at its peak (49 MiB at start, 607 MiB
after such a storm, for good). When the server goes idle, a full garbage collection frees
what only cycles held, and `malloc_trim(0)` returns every arena's free pages to the kernel.
Without glibc (musl has no malloc_trim) only the collection runs.

Most of what stays is not the front end's own: the pages of the state's data file it read
(an SFTP read of a 64 MiB file maps 64 MiB of LMDB's map) count in its RSS as file pages. They
are the kernel's page cache, shared with every process; `MADV_DONTNEED` on the front end's
mapping of the file unmaps them (a shared file mapping loses nothing: the pages stay in the
cache, and a later read maps them again), so RSS says what the front end itself holds.
"""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Callable
from pathlib import Path

_MADV_DONTNEED = 4
_LIBC = ctypes.CDLL(None, use_errno=True)  # an instance of our own: its functions' argtypes stay ours
_LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def _malloc_trim() -> Callable[[int], int] | None:
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


MALLOC_TRIM = _malloc_trim()


def give_back(mapped: tuple[Path, ...] = ()) -> bool:
    """Collect garbage, return malloc's free pages to the kernel and unmap this process's
    pages of the `mapped` files (the state's data file); True if malloc_trim ran."""
    gc.collect()
    for path in mapped:
        unmap_pages(path)
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True


def unmap_pages(path: Path) -> None:
    """MADV_DONTNEED over every shared mapping this process has of `path` (never a private
    one: that would drop its own copies of the pages)."""
    real = os.path.realpath(path)
    try:
        with open("/proc/self/maps") as maps:
            lines = maps.readlines()
    except OSError:
        return
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[5].rstrip("\n") != real or fields[1][3] != "s":
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        _LIBC.madvise(low, high - low, _MADV_DONTNEED)


def rss_kib() -> int:
    """This process's resident set (VmRSS), in KiB (0 where /proc says nothing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
