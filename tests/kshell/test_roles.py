"""Roles and owners, read from the source as tests/kshell/test_layers.py reads the stages (every
import, those inside functions and under TYPE_CHECKING included, so that no back-reference hides).

- The server by role (docs/architecture.md): the asyncssh callback class (auth), the
  sessions-and-leases service (leases), the audit writer (audit), the session channels
  (session, api), the terminals (terminals, attach) and the crons (crons) each import only the
  server modules they use, and none of them `kshell.server.app`: the wiring place (KServer)
  hands each what it needs. Only the wiring place itself, the multi-computer host (computers,
  whose HostedServer is a KServer) and the package's `__init__` import it.
- One owner per KState key family: a key prefix literal (`b"agentset/"`) appears in kfs and
  kshell only in the module that owns the family, and no owner imports asyncssh (so that the
  shell's tools read through it without loading the SSH side).
- kfs imports nothing of kshell.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from test_layers import imported

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "kshell" / "server"

# role module -> the kshell.server modules it may import
ROLE_IMPORTS = {
    "auth": {"config", "limits"},
    "audit": set(),
    "leases": {"auth", "limits"},
    "crons": {"workers"},
    "session": {"auth", "config", "leases", "prompt", "terminals", "workers"},
    "api": {"auth", "session"},
    "terminals": {"config", "leases", "prompt", "workers"},
    "attach": {"terminals"},
}
MAY_IMPORT_APP = {"app", "computers", "__init__"}

# key prefix -> the module (under the repository) that owns the family
KEY_OWNERS = {
    b"agent/": "kfs/accounts.py",
    b"agentset/": "kfs/accounts.py",
    b"authorized/": "kfs/accounts.py",
    b"approval/": "kfs/runtime/approvals.py",
    b"approval-open/": "kfs/runtime/approvals.py",
    b"conv-open/": "kfs/runtime/conversations.py",
    b"conv-run/": "kfs/runtime/conversations.py",
    b"cron/": "kfs/runtime/crons.py",
    b"filequota/": "kfs/kstate/quota.py",
    b"fileuse/": "kfs/kstate/quota.py",
    b"hostuse/": "kfs/kstate/quota.py",
    b"quota/": "kfs/kstate/quota.py",
    b"usage/": "kfs/kstate/quota.py",
    b"image/": "kfs/runtime/image.py",
    b"image-file/": "kfs/runtime/image.py",
    b"policy/": "kfs/runtime/rules.py",
    b"secret/": "kfs/runtime/secrets.py",
    b"runs/": "kfs/runtime/runs.py",
    b"runs-agent/": "kfs/runtime/runs.py",
}
KEY_PREFIX = re.compile(rb"[a-z][a-z_-]*/\Z")  # a family's key prefix: a word and a slash


def server_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module under kshell.server) of each import of a server module in `path`."""
    found = []
    for line, module in imported(path):
        parts = module.split(".")
        if parts[:2] == ["kshell", "server"] and len(parts) > 2:
            found.append((line, parts[2]))
    return found


def role_violations() -> list[str]:
    out = []
    for path in sorted(SERVER.glob("*.py")):
        role = path.stem
        for line, module in server_imports(path):
            if module == role:
                continue
            where = f"{path.relative_to(ROOT)}:{line} imports kshell.server.{module}"
            if module == "app" and role not in MAY_IMPORT_APP:
                out.append(where + " (KServer: the role should receive what it uses)")
            elif role in ROLE_IMPORTS and module not in ROLE_IMPORTS[role] and module != "app":
                out.append(where + f" (a {role} role may import {sorted(ROLE_IMPORTS[role])})")
    return sorted(set(out))


def key_prefixes(path: Path) -> list[tuple[int, bytes]]:
    """(line, literal) of every bytes literal in `path` shaped as a key prefix."""
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Constant) and isinstance(node.value, bytes) and KEY_PREFIX.match(node.value)]


def owner_violations() -> list[str]:
    out = []
    for package in ("kfs", "kshell"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, prefix in key_prefixes(path):
                owner = KEY_OWNERS.get(prefix)
                if owner is None:
                    out.append(f"{rel}:{line} key prefix {prefix!r} has no owner in KEY_OWNERS")
                elif owner != rel:
                    out.append(f"{rel}:{line} key prefix {prefix!r} is {owner}'s")
    for owner in sorted(set(KEY_OWNERS.values())):
        if not (ROOT / owner).exists():
            out.append(f"{owner} is missing: it owns {sorted(p for p, o in KEY_OWNERS.items() if o == owner)}")
            continue
        for line, module in imported(ROOT / owner):
            if module.split(".")[0] == "asyncssh":
                out.append(f"{owner}:{line} imports asyncssh (an owner of KState keys must not)")
    return sorted(set(out))


def kfs_violations() -> list[str]:
    return sorted({f"{path.relative_to(ROOT)}:{line} imports {module}"
                   for path in (ROOT / "kfs").rglob("*.py")
                   for line, module in imported(path) if module.split(".")[0] == "kshell"})


def test_each_server_role_imports_only_what_it_uses_and_never_kserver() -> None:
    assert role_violations() == []


def test_each_key_family_has_one_owner_that_imports_no_asyncssh() -> None:
    assert owner_violations() == []


def test_kfs_imports_nothing_of_kshell() -> None:
    assert kfs_violations() == []


def test_the_checks_see_a_hidden_back_reference_and_a_second_owner(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kshell.server.app import KServer\n"
                      "def f(txn):\n    return txn.get('keys', b'agentset/' + b'x')\n")
    assert server_imports(source) == [(3, "app")]
    assert key_prefixes(source) == [(5, b"agentset/")]
