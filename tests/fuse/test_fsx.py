"""fsx-style exercise of one file in the mount against an in-memory model, and a storm of
concurrent writers and readers with checksums.

The exerciser mixes pread/pwrite, truncate up and down, mmap reads and writes, and fallocate
(which K refuses with EOPNOTSUPP, so the model leaves the file unchanged), and compares the
whole file with the model at intervals and at the end, as xfstests' fsx does.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import mmap
import multiprocessing
import os
import random
import time
from pathlib import Path

import pytest

OPS = 3000
MAX_SIZE = 1 << 20
libc = ctypes.CDLL(None, use_errno=True)


class Model:
    """The file as it must be: a bytearray."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, off: int, buf: bytes) -> None:
        if off > len(self.data):
            self.data.extend(bytes(off - len(self.data)))
        self.data[off : off + len(buf)] = buf

    def truncate(self, size: int) -> None:
        if size < len(self.data):
            del self.data[size:]
        else:
            self.data.extend(bytes(size - len(self.data)))


def _check(fd: int, model: Model, step: int, log: list[str]) -> None:
    size = os.fstat(fd).st_size
    assert size == len(model.data), f"op {step}: size {size} != model {len(model.data)}\n" + "\n".join(log[-10:])
    got = os.pread(fd, size + 1, 0)
    if got != model.data:
        first = next(i for i, (a, b) in enumerate(zip(got, model.data, strict=False)) if a != b) if got else 0
        raise AssertionError(f"op {step}: content differs from byte {first}\n" + "\n".join(log[-10:]))


@pytest.mark.parametrize(("where", "seed"), [("mnt", 1), ("mnt", 2), ("fork_mnt", 3)])
def test_random_io_matches_the_model(where: str, seed: int, request: pytest.FixtureRequest) -> None:
    mnt: Path = request.getfixturevalue(where)
    rng = random.Random(seed)
    model = Model()
    path = mnt / "fsx"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    log: list[str] = []
    try:
        for step in range(OPS):
            size = len(model.data)
            kinds = ["write", "read", "truncate", "mapwrite", "mapread", "fallocate"]
            op = rng.choices(kinds, [30, 25, 10, 15, 15, 5])[0]
            off = rng.randrange(0, MAX_SIZE)
            length = rng.choice([1, 7, 512, 4096, rng.randrange(1, 200_000)])
            length = min(length, MAX_SIZE - off) or 1
            if op == "write":
                buf = rng.randbytes(length)
                assert os.pwrite(fd, buf, off) == length
                model.write(off, buf)
            elif op == "read":
                want = bytes(model.data[off : off + length])
                assert os.pread(fd, length, off) == want, f"op {step}: read {off}+{length}"
            elif op == "truncate":
                new = rng.randrange(0, MAX_SIZE)
                os.ftruncate(fd, new)
                model.truncate(new)
            elif op in ("mapwrite", "mapread") and size:
                off %= size
                length = min(length, size - off)
                with mmap.mmap(fd, size) as m:
                    if op == "mapwrite":
                        buf = rng.randbytes(length)
                        m[off : off + length] = buf
                        m.flush()
                        model.write(off, buf)
                    else:
                        assert m[off : off + length] == bytes(model.data[off : off + length]), f"op {step}: mapread"
            elif op == "fallocate":
                if libc.fallocate(fd, 0, ctypes.c_long(off), ctypes.c_long(length)) == 0:
                    model.truncate(max(size, off + length))
                else:
                    assert ctypes.get_errno() in (errno.EOPNOTSUPP, errno.ENOSYS)
            log.append(f"{step}: {op} {off}+{length} (size {len(model.data)})")
            if step % 250 == 0:
                _check(fd, model, step, log)
        _check(fd, model, OPS, log)
    finally:
        os.close(fd)
    assert path.read_bytes() == model.data  # through a fresh open, too


# -- 4 writers and 4 readers on the same files -------------------------------------------------
#
# Linux lets a read overlap a write to the same page (ext4 and tmpfs included), so readers
# take a shared byte-range lock and writers an exclusive one on what they write, as databases
# do: then no reader may ever see a torn block, and every block ends as one writer's whole.

FILES = 4
BLOCK = 4096
BLOCKS = 64
STORM_SECONDS = float(os.environ.get("KFS_STORM_SECONDS", "30"))


def _block(file: int, index: int, generation: int) -> bytes:
    """A self-checking block: its header says what it is, its body is the header's digest."""
    head = b"%d:%d:%d:" % (file, index, generation)
    body = hashlib.sha256(head).digest() * (BLOCK // 32)
    return (head + body)[:BLOCK]


def _valid(file: int, index: int, block: bytes) -> bool:
    if block == bytes(BLOCK):
        return True  # not written yet
    try:
        f, i, gen = (int(x) for x in block.split(b":", 3)[:3])
    except ValueError:
        return False
    return (f, i) == (file, index) and block == _block(f, i, gen)


def _writer(root: str, seed: int, until: float) -> int:
    rng = random.Random(seed)
    fds = [os.open(f"{root}/s{f}", os.O_RDWR) for f in range(FILES)]
    writes = 0
    generation = seed * 1_000_000
    while time.time() < until:
        f = rng.randrange(FILES)
        first = rng.randrange(BLOCKS)
        count = rng.randint(1, min(8, BLOCKS - first))
        generation += 1
        buf = b"".join(_block(f, i, generation) for i in range(first, first + count))
        fcntl.lockf(fds[f], fcntl.LOCK_EX, len(buf), first * BLOCK)
        os.pwrite(fds[f], buf, first * BLOCK)
        fcntl.lockf(fds[f], fcntl.LOCK_UN, len(buf), first * BLOCK)
        writes += 1
    for fd in fds:
        os.close(fd)
    return writes


def _reader(root: str, seed: int, until: float) -> int:
    rng = random.Random(seed)
    reads = 0
    while time.time() < until:
        f = rng.randrange(FILES)
        with open(f"{root}/s{f}", "rb") as fh:
            fcntl.lockf(fh.fileno(), fcntl.LOCK_SH)
            data = fh.read()
            fcntl.lockf(fh.fileno(), fcntl.LOCK_UN)
        for i in range(len(data) // BLOCK):
            block = data[i * BLOCK : (i + 1) * BLOCK]
            assert _valid(f, i, block), f"reader saw a torn or misplaced block {i} of s{f}: {block[:40]!r}"
        reads += 1
    return reads


def test_four_writers_and_four_readers_never_see_a_torn_block(mnt: Path) -> None:
    for f in range(FILES):
        (mnt / f"s{f}").write_bytes(bytes(BLOCK * BLOCKS))
    until = time.time() + STORM_SECONDS
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(8) as pool:
        writers = [pool.apply_async(_writer, (str(mnt), seed, until)) for seed in range(1, 5)]
        readers = [pool.apply_async(_reader, (str(mnt), seed, until)) for seed in range(11, 15)]
        writes = sum(w.get(timeout=STORM_SECONDS + 60) for w in writers)
        reads = sum(r.get(timeout=STORM_SECONDS + 60) for r in readers)
    assert writes > 100 and reads > 10, (writes, reads)
    for f in range(FILES):
        data = (mnt / f"s{f}").read_bytes()
        assert len(data) == BLOCK * BLOCKS
        for i in range(BLOCKS):
            assert _valid(f, i, data[i * BLOCK : (i + 1) * BLOCK]), f"final s{f} block {i} is torn"
