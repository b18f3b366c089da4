"""The shell's stages depend only downward: syntax < expand < exec < builtins < tools.

Read from the source (every import statement, those inside functions and under TYPE_CHECKING
included), so that a circle cannot come back hidden in a function body: `syntax` imports no
later stage, `expand` none of exec, builtins and tools, `exec` neither builtins nor tools. The
session (kshell/session.py) wires them together at the top, handing the interpreter its command
table.
"""

from __future__ import annotations

import ast
from pathlib import Path

KSHELL = Path(__file__).resolve().parents[2] / "kshell"
FORBIDDEN = {
    "syntax": {"expand", "exec", "builtins", "tools"},
    "expand": {"exec", "builtins", "tools"},
    "exec": {"builtins", "tools"},
}


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "kshell":  # `from kshell import tools`: the names are the modules
                found += [(node.lineno, f"kshell.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def violations() -> list[str]:
    out = []
    for stage, banned in FORBIDDEN.items():
        for path in sorted((KSHELL / stage).rglob("*.py")):
            for line, module in imported(path):
                parts = module.split(".")
                if parts[0] == "kshell" and len(parts) > 1 and parts[1] in banned:
                    out.append(f"{path.relative_to(KSHELL.parent)}:{line} imports {module}")
    return sorted(set(out))


def test_each_stage_imports_only_the_ones_below_it() -> None:
    assert violations() == []


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from kshell.tools import registry\n    import kshell.builtins.io\n"
                      "    from kshell import exec\n")
    assert imported(source) == [(2, "kshell.tools"), (3, "kshell.builtins.io"), (4, "kshell.exec")]
