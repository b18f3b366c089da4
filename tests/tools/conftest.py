"""Tool tests: the repository root on sys.path (for kfs and kshell) and tests/tools (for the
`differential` harness: `from differential import Case, assert_same, ...`)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE.parents[1], HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
