"""Support for the interpreter tests: a K shell on a fresh VFS, and the same script under real
bash in a temp directory seeded with the same files, for side-by-side comparison."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from kfs.kstate import KState
from kfs.vfs import ROOT, VFS, PathFS
from kshell import Limits, Result, Shell


class KWorld:
    """A fresh state with a work directory `/w` (cwd and HOME) and `/tmp`."""

    def __init__(self, root: Path) -> None:
        self.state = KState(root / "state", create=True)
        vfs = VFS(self.state, by="test")
        base = PathFS(vfs, cred=ROOT, cwd="/", home="/w")
        base.mkdir("/w", parents=True)
        base.mkdir("/tmp", 0o1777, parents=True)
        self.fs = PathFS(vfs, cred=ROOT, cwd="/w", home="/w")

    def shell(self, name: str = "bash", limits: Limits | None = None) -> Shell:
        return Shell(self.fs, name=name, env={"HOME": "/w", "LC_ALL": "C"}, limits=limits)

    def seed(self, files: dict[str, bytes | str]) -> None:
        for path, data in files.items():
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            if parent:
                self.fs.mkdir(parent, parents=True)
            self.fs.write_file(path, data)

    def close(self) -> None:
        self.state.close()


def run_k(script: str, files: dict[str, bytes | str] | None = None, *, stdin: bytes = b"",
          limits: Limits | None = None) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        world = KWorld(Path(tmp))
        try:
            if files:
                world.seed(files)
            return world.shell(limits=limits).run(script, stdin=stdin)
        finally:
            world.close()


def run_bash(bash: str, script: str, files: dict[str, bytes | str] | None = None, *,
             stdin: bytes = b"") -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        work.mkdir()
        for path, data in (files or {}).items():
            target = work / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.encode() if isinstance(data, str) else data)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "LC_ALL": "C"}
        proc = subprocess.run([bash, "-c", script, "bash"], cwd=work, input=stdin, capture_output=True,
                              env=env, timeout=30)
        out = proc.stdout.replace(str(work).encode(), b"/w")
        err = proc.stderr.replace(str(work).encode(), b"/w")
        return Result(out, err, proc.returncode)


def assert_same(bash: str, script: str, files: dict[str, bytes | str] | None = None, *,
                stdin: bytes = b"") -> Result:
    k = run_k(script, files, stdin=stdin)
    b = run_bash(bash, script, files, stdin=stdin)
    assert (k.stdout.decode(errors="replace"), k.stderr.decode(errors="replace"), k.status) == (
        b.stdout.decode(errors="replace"), b.stderr.decode(errors="replace"), b.status), script
    return k
