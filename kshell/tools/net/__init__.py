"""Network tools: curl and wget on the shell's virtual hosts (`hosts.HostTable`), and on real
HTTP when the shell allows it."""

from __future__ import annotations

from kshell.builtins import Builtin
from kshell.tools.net import curl

TOOLS: dict[str, Builtin] = {
    "curl": curl.curl,
    "wget": curl.wget,
}
