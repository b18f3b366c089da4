"""Run pjdfstest (the POSIX suite filesystem authors use) against a directory, or a fresh mount.

As a script:  python tests/fuse/pjdfstest_run.py [--pjdfstest DIR] TARGET_DIR [GROUP...]
prints "pjdfstest: N files, M tests, F failed" (TARGET_DIR must be on the filesystem under
test; run as root; a kfs mount needs `-o allow_other`, since the tests switch to other uids).
DIR is a built copy (default $PJDFSTEST): build it in /tmp, never here:

    git clone https://github.com/pjd/pjdfstest /tmp/pjdfstest && cd /tmp/pjdfstest &&
    autoreconf -ifs && ./configure && make pjdfstest

As a pytest module (only when named: `pytest tests/fuse/pjdfstest_run.py`, because CI has no
fetched copy; tests/fuse/test_posix_groups.py carries our own cases for each group instead)
it runs the groups below on a fresh kfs mount and fails with "build pjdfstest: ..." when
$PJDFSTEST does not point at a build.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

GROUPS = ("chmod", "link", "mkdir", "open", "rename", "rmdir", "symlink", "truncate", "unlink")
BUILD_HINT = (
    "build pjdfstest: git clone https://github.com/pjd/pjdfstest /tmp/pjdfstest && cd /tmp/pjdfstest && "
    "autoreconf -ifs && ./configure && make pjdfstest; then set PJDFSTEST=/tmp/pjdfstest"
)


@dataclass
class Result:
    files: int = 0
    tests: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    output: str = ""

    def line(self) -> str:
        return f"pjdfstest: {self.files} files, {self.tests} tests, {self.failed} failed"


def find_build(path: str | None = None) -> Path:
    """The pjdfstest checkout with its built binary, or ValueError saying how to build it."""
    root = Path(path or os.environ.get("PJDFSTEST", ""))
    if not str(root) or not (root / "pjdfstest").is_file() or not (root / "tests").is_dir():
        raise ValueError(BUILD_HINT)
    return root


def work_dir(parent: Path) -> Path:
    """A fresh directory to run in, open to the other users the tests switch to."""
    work = Path(tempfile.mkdtemp(prefix="pjdfstest.", dir=parent))
    work.chmod(0o755)
    return work


def run(build: Path, target: Path, groups: tuple[str, ...] | list[str] = ()) -> Result:
    """Run `prove -r` on the groups (all of them when empty) with cwd `target`."""
    suites = [str(build / "tests" / g) for g in groups] if groups else [str(build / "tests")]
    proc = subprocess.run(["prove", "-r", *suites], cwd=target, capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    result = Result(output=out)
    summary = re.search(r"Files=(\d+), Tests=(\d+)", out)
    if summary is None:
        raise RuntimeError(f"prove printed no summary:\n{out[-2000:]}")
    result.files, result.tests = int(summary[1]), int(summary[2])
    for name, count in re.findall(r"^(\S+\.t)\s+\(Wstat: \d+ Tests: \d+ Failed: (\d+)\)", out, re.M):
        if int(count):
            result.failed += int(count)
            result.failures.append(f"{name}: {count} failed")
    for name in re.findall(r"^(\S+\.t)\s+\(Wstat: [1-9]\d*", out, re.M):  # died, not only failed
        if not any(f.startswith(name) for f in result.failures):
            result.failed += 1
            result.failures.append(f"{name}: exited abnormally")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run pjdfstest in a directory and print a one-line summary")
    parser.add_argument("--pjdfstest", metavar="DIR", help="a built pjdfstest checkout (default: $PJDFSTEST)")
    parser.add_argument("target", type=Path, help="a directory on the filesystem under test")
    parser.add_argument("groups", nargs="*", help="test groups (chmod, link, ...); default: all")
    args = parser.parse_args(argv)
    try:
        build = find_build(args.pjdfstest)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    work = work_dir(args.target)
    result = run(build, work, args.groups)
    for failure in result.failures:
        print(f"  {failure}")
    print(result.line())
    return 1 if result.failed else 0


def test_pjdfstest_groups_pass_on_a_kfs_mount(kfs_mount) -> None:  # type: ignore[no-untyped-def]
    import pytest

    try:
        build = find_build()
    except ValueError as e:
        pytest.fail(str(e))
    result = run(build, work_dir(kfs_mount.path), GROUPS)
    print(result.line())
    assert result.failed == 0, "\n".join(result.failures) + "\n" + result.output[-3000:]


if __name__ == "__main__":
    sys.exit(main())
