"""The packages depend only downward, and nothing imports in a circle at run time.

Read from the source with `ast`, over the whole of kshell and kfs: every import statement counts,
those inside function bodies included (a circle held apart by an import inside a function is
still a circle: it only waits for the first call), except those under `if TYPE_CHECKING:` (never
run). `from a.b import c` reaches a.b.c when that is a module, and every package on the way
whose __init__ runs (a.b), unless the importer is inside it already.

- no run-time cycle anywhere in the graph (Oils and asyncssh have none);
- the shell's stages in order: kfs < core (errors, variables, limits, printf, clock) < syntax <
  expand < exec < builtins < tools < session. A stage imports only itself and earlier stages (and
  kfs); kfs imports nothing of kshell. kshell/session.py is the one wiring place: it builds the
  interpreter, hands it the command tables (builtins, tools) and the program runner, and is the
  only stage module that sees them all;
- builtins and tools do not import each other's private (`_name`) names: what both use lives in
  a module of its own (kshell.core.printf, kshell.core.clock);
- tools, builtins and the image's commands name `ToolContext` (kshell.core.context), not the
  interpreter, except the few listed that need it (a subshell, the variables, the traps).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("kshell", "kfs")
# the shell's stages, lowest first; a module of one imports none of a later one
STAGES = (
    ("kfs",),
    ("kshell.core", "kshell.limits"),
    ("kshell.syntax",),
    ("kshell.expand",),
    ("kshell.exec",),
    ("kshell.builtins",),
    ("kshell.tools",),
    ("kshell.session",),
)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the packages, by dotted name."""
    return {module_name(p, root): p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class Import:
    """One imported name: `module` (absolute), the `name` taken from it (None for `import m`),
    its line, and whether it runs inside a function body."""

    __slots__ = ("module", "name", "line", "in_function")

    def __init__(self, module: str, name: str | None, line: int, in_function: bool) -> None:
        self.module, self.name, self.line, self.in_function = module, name, line, in_function


def imports(module: str, path: Path, *, type_checking: bool = False) -> Iterator[Import]:
    """The imports of a module that run (TYPE_CHECKING blocks left out, unless `type_checking`),
    at any depth."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]

    def visit(nodes: list[ast.stmt] | list[ast.AST], in_function: bool) -> Iterator[Import]:
        for node in nodes:
            if not type_checking and isinstance(node, ast.If) and _type_checking(node.test):
                yield from visit(node.orelse, in_function)
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(alias.name, None, node.lineno, in_function)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    yield Import(target, alias.name, node.lineno, in_function)
            inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from visit(list(ast.iter_child_nodes(node)), inner)

    yield from visit(ast.parse(path.read_text(), str(path)).body, False)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, type-only ones included (what a module names,
    for the checks of who may know whom: tests/kshell/test_roles.py); `from kshell import x`
    names kshell.x."""
    name = module_name(path, ROOT) if path.is_relative_to(ROOT) else path.stem
    return [(imp.line, f"kshell.{imp.name}" if imp.module == "kshell" and imp.name else imp.module)
            for imp in imports(name, path, type_checking=True)]


def reached(importer: str, imp: Import, known: dict[str, Path]) -> list[str]:
    """The modules of the graph an import runs: the module, a submodule named by `from`, and
    the packages on the way that the importer is not already inside."""
    out = []
    parts = imp.module.split(".")
    mine = importer.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name in known and mine[:i] != parts[:i]:
            out.append(name)
    if imp.name is not None and f"{imp.module}.{imp.name}" in known:
        out.append(f"{imp.module}.{imp.name}")
    return [name for name in out if name != importer]


def graph(root: Path = ROOT) -> dict[str, dict[str, tuple[int, bool]]]:
    """importer -> {imported: (first line, inside a function)} over the packages."""
    known = modules(root)
    edges: dict[str, dict[str, tuple[int, bool]]] = {name: {} for name in known}
    for name, path in known.items():
        for imp in imports(name, path):
            if imp.module.split(".")[0] in PACKAGES:
                for target in reached(name, imp, known):
                    edges[name].setdefault(target, (imp.line, imp.in_function))
    return edges


def cycles(edges: dict[str, dict[str, tuple[int, bool]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def describe(component: list[str], edges: dict[str, dict[str, tuple[int, bool]]]) -> str:
    members = set(component)
    links = [f"{a}:{line} -> {b}{' (in a function)' if inner else ''}"
             for a in component for b, (line, inner) in sorted(edges[a].items()) if b in members]
    return "; ".join(links)


def stage_of(module: str) -> int | None:
    for rank, prefixes in enumerate(STAGES):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return None


def stage_violations(edges: dict[str, dict[str, tuple[int, bool]]]) -> list[str]:
    """An import of a later stage, or (from a stage) of a kshell package that is no stage."""
    out = []
    for importer, targets in edges.items():
        rank = stage_of(importer)
        if rank is None:
            continue
        for target, (line, _) in targets.items():
            theirs = stage_of(target)
            if theirs is None or theirs > rank:
                out.append(f"{importer}:{line} imports {target}")
    return sorted(out)


def private_imports(root: Path = ROOT) -> list[str]:
    """`from kshell.builtins... import _x` in a tool, or `from kshell.tools... import _x` in a
    builtin: a private name is its module's own business."""
    out = []
    other = {"kshell.builtins": "kshell.tools", "kshell.tools": "kshell.builtins"}
    for name, path in modules(root).items():
        mine = next((p for p in other if name == p or name.startswith(p + ".")), None)
        if mine is None:
            continue
        for imp in imports(name, path):
            theirs = other[mine]
            if (imp.module == theirs or imp.module.startswith(theirs + ".")) and imp.name \
                    and imp.name.startswith("_"):
                out.append(f"{name}:{imp.line} imports {imp.module}.{imp.name}")
    return sorted(out)


# Not yet cut, and named so that no other circle can join them: the compat clients mirror
# upstream packages whose sync module exports its async twin (and e2b's git helper) beside it.
KNOWN_CYCLES = [
    ["kshell.compat.daytona", "kshell.compat.daytona_async"],
    ["kshell.compat.e2b", "kshell.compat.e2b_async", "kshell.compat.e2b_git"],
]


# the commands that need the interpreter itself, not only the ToolContext: a subshell (fork),
# the variables and options, the traps, the directory stack
NAMES_INTERP = {
    "kshell.builtins.aliases", "kshell.builtins.bind", "kshell.builtins.completion", "kshell.builtins.dirstack",
    "kshell.builtins.fc", "kshell.builtins.flow", "kshell.builtins.io", "kshell.builtins.mapfile",
    "kshell.builtins.shell", "kshell.builtins.ulimit", "kshell.builtins.vars", "kshell.image.commands",
    "kshell.tools.awk.runtime", "kshell.tools.files.find", "kshell.tools.files.flock",
    "kshell.tools.system.env", "kshell.tools.system.nice", "kshell.tools.text.small", "kshell.tools.text.xargs",
}


def interp_names(root: Path = ROOT) -> set[str]:
    """The modules of tools, builtins and the image's runtime that import `Interp` (type-only
    imports included: naming it is the dependency this check is about)."""
    out = set()
    for name, path in modules(root).items():
        if name.split(".")[:2] in (["kshell", "tools"], ["kshell", "builtins"], ["kshell", "image"]):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module == "kshell.exec.interp" \
                        and any(alias.name == "Interp" for alias in node.names):
                    out.add(name)
    return out


def test_tools_and_builtins_name_the_tool_context_not_the_interpreter() -> None:
    assert interp_names() <= NAMES_INTERP


def test_no_module_imports_itself_back_at_run_time() -> None:
    edges = graph()
    assert [describe(c, edges) for c in cycles(edges) if c not in KNOWN_CYCLES] == []


def test_each_stage_imports_only_the_ones_below_it() -> None:
    assert stage_violations(graph()) == []


def test_builtins_and_tools_share_no_private_names() -> None:
    assert private_imports() == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_check_sees_imports_inside_functions_but_not_type_checking_ones(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "kshell/__init__.py": "",
        "kshell/exec/__init__.py": "",
        "kshell/exec/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kshell.tools import t\n"
                            "def f():\n    from kshell.exec import b\n",
        "kshell/exec/b.py": "import kshell.exec.a\n",
        "kshell/tools/__init__.py": "",
        "kshell/tools/t.py": "from kshell.builtins.io import _pad\n",
        "kshell/builtins/__init__.py": "",
        "kshell/tools/clock.py": "",
        "kshell/builtins/io.py": "from kshell.tools import clock\n",
        "kfs/__init__.py": "",
    })
    edges = graph(root)
    assert edges["kshell.exec.a"] == {"kshell.exec.b": (5, True)}  # no kshell.tools: type only
    assert cycles(edges) == [["kshell.exec.a", "kshell.exec.b"]]
    assert stage_violations(edges) == ["kshell.builtins.io:1 imports kshell.tools",
                                       "kshell.builtins.io:1 imports kshell.tools.clock"]
    assert private_imports(root) == ["kshell.tools.t:1 imports kshell.builtins.io._pad"]
