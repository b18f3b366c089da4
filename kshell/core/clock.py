"""The shell's time zone, as the tools that show or read local times use it, and printf's
%(fmt)T (a builtin): below both, so that neither imports the other."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from kshell.exec.interp import Interp


def zone(sh: Interp) -> ZoneInfo:
    """The exported TZ's zone (programs, and bash's printf %(..)T through localtime(3), see
    only the environment: `TZ=x; date` keeps the old zone); UTC when unset or unknown, as the
    appliance runs in UTC."""
    from zoneinfo import ZoneInfo  # here, not at start-up: few commands show a local time

    name = sh.exported_env().get("TZ") or "UTC"
    try:
        return ZoneInfo(name.lstrip(":"))
    except (ValueError, OSError, KeyError):
        return ZoneInfo("UTC")
