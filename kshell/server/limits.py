"""The connection limits sshd has and asyncssh lacks: MaxStartups random early drop,
PerSourcePenalties, sessions per agent. In memory, per server process, as sshd keeps them."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable

from kshell.server.config import Penalties

MAX_SOURCES = 65536  # PerSourcePenalties max-sources4/6: the table never grows past this


class StartupGate:
    """MaxStartups start:rate:full over unauthenticated connections.

    Below `start` every connection is let in; from `start` on a new one is dropped with
    probability rate% rising linearly to 100% at `full`, as sshd does.
    """

    def __init__(self, start: int, rate: int, full: int, rng: Callable[[], float] = random.random) -> None:
        self.start, self.rate, self.full = start, rate, full
        self.pending = 0
        self._rng = rng

    def admit(self) -> bool:
        n = self.pending
        if n >= self.full:
            return False
        if n >= self.start:
            span = max(self.full - self.start, 1)
            p = (self.rate + (100 - self.rate) * (n - self.start) / span) / 100
            if self._rng() < p:
                return False
        self.pending += 1
        return True

    def done(self) -> None:
        """An admitted connection authenticated or went away."""
        self.pending = max(self.pending - 1, 0)


def source_of(addr: str) -> str:
    """The penalised unit: the address for IPv4, its /64 for IPv6 (sshd's defaults)."""
    ip = ipaddress.ip_address(addr.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class SourcePenalties:
    """PerSourcePenalties: each bad event adds seconds to its source's pending penalty (capped
    at `max`); once the pending penalty exceeds `min` the source is active and refused until
    the penalty runs out, as OpenSSH 9.8's srclimit does.

    Sources in `exempt` (loopback by default) are never penalised, and nothing is counted per
    user or per offered key: a penalty there would be a lockout anyone could impose. Every
    local agent and container shares the loopback address, user names are public, keys cost
    nothing to make and public keys are public, so a third party could earn the penalty for
    alice (or for alice's key) and alice would pay it. What still bounds a client there is
    MaxAuthTries, MaxStartups and LoginGraceTime (docs/process-model.md, "Failed logins")."""

    def __init__(self, config: Penalties, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._table: OrderedDict[str, tuple[float, bool]] = OrderedDict()  # source -> (expiry, active)
        self._exempt = [ipaddress.ip_network(n, strict=False) for n in config.exempt]

    def _exempted(self, addr: str) -> bool:
        ip = ipaddress.ip_address(addr.split("%", 1)[0])
        return any(ip in net for net in self._exempt)

    def penalise(self, addr: str, kind: str) -> bool:
        """Record an event of `kind` (authfail, noauth, grace_exceeded, crash) from `addr`;
        True if it made the source's penalty active."""
        seconds = float(getattr(self.config, kind))
        if not self.config.enabled or seconds <= 0 or self._exempted(addr):
            return False
        return self._add(source_of(addr), seconds)

    def _add(self, key: str, seconds: float) -> bool:
        now = self._clock()
        expiry, active = self._table.pop(key, (now, False))
        if expiry < now:
            expiry, active = now, False
        expiry = min(expiry + seconds, now + self.config.max)
        newly = not active and expiry - now > self.config.min
        self._table[key] = (expiry, active or newly)
        while len(self._table) > MAX_SOURCES:
            self._table.popitem(last=False)
        return newly

    def refused(self, addr: str) -> float:
        """Seconds left of an active penalty on `addr`'s source (0 when it may go on)."""
        if not self._table:
            return 0.0
        key = source_of(addr)
        entry = self._table.get(key)
        if entry is None:
            return 0.0
        expiry, active = entry
        left = expiry - self._clock()
        if left <= 0:
            del self._table[key]
            return 0.0
        return left if active else 0.0


class AgentSessions:
    """Open sessions per agent across every connection (MaxSessions is per connection)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open: dict[str, int] = {}

    def take(self, agent: str) -> bool:
        n = self.open.get(agent, 0)
        if n >= self.limit:
            return False
        self.open[agent] = n + 1
        return True

    def give(self, agent: str) -> None:
        n = self.open.get(agent, 0) - 1
        if n > 0:
            self.open[agent] = n
        else:
            self.open.pop(agent, None)


class AgentStarts:
    """Session starts in progress per agent: at most `limit` of one agent's sessions at once
    take the lease of their agent session or wait for a worker; the others wait in the agent's
    own queue, in order.

    The steps of a start use what every agent shares: the thread pool (the lease is an LMDB
    write), the single LMDB writer, the zygote's forks, the front end's loop. Without a bound
    an agent opening 256 sessions at once put 256 starts ahead of another agent's next login
    in each of them. With it, another agent's start waits behind at most `limit` of each other
    agent's, however many they have queued (the worker pool hands workers out by agent in turn
    as well: workers.FairWaiters)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._gates: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}  # agent -> (gate, [users])

    @contextlib.asynccontextmanager
    async def slot(self, agent: str) -> AsyncIterator[None]:
        """Hold one of `agent`'s start slots (waiting in its queue for one) for the block."""
        entry = self._gates.get(agent)
        if entry is None:
            entry = self._gates[agent] = (asyncio.Semaphore(self.limit), [0])
        gate, users = entry
        users[0] += 1
        try:
            async with gate:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0 and self._gates.get(agent) is entry:  # no agent's gate outlives its starts
                del self._gates[agent]

    def waiting(self, agent: str) -> int:
        """Starts of `agent` in progress or queued."""
        entry = self._gates.get(agent)
        return entry[1][0] if entry is not None else 0
