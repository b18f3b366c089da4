"""Delegated programs and the image's drives over real ssh: a host drive is bound in the
sandbox at its path (a program reads and writes it as the agent), a memory drive lives in K's
own processes, so a program naming it (in its arguments or as its working directory) is
refused with one line saying so."""

from __future__ import annotations

from pathlib import Path

from delegation import run

from kfs.runtime import image

MANIFEST = """[drives.scratch]
path = "/mnt/scratch"
kind = "memory"
max_bytes = "1M"

[drives.data]
path = "/mnt/data"
kind = "host"
source = "{source}"
"""


def test_programs_reach_host_drives_and_are_refused_memory_drives(make_mounted, tmp_path: Path) -> None:  # noqa: ANN001
    b = make_mounted()
    source = b.root / "hostdata"  # under a directory agents may pass through, as bwrap needs
    source.mkdir()
    source.chmod(0o777)
    (source / "given.txt").write_text("from the host\n")
    (tmp_path / "komputer.toml").write_text(MANIFEST.format(source=source))
    image.apply(b.state, image.load(tmp_path), by="test")
    status, out, err = run(b, "python3 -c 'print(open(\"/mnt/data/given.txt\").read(), end=\"\")' && "
                              "python3 -c 'open(\"/mnt/data/made.txt\", \"w\").write(\"made\\n\")' && cat /mnt/data/made.txt && "
                              "cd /mnt/data && python3 -c 'import os; print(sorted(os.listdir(\".\")), os.getcwd())'")
    assert status == 0, err
    assert out == "from the host\nmade\n['given.txt', 'made.txt'] /mnt/data\n"
    agent = b.server.find_agent("alice")
    assert agent is not None and (source / "made.txt").stat().st_uid == agent.uid
    status, out, err = run(b, "echo x > /mnt/scratch/f; python3 -c 'print(1)' /mnt/scratch/f; echo $?; "
                              "cd /mnt/scratch && python3 -c 'print(1)'; cat f")
    assert out == "126\nx\n"
    assert err.splitlines() == ["k: line 1: python3: /mnt/scratch is a memory drive, which delegated programs "
                                "cannot reach"] * 2
