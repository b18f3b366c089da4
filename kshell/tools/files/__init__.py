"""File and directory tools."""

from __future__ import annotations

from kshell.builtins import Builtin

TOOLS: dict[str, Builtin] = {}
