"""Shared fixtures for the K shell tests: the repository root on sys.path and a real bash."""

from __future__ import annotations

import shutil
import sys
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
