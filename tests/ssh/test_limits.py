"""The limits sshd has, as pure logic: MaxStartups, PerSourcePenalties, config parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from kshell.server.config import Penalties, ServerConfig, load_config
from kshell.server.limits import AgentSessions, SourcePenalties, StartupGate, source_of


def test_startup_gate_admits_below_start_and_drops_at_full() -> None:
    gate = StartupGate(2, 50, 4, rng=lambda: 0.99)
    assert gate.admit() and gate.admit()
    assert gate.admit()  # between start and full: p = 50%..100%, rng 0.99 passes at 50%
    gate.pending = 4
    assert not gate.admit()
    gate.done()
    assert gate.pending == 3


def test_startup_gate_drop_probability_rises_linearly() -> None:
    gate = StartupGate(10, 30, 100, rng=lambda: 0.5)
    gate.pending = 10  # p = 0.30: admitted with rng 0.5
    assert gate.admit()
    gate.pending = 60  # p = 0.30 + 0.70 * 50/90 = 0.69: dropped with rng 0.5
    assert not gate.admit()


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_penalty_activates_past_min_and_expires() -> None:
    clock = Clock()
    p = SourcePenalties(Penalties(authfail=5, min=15, max=600), clock=clock)
    for _ in range(3):
        p.penalise("192.0.2.1", "authfail")
    assert p.refused("192.0.2.1") == 0  # 15 s pending is not more than min
    p.penalise("192.0.2.1", "authfail")
    assert p.refused("192.0.2.1") == pytest.approx(20)
    assert p.refused("192.0.2.2") == 0
    clock.now += 19
    assert p.refused("192.0.2.1") == pytest.approx(1)  # stays refused until it runs out
    clock.now += 2
    assert p.refused("192.0.2.1") == 0


def test_penalty_is_capped_and_exempt_networks_never_penalised() -> None:
    clock = Clock()
    p = SourcePenalties(Penalties(crash=90, min=15, max=100, exempt=("10.0.0.0/8",)), clock=clock)
    for _ in range(5):
        p.penalise("192.0.2.9", "crash")
        p.penalise("10.1.2.3", "crash")
    assert p.refused("192.0.2.9") == pytest.approx(100)
    assert p.refused("10.1.2.3") == 0


def test_exempt_sources_are_never_penalised_and_nothing_is_counted_per_user() -> None:
    """A penalty on loopback, or on a user or key from there, is one any local client could
    impose on every agent (or on a named one): none is kept."""
    clock = Clock()
    p = SourcePenalties(Penalties(authfail=5, min=15, max=600), clock=clock)  # loopback exempt by default
    assert not any(p.penalise("127.0.0.1", "authfail") for _ in range(10))
    assert p.refused("127.0.0.1") == 0 and not p._table  # noqa: SLF001 - nothing kept for later either
    made = [p.penalise("192.0.2.1", "authfail") for _ in range(4)]
    assert made == [False, False, False, True]  # elsewhere, the whole source as OpenSSH
    assert p.refused("192.0.2.1") == pytest.approx(20)


def test_ipv6_sources_are_whole_slash_64s() -> None:
    assert source_of("2001:db8::1") == source_of("2001:db8::ffff") == "2001:db8::/64"
    assert source_of("::ffff:192.0.2.1") == "192.0.2.1"


def test_agent_session_cap() -> None:
    cap = AgentSessions(2)
    assert cap.take("a") and cap.take("a") and not cap.take("a") and cap.take("b")
    cap.give("a")
    assert cap.take("a")


def test_config_defaults_and_file(tmp_path: Path) -> None:
    assert load_config(None) == ServerConfig()
    assert ServerConfig().startups() == (10, 30, 100)
    path = tmp_path / "komputer.toml"
    path.write_text('[ssh]\nmax_auth_tries = 3\naccept_env = ["LANG"]\n[ssh.penalties]\nauthfail = 2\n')
    config = load_config(path)
    assert config.max_auth_tries == 3 and config.accept_env == ("LANG",) and config.penalties.authfail == 2
    path.write_text("[ssh]\nmax_auth_trys = 3\n")
    with pytest.raises(ValueError, match="unknown setting"):
        load_config(path)


def test_the_sample_config_is_the_defaults() -> None:
    sample = Path(__file__).parents[2] / "systemd" / "komputer.toml"
    assert sample.exists()
    assert load_config(sample) == ServerConfig()
