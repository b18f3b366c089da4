"""Shared fixtures for the K shell tests: the repository root on sys.path, a real bash, and a
fresh KState world (`world`) for tests that make shells on one VFS."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def bash() -> str:
    """Path of bash: the differential tests need it, so its absence is a failure, not a skip."""
    path = shutil.which("bash")
    if path is None:
        pytest.fail("bash not found: install bash (5.2) to run the K shell differential tests")
    return path


@pytest.fixture
def world() -> Iterator:
    """A fresh KState + VFS in a temp dir (tests.kshell.interp_support.KWorld), closed afterwards."""
    from tests.kshell.interp_support import KWorld

    with tempfile.TemporaryDirectory() as tmp:
        w = KWorld(Path(tmp))
        try:
            yield w
        finally:
            w.close()
