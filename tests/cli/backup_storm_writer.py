"""Child process for the backup tests: a write storm whose every completed write is logged.

Run as `python backup_storm_writer.py STATE LOG [SEED]`; it never stops on its own (the test
terminates it). Write number `seq` creates a new file or rewrites an existing one with
`content(seq, path)`, one VFS operation (one LMDB commit) each; once it has returned, the
line `seq path t` goes to LOG (t: CLOCK_MONOTONIC in ns, which every process on the host
shares), so the test knows which writes had completed before a backup began.
"""

from __future__ import annotations

import random
import sys
import time

from kfs.kstate import KState
from kfs.vfs import VFS, PathFS

DIR = "/storm"
MAX_FILES = 400


def content(seq: int, path: str) -> bytes:
    """What write `seq` puts into `path`: its own header, then 0 to ~150 KiB (up to three
    chunks, so rewrites both grow and shrink files and free pages churn)."""
    size = (seq * 7919) % 150_000
    head = b"%d %s\n" % (seq, path.encode())
    return head + (b"%d." % seq * (size // 4 + 1))[:size]


def seq_of(data: bytes) -> int:
    """The write a file's bytes came from (the inverse of `content`'s header)."""
    return int(data.split(b" ", 1)[0])


def main(state_dir: str, log_path: str, seed: int) -> None:
    rng = random.Random(seed)
    with KState(state_dir) as state, open(log_path, "w", buffering=1) as log:
        fs = PathFS(VFS(state, by="storm"))
        fs.mkdir(DIR, parents=True)
        paths: list[str] = []
        seq = 0
        while True:
            seq += 1
            if len(paths) < MAX_FILES and (len(paths) < 50 or rng.random() < 0.3):
                path = f"{DIR}/f{seq}"
                paths.append(path)
            else:
                path = rng.choice(paths)
            fs.write_file(path, content(seq, path))
            log.write(f"{seq} {path} {time.monotonic_ns()}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
