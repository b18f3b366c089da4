"""Child process for the daemon crash test: write files through the mount until it dies.

Run as `python storm_writer.py DIR TAG JOURNAL`. Each file's bytes follow from its name
(`expected_content`); a file's name goes to JOURNAL (on the host) only after its fsync
returned, so the journal lists exactly the files that must survive a crash of the daemon.
"""

from __future__ import annotations

import hashlib
import os
import sys


def expected_content(name: str) -> bytes:
    digest = hashlib.sha256(name.encode()).digest()
    size = int.from_bytes(digest[:3], "big") % 300_000
    return (digest * (size // 32 + 1))[:size]


def main(directory: str, tag: str, journal: str) -> None:
    log = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    i = 0
    try:
        while True:
            name = f"{tag}-{i}"
            fd = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            data = expected_content(name)
            for at in range(0, len(data), 50_000):  # several write requests per file
                os.pwrite(fd, data[at : at + 50_000], at)
            if i % 2 == 0:
                os.fsync(fd)
                os.write(log, f"{name}\n".encode())
            os.close(fd)
            i += 1
    except OSError:  # the daemon died under us: that is the point
        pass


if __name__ == "__main__":
    main(*sys.argv[1:4])
