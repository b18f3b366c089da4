"""Child process for the crash test: endless VFS mutations whose effects are checkable.

Run as `python crash_worker.py STATE ROUND`; it never stops on its own, the test SIGKILLs it.
Operation i of round r has id r * 1_000_000 + i; `expected_content(id)` says what a file
written by that operation must hold, so a torn write is visible.
"""

from __future__ import annotations

import os
import random
import sys

from kfs.kstate import KState
from kfs.vfs import VFS, PathFS


def expected_content(op_id: int) -> bytes:
    size = (op_id * 7919) % 200_000  # up to ~3 chunks, so some writes span several chunks
    return (b"%d:" % op_id * (size // 8 + 1))[:size]


def main(state_dir: str, round_: int) -> None:
    fs = PathFS(VFS(KState(state_dir), by="crash"))
    rng = random.Random(round_)
    for d in ("/w", "/r", "/t", "/a"):
        fs.mkdir(d, parents=True)
    held = []
    i = 0
    while True:
        op_id = round_ * 1_000_000 + i
        kind = rng.randrange(6)
        if kind == 0 or i < 5:
            fs.write_file(f"/w/f{op_id}", expected_content(op_id))
        elif kind == 1:
            names = fs.readdir("/w")
            if names:
                name = rng.choice(names)
                fs.rename(f"/w/{name}", f"/r/{name}")
        elif kind == 2:
            fs.mkdir(f"/t/{op_id}/x/y/z", parents=True)
            fs.write_file(f"/t/{op_id}/x/y/z/leaf", expected_content(op_id))
        elif kind == 3:
            trees = fs.readdir("/t")
            if trees:
                fs.rm(f"/t/{rng.choice(trees)}", recursive=True)
        elif kind == 4:
            fs.append_file(f"/a/log{op_id % 7}", b"%d\n" % op_id)
        else:
            names = fs.readdir("/r")
            if names:  # hold a file open, then unlink it: an orphan if we die now
                name = rng.choice(names)
                held.append(fs.open(f"/r/{name}", os.O_RDWR))
                fs.unlink(f"/r/{name}")
                if len(held) > 3:
                    held.pop(0).close()
        i += 1
        if i == 50:
            print("ready", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
