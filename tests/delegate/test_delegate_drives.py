"""Delegated programs and the image's drives over real ssh: a host drive is bound in the
sandbox from its source and a memory drive from the FUSE mount, each at its path (a program
reads and writes them as the agent); a python drive lives in the session's worker, so a program
naming one (in its arguments or as its working directory) is refused with one line saying so."""

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

[drives.crm]
path = "/mnt/crm"
kind = "python"
handler = "crmdrive:CRMDrive"
"""

CRM_DRIVE = """class CRMDrive:
    def stat(self, path):
        return {"type": "dir", "size": 0, "mtime": 0.0} if path == "/" else None

    def readdir(self, path):
        return []
"""


def test_programs_reach_host_and_memory_drives_not_python_drives(make_mounted, tmp_path: Path) -> None:  # noqa: ANN001
    b = make_mounted()
    source = b.root / "hostdata"  # under a directory agents may pass through, as bwrap needs
    source.mkdir()
    source.chmod(0o777)
    (source / "given.txt").write_text("from the host\n")
    (tmp_path / "komputer.toml").write_text(MANIFEST.format(source=source))
    (tmp_path / "crmdrive.py").write_text(CRM_DRIVE)
    image.apply(b.state, image.load(tmp_path), by="test")
    status, out, err = run(b, "python3 -c 'print(open(\"/mnt/data/given.txt\").read(), end=\"\")' && "
                              "python3 -c 'open(\"/mnt/data/made.txt\", \"w\").write(\"made\\n\")' && cat /mnt/data/made.txt && "
                              "cd /mnt/data && python3 -c 'import os; print(sorted(os.listdir(\".\")), os.getcwd())'")
    assert status == 0, err
    assert out == "from the host\nmade\n['given.txt', 'made.txt'] /mnt/data\n"
    agent = b.server.find_agent("alice")
    assert agent is not None and (source / "made.txt").stat().st_uid == agent.uid
    status, out, err = run(b, "echo x > /mnt/scratch/f; python3 -c 'import sys; print(open(sys.argv[1]).read(), end=\"\")' "
                              "/mnt/scratch/f && cd /mnt/scratch && python3 -c 'import os; open(\"g\", \"w\").write(\"y\\n\"); "
                              "print(sorted(os.listdir(\".\")), os.getcwd(), os.stat(\"f\").st_uid == os.getuid())' && cat g && "
                              "stat -c '%U %s' g && sh -c 'seq 3 > h' && wc -l < h")
    assert status == 0, err
    assert out == "x\n['f', 'g'] /mnt/scratch True\ny\nalice 2\n3\n"
    status, out, err = run(b, "python3 -c 'print(1)' /mnt/crm; echo $?; cd /mnt/crm && python3 -c 'print(1)'; ls")
    assert out == "126\n"
    assert err.splitlines() == ["k: line 1: python3: /mnt/crm is a python drive, which delegated programs "
                                "cannot reach"] * 2
