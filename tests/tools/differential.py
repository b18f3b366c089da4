"""Differential runs for the K shell's tools: one script, run in the K shell on a fresh VFS and by
real bash with the real GNU tools in a temp directory seeded the same way; outputs must match.

    from differential import Case, Dir, File, Link, assert_same, run_k, run_real  # tests/tools on sys.path

    CASES = [Case("ls -l", "touch -d @0 a; ls -l a"), ...]

    @pytest.mark.parametrize("case", CASES, ids=Case.id)
    def test_ls(case): assert_same(case)

or directly: `assert_same("ls x", {"a": "text\\n", "d/": Dir(0o700)}, stdin=b"", user=1000)`.

Both sides: files under /home/agent (cwd and HOME), /tmp (sticky), LC_ALL=C, TZ=UTC, and every
seeded file and directory has the mtime 2024-01-02 03:04:05 UTC unless its spec says otherwise.
The real side's temp paths are rewritten to the K paths (/home/agent, /tmp). With `user=1000`
both sides run as uid/gid 1000 (the seeded tree owned by it) so that mode bits deny access,
as they cannot for root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kfs.kstate import KState
from kfs.vfs import VFS, Cred, PathFS
from kshell import Result, Shell

HOME = "/home/agent"
SEED_MTIME = 1704164645  # 2024-01-02 03:04:05 UTC
ENV = {"LC_ALL": "C", "TZ": "UTC", "HOME": HOME, "USER": "agent", "PATH": "/usr/local/bin:/usr/bin:/bin"}


@dataclass(frozen=True)
class File:
    """A regular file: contents, permission bits, mtime (seconds since the epoch)."""

    content: bytes | str = b""
    mode: int = 0o644
    mtime: int = SEED_MTIME


@dataclass(frozen=True)
class Dir:
    mode: int = 0o755
    mtime: int = SEED_MTIME


@dataclass(frozen=True)
class Link:
    """A symbolic link to `target` (stored verbatim)."""

    target: str


Spec = File | Dir | Link | bytes | str
Files = Mapping[str, Spec]


@dataclass(frozen=True)
class Case:
    """One differential case: a name (the test id), a script, seed files and stdin."""

    name: str
    script: str
    files: Files = field(default_factory=dict)
    stdin: bytes = b""
    user: int | None = None

    @staticmethod
    def id(case: Case) -> str:
        return case.name


def _entries(files: Files) -> list[tuple[str, File | Dir | Link]]:
    """Normalised seed entries, parents first: "d/" or Dir() is a directory, text a 0644 file."""
    out: list[tuple[str, File | Dir | Link]] = []
    for path, spec in files.items():
        if isinstance(spec, (bytes, str)):
            spec = Dir() if path.endswith("/") else File(spec)
        out.append((path.rstrip("/"), spec))
    out.sort(key=lambda e: e[0].count("/"))
    return out


def _bytes(content: bytes | str) -> bytes:
    return content.encode() if isinstance(content, str) else content


# --------------------------------------------------------------------------- the K side


def run_k(script: str, files: Files | None = None, *, stdin: bytes = b"", user: int | None = None) -> Result:
    """Run `script` in the K shell on a fresh VFS seeded with `files` under /home/agent."""
    with tempfile.TemporaryDirectory(prefix="ktools-k-") as tmp:
        state = KState(Path(tmp) / "state", create=True)
        try:
            vfs = VFS(state, by="test")
            root = PathFS(vfs, cwd="/", home=HOME, umask=0o022)
            root.mkdir(HOME, parents=True)
            root.mkdir("/tmp", 0o1777)
            root.chmod("/tmp", 0o1777)
            uid = user if user is not None else 0
            if uid:
                root.chown(HOME, uid, uid)
            ns = SEED_MTIME * 1_000_000_000
            for path, spec in _entries(files or {}):
                full = f"{HOME}/{path}"
                if isinstance(spec, Dir):
                    root.mkdir(full, parents=True)
                    root.chmod(full, spec.mode)
                elif isinstance(spec, Link):
                    root.symlink(spec.target, full)
                else:
                    root.write_file(full, _bytes(spec.content))
                    root.chmod(full, spec.mode)
                if uid:
                    root.chown(full, uid, uid, follow=False)
            # times last: creating children changes a directory's mtime
            for path, spec in _entries(files or {}):
                if not isinstance(spec, Link):
                    t = spec.mtime * 1_000_000_000
                    root.utime(f"{HOME}/{path}", t, t, follow=False)
            root.utime(HOME, ns, ns)
            fs = PathFS(vfs, cred=Cred(uid, uid), cwd=HOME, home=HOME, umask=0o022, tilde=False)
            env = dict(ENV, USER="root" if uid == 0 else "agent")
            return Shell(fs, name="bash", env=env).run(script, stdin=stdin)
        finally:
            state.close()


# --------------------------------------------------------------------------- the real side


def _demote(uid: int):
    def fn() -> None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return fn


def run_real(script: str, files: Files | None = None, *, stdin: bytes = b"", user: int | None = None) -> Result:
    """Run `script` with real bash and GNU tools in a temp dir seeded with `files`; temp paths
    in the output are rewritten to the K shell's (/home/agent, /tmp)."""
    bash = shutil.which("bash")
    if bash is None:
        raise AssertionError("install bash")
    base = Path(tempfile.mkdtemp(prefix="ktools-"))
    try:
        base.chmod(0o755)
        home = base / "home" / "agent"
        tmpdir = base / "tmp"
        home.mkdir(parents=True)
        tmpdir.mkdir()
        tmpdir.chmod(0o1777)
        uid = user if user is not None else 0
        for path, spec in _entries(files or {}):
            target = home / path
            if isinstance(spec, Dir):
                target.mkdir(parents=True, exist_ok=True)
                target.chmod(spec.mode)
            elif isinstance(spec, Link):
                target.symlink_to(spec.target)
            else:
                target.write_bytes(_bytes(spec.content))
                target.chmod(spec.mode)
            if uid:
                os.lchown(target, uid, uid)
        for path, spec in _entries(files or {}):
            if not isinstance(spec, Link):
                os.utime(home / path, (spec.mtime, spec.mtime), follow_symlinks=False)
        os.utime(home, (SEED_MTIME, SEED_MTIME))
        if uid:
            os.chown(home, uid, uid)
        env = dict(ENV, HOME=str(home), TMPDIR=str(tmpdir), USER="root" if uid == 0 else "agent")
        proc = subprocess.run(
            [bash, "-c", script, "bash"],
            cwd=home,
            input=stdin,
            capture_output=True,
            env=env,
            timeout=30,
            preexec_fn=_demote(uid) if uid else None,
        )

        def norm(data: bytes) -> bytes:
            return data.replace(str(home).encode(), HOME.encode()).replace(str(tmpdir).encode(), b"/tmp")

        return Result(norm(proc.stdout), norm(proc.stderr), proc.returncode)
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def assert_same(case: Case | str, files: Files | None = None, *, stdin: bytes = b"", user: int | None = None) -> Result:
    """Run both sides and assert stdout, stderr and exit status are equal; returns K's result."""
    if isinstance(case, str):
        case = Case(case, case, files or {}, stdin, user)
    k = run_k(case.script, case.files, stdin=case.stdin, user=case.user)
    real = run_real(case.script, case.files, stdin=case.stdin, user=case.user)

    def show(r: Result) -> tuple[str, str, int]:
        return r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace"), r.status

    assert show(k) == show(real), f"script: {case.script}"
    return k


def require_tools(*names: str) -> None:
    """Fail (never skip) when a real tool the comparison needs is missing."""
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        raise AssertionError(f"install {' '.join(missing)} (apt-get install -y {' '.join(missing)})")
