"""What delegation may do: the `[delegate]` section of komputer.toml and each agent's own
overrides (`komputer agent set NAME --remote ... --network ...`), kept in KState so that every
server and worker of one state agrees on them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from kfs.accounts import agent_settings, change_agent_settings
from kfs.kstate import KState
from kfs.vfs.policy import MODES
from kshell.worker.limits import section_settings

REMOTES = ("local", "ssh", "none")


@dataclass(frozen=True, slots=True)
class DelegateConfig:
    """How commands K does not have are run. `local`: under bubblewrap on this host, with the
    agent's files seen through the FUSE mount of the state; `ssh`: by the OpenSSH client on
    `ssh_host`, where K's root is visible at `ssh_root` (no sandbox: that host's own rules
    apply); `none`: not at all (command not found)."""

    remote: str = "local"
    network: bool = False  # delegated programs reach the network (else they get only loopback)
    read_only: tuple[str, ...] = ()  # more host paths shown read-only to local programs
    mount: str = ""  # where this state is mounted; "" finds it in /proc/self/mountinfo
    ssh_host: str = ""  # user@host for the ssh remote
    ssh_root: str = ""  # the path on ssh_host where K's root directory is visible
    ssh_options: tuple[str, ...] = ()  # extra ssh client options (-o Name=value ...)

    def __post_init__(self) -> None:
        if self.remote not in REMOTES:
            raise ValueError(f"remote {self.remote!r}: expected one of {', '.join(REMOTES)}")
        for path in self.read_only:
            if not path.startswith("/"):
                raise ValueError(f"read_only {path!r}: host paths must be absolute")
        if self.remote == "ssh" and not (self.ssh_host and self.ssh_root.startswith("/")):
            raise ValueError("remote = \"ssh\" needs ssh_host (user@host) and ssh_root (an absolute path) "
                             "in [delegate] of komputer.toml")

    @classmethod
    def from_toml(cls, data: dict[str, Any], where: str) -> DelegateConfig:
        kwargs = section_settings(cls, data, where, lambda name, value, at: tuple(value) if isinstance(value, list)
                                  else value)
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from None

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> DelegateConfig:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


def agent_overrides(state: KState, agent: str) -> dict[str, Any]:
    """The agent's own settings (remote, network; mode, scope, plan), {} when it has none."""
    return agent_settings(state, agent)


def set_agent_overrides(state: KState, agent: str, base: DelegateConfig | None = None,
                        **changes: Any) -> dict[str, Any]:
    """Change some of an agent's settings in one transaction; None leaves a setting as it is.
    `base`: the server's [delegate], which the agent's settings override (an agent's `ssh`
    remote takes the server's ssh_host and ssh_root). The settings' keys are kfs.accounts'."""

    def check(current: dict[str, Any]) -> None:
        for_agent(base or DelegateConfig(), current)  # refuses a bad value before it is stored
        if current.get("mode", "full") not in MODES:
            raise ValueError(f"mode {current['mode']!r}: expected one of {', '.join(MODES)}")

    return change_agent_settings(state, agent, changes, check)


def _delegation_part(settings: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(DelegateConfig)}
    return {k: v for k, v in settings.items() if k in names}


def for_agent(config: DelegateConfig, overrides: dict[str, Any]) -> DelegateConfig:
    part = _delegation_part(overrides)
    return replace(config, **part) if part else config
