"""The SSH server's settings: one TOML file (`komputer.toml`, section `[ssh]`), documented defaults.

Each field mirrors the sshd option it copies; `systemd/komputer.toml` is the annotated sample.
A missing file means every default; an unknown key is an error (a typo must not pass silently).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from kshell.delegate.config import DelegateConfig
from kshell.worker.limits import WorkerLimits


@dataclass(frozen=True, slots=True)
class Penalties:
    """OpenSSH 9.8 PerSourcePenalties: seconds added to a source's penalty per event.

    A source is refused once its accumulated penalty reaches `min`; a penalty never exceeds
    `max`. Sources are whole IPv4 addresses and IPv6 /64 networks. `exempt` networks are never
    penalised, and nothing is penalised per user or key (limits.SourcePenalties says why).
    """

    enabled: bool = True
    authfail: float = 5.0  # connection ended after failed authentication
    noauth: float = 1.0  # connection ended without trying to authenticate
    grace_exceeded: float = 10.0  # LoginGraceTime ran out
    crash: float = 90.0  # the connection made the server fail
    min: float = 15.0
    max: float = 600.0
    # networks never penalised: loopback, which every local agent and container shares (a
    # penalty there would be one any local client could impose on every agent)
    exempt: tuple[str, ...] = ("127.0.0.0/8", "::1/128")


@dataclass(frozen=True, slots=True)
class ComputersConfig:
    """The `[computers]` section: where the computers live and how many stay open."""

    root: str = ""  # "" : `komputer serve` serves its one --state, as before
    max_warm: int = 100  # computers kept open at once (the least recently used idle one closes)
    idle_for: float = 300.0  # a computer with no connection this long is closed

    @staticmethod
    def from_toml(data: dict[str, Any], where: str) -> ComputersConfig:
        known = {"root", "max_warm", "idle_for"}
        for key in data:
            if key.replace("-", "_") not in known:
                raise ValueError(f"{where}: unknown setting {key!r}")
        config = ComputersConfig(**{k.replace("-", "_"): v for k, v in data.items()})
        if config.max_warm < 1:
            raise ValueError(f"{where}: max_warm: expected 1 or more")
        return config


@dataclass(frozen=True, slots=True)
class FleetConfig:
    """The `[fleet]` section: the etcd cluster the hosts of one fleet share (kshell.server.fleet)."""

    etcd: tuple[str, ...] = ()  # the members' client endpoints, HOST:PORT; () : no fleet
    name: str = ""  # this host's name in the fleet ("" : the listen address)
    ttl: int = 3  # seconds of the host's lease: a host silent this long has left
    prefix: str = "/k/"  # the fleet's keys on etcd

    @staticmethod
    def from_toml(data: dict[str, Any], where: str) -> FleetConfig:
        known = {"etcd", "name", "ttl", "prefix"}
        for key in data:
            if key not in known:
                raise ValueError(f"{where}: unknown setting {key!r}")
        config = FleetConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})
        if config.ttl < 1:
            raise ValueError(f"{where}: ttl: expected 1 or more (seconds)")
        return config


@dataclass(frozen=True, slots=True)
class ServerConfig:
    hostname: str = ""  # $HOSTNAME, uname -n, hostname and the prompt; "" means "komputer" (DEFAULT_HOST)
    accept_env: tuple[str, ...] = ("LANG", "LC_*", "K_*")  # AcceptEnv patterns
    login_grace_time: float = 120.0  # LoginGraceTime: seconds to authenticate
    max_auth_tries: int = 6  # MaxAuthTries: failed attempts per connection
    max_startups: str = "10:30:100"  # MaxStartups start:rate:full (unauthenticated connections)
    max_sessions: int = 10  # MaxSessions: open sessions (channels) per connection
    max_sessions_per_agent: int = 256  # across all connections of one agent
    session_starts_per_agent: int = 8  # one agent's sessions starting at once (lease, worker); the rest queue
    idle_timeout: float = 0.0  # close a connection with no input or output for this long (0: never)
    keepalive_interval: float = 15.0  # ClientAliveInterval (0: off)
    keepalive_count_max: int = 3  # ClientAliveCountMax
    lease_ttl: float = 30.0  # a session lease lapses this long after its last renewal
    events_keep: int = 1_000_000  # the newest events kept, shared out by agent (older: deleted every minute; 0: all)
    events_keep_per_agent: int = 100_000  # each agent's newest events kept (older: deleted every minute; 0: all)
    events_max_days: float = 0.0  # events older than this are deleted too (0: kept whatever their age)
    procs_keep_ended: int = 1000  # each agent's most recently ended process rows kept (`ps -a`; 0: all)
    receipts_keep: int = 0  # the newest receipt rows kept (older: deleted every minute; 0: all)
    receipts_max_days: float = 0.0  # receipt rows older than this are deleted too (0: kept whatever their age)
    mode: str = "full"  # every agent's sessions at least this restricted (readonly, plan, limited, full)
    approval_timeout: float = 0.0  # an approval nobody decides within this many seconds is rejected (0: waits)
    approvals_max_pending: int = 16  # an agent's approvals pending at once; one more is refused (0: no bound)
    forks_max_per_agent: int = 16  # forks of one agent at once, however made; one more refused (0: no bound)
    # Ciphers, in the server's order (the client's order decides among them). chacha20-poly1305
    # is left out by default: asyncssh sets up two cipher contexts per packet for it, five times
    # the cost of AES-GCM per small packet and three times per 32 KiB one; clients then choose
    # AES (CTR or GCM, hardware-accelerated). Add "chacha20-poly1305@openssh.com" for a client
    # that speaks nothing else.
    ciphers: tuple[str, ...] = (
        "aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr",
    )
    coalesce_writes: bool = True  # send the packets of one event-loop turn in one write (app.py)
    penalties: Penalties = field(default_factory=Penalties)
    limits: WorkerLimits = field(default_factory=WorkerLimits)  # the `[limits]` section, not `[ssh]`
    delegate: DelegateConfig = field(default_factory=DelegateConfig)  # the `[delegate]` section
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)  # `[agents.NAME]`: settings as `agent set` stores them
    policy: tuple[dict[str, Any], ...] = ()  # `[[policy]]`: rules before the stored ones (kfs.runtime.rules)
    computers: ComputersConfig = field(default_factory=ComputersConfig)  # `[computers]`: many by key
    fleet: FleetConfig = field(default_factory=FleetConfig)  # `[fleet]`: many hosts on etcd

    def configured(self, agent: str) -> dict[str, Any]:
        """What komputer.toml says about one agent, as a worker's spec carries it."""
        return {"settings": self.agents.get(agent, {}),
                "policy": [r for r in self.policy if r.get("agent") in (None, agent)]}

    def __post_init__(self) -> None:
        from kfs.vfs.policy import MODES

        if self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r}: expected one of {', '.join(MODES)}")

    def startups(self) -> tuple[int, int, int]:
        parts = [int(p) for p in self.max_startups.split(":")]
        if self.session_starts_per_agent < 1:
            raise ValueError("session_starts_per_agent: expected 1 or more")
        if len(parts) == 1:
            return parts[0], 100, parts[0]
        if len(parts) != 3 or not (0 < parts[0] <= parts[2]) or not 0 <= parts[1] <= 100:
            raise ValueError(f"max_startups {self.max_startups!r}: expected START:RATE:FULL")
        return parts[0], parts[1], parts[2]


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ValueError(f"{where}: unknown setting {key!r}")
        if name in ("limits", "delegate", "agents", "policy", "computers", "fleet"):
            raise ValueError(f"{where}: {name} settings go in a [{name}] section of their own")
        if name == "penalties":
            value = _build(Penalties, value, f"{where}.penalties")
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)


def load_config(path: Path | None) -> ServerConfig:
    """Read `[ssh]` from a TOML file; None or a missing file gives the defaults."""
    if path is None or not path.exists():
        return ServerConfig()
    with path.open("rb") as f:
        data = tomllib.load(f)
    config = _build(ServerConfig, data.get("ssh", {}), f"{path}: [ssh]")
    if "limits" in data:
        config = replace(config, limits=WorkerLimits.from_toml(data["limits"], f"{path}: [limits]"))
    if "delegate" in data:
        config = replace(config, delegate=DelegateConfig.from_toml(data["delegate"], f"{path}: [delegate]"))
    if "agents" in data:
        config = replace(config, agents={name: agent_section(v, f"{path}: [agents.{name}]")
                                         for name, v in data["agents"].items()})
    if "policy" in data:
        config = replace(config, policy=tuple(policy_rule(v, f"{path}: [[policy]] {i}")
                                              for i, v in enumerate(data["policy"], 1)))
    if "computers" in data:
        config = replace(config, computers=ComputersConfig.from_toml(data["computers"], f"{path}: [computers]"))
    if "fleet" in data:
        config = replace(config, fleet=FleetConfig.from_toml(data["fleet"], f"{path}: [fleet]"))
    unknown = set(data) - {"ssh", "limits", "delegate", "agents", "policy", "computers", "fleet"}
    if unknown:
        raise ValueError(f"{path}: unknown section [{sorted(unknown)[0]}]")
    config.startups()
    return config


# `[agents.NAME]` keys -> the names `komputer agent set` stores them under
AGENT_KEYS = {"mode": "mode", "scope": "scope", "plan": "plan", "allow_commands": "commands",
              "allow_hosts": "hosts", "network": "network", "remote": "remote"}


def agent_section(data: Any, where: str) -> dict[str, Any]:
    from kfs.vfs.policy import MODES

    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a table")
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = AGENT_KEYS.get(key.replace("-", "_"))
        if name is None:
            raise ValueError(f"{where}: unknown setting {key!r} (expected {', '.join(AGENT_KEYS)})")
        out[name] = value
    if out.get("mode", "full") not in MODES:
        raise ValueError(f"{where}: mode {out['mode']!r}: expected one of {', '.join(MODES)}")
    for key in ("scope", "commands", "hosts"):
        if key in out and not (isinstance(out[key], list) and all(isinstance(v, str) for v in out[key])):
            raise ValueError(f"{where}: {key}: expected a list of strings")
    return out


def policy_rule(data: Any, where: str) -> dict[str, Any]:
    from kfs.runtime.rules import check

    if not isinstance(data, dict) or set(data) - {"action", "pattern", "agent", "on"}:
        raise ValueError(f"{where}: expected action, pattern and optionally agent and on")
    try:
        check(str(data.get("action")), str(data.get("pattern") or ""), str(data.get("on", "command")))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return dict(data)
