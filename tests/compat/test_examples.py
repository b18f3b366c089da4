"""examples/e2b_agent.py and examples/daytona_agent.py: agent scripts written for E2B's and
Daytona's SDKs run on K with nothing changed but their import line, which names the same
things the upstream package exports."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def example(name: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("name", "upstream"), [("e2b_agent.py", "e2b"), ("daytona_agent.py", "daytona")])
def test_only_the_import_line_names_k(name: str, upstream: str) -> None:
    source = (ROOT / "examples" / name).read_text()
    tree = ast.parse(source)
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert len(imports) == 1 and imports[0].module == f"kshell.compat.{upstream}"
    names = [alias.name for alias in imports[0].names]
    package = importlib.import_module(upstream)  # the real SDK exports every name the script takes
    assert all(hasattr(package, n) for n in names), names
    rest = source.replace(ast.get_source_segment(source, imports[0]) or "", "")
    assert "kshell" not in rest.split('"""', 2)[-1] and "komputer" not in rest.split('"""', 2)[-1]


def test_e2b_agent() -> None:
    assert example("e2b_agent.py").splitlines() == [
        "write_file: wrote /home/user/project/scores.csv",
        "run: ada,91 | bob,85",
        "run: 84.6667",
        "run: exit 1: cat: project/missing.txt: No such file or directory",
        "list: scores.csv",
        "job exit: 0 streamed: ['tick 1', 'tick 2']",
    ]


def test_daytona_agent() -> None:
    assert example("daytona_agent.py").splitlines() == [
        "defs: 1",
        "matches: [('calc.py', 2)]",
        "now: return b + a",
        "session: 0 test in /home/user/app",
        "failed: 2 ls: cannot access 'nowhere': No such file or directory",
    ]
