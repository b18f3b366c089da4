"""What the zygote loads before it forks workers: the shell and its tools, never the client
libraries (the SDK and the sandbox adapters import the server and asyncssh, and every
computer's first command waits for the zygote's start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_preload_leaves_out_the_server_and_the_client_libraries() -> None:
    script = ("import json, sys\nfrom kshell.worker.zygote import preload\npreload()\n"
              "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                         capture_output=True, text=True, timeout=300, check=True).stdout
    loaded = json.loads(out.splitlines()[-1])
    assert "kshell.builtins" in loaded and "kshell.tools.awk" in loaded  # the shell's tools are loaded
    unwanted = [m for m in loaded if m.startswith(("kshell.server", "kshell.sdk", "kshell.compat", "kshell.cli"))]
    assert unwanted == []
