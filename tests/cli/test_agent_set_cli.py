"""`komputer agent set` completes an agent's settings with the server's komputer.toml: an agent's
`--remote ssh` takes `[delegate]`'s ssh_host and ssh_root, and is refused, saying where to set
them, only when the server has none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kfs.kstate import KState
from kshell.delegate.config import agent_overrides, for_agent
from kshell.server.config import load_config

ROOT = Path(__file__).resolve().parents[2]


def komputer(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args, "--state", str(state)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))


def test_an_agents_ssh_remote_takes_the_servers_host_and_root(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert komputer(state, "agent", "add", "carol").returncode == 0
    refused = komputer(state, "agent", "set", "carol", "--remote", "ssh")
    assert refused.returncode == 1
    assert "needs ssh_host (user@host) and ssh_root (an absolute path) in [delegate] of komputer.toml" in refused.stderr
    (state / "komputer.toml").write_text('[delegate]\nssh_host = "runner@build"\nssh_root = "/srv/k"\n')
    done = komputer(state, "agent", "set", "carol", "--remote", "ssh")
    assert done.returncode == 0, done.stderr
    other = tmp_path / "other.toml"  # --config names another file, as for `komputer serve`
    other.write_text('[delegate]\nssh_host = "x@y"\nssh_root = "/k"\n')
    assert komputer(state, "agent", "set", "carol", "--network", "on", "--config", str(other)).returncode == 0
    with KState(state) as ks:
        settings = for_agent(load_config(state / "komputer.toml").delegate, agent_overrides(ks, "carol"))
    assert (settings.remote, settings.ssh_host, settings.ssh_root, settings.network) == ("ssh", "runner@build",
                                                                                         "/srv/k", True)
