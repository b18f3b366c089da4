"""Many hosts as one appliance: membership, placement and fencing tokens on etcd.

The coordination is etcd's (Debian's `etcd-server`), reached with `aetcd`, an asyncio gRPC client
of the etcd v3 API. Why aetcd: K's server is asyncio, and aetcd is the maintained asyncio client
(release 1.0 in 2026, leases, transactions, watches); `etcd3` (python-etcd3) has had no release
since 2020 and does not import with current protobuf; `etcd3gw` is maintained but synchronous
(HTTP gateway, requests), which would put a thread under every call; `etcd-client-py` binds a Rust
client and is young. aetcd takes one host:port; a gRPC target naming every member
(`ipv4:A:P,B:Q,C:R`, `pick_first`) lets gRPC move to another member when one dies.

Keys (under `PREFIX`, default `/k/`):

- `members/NAME` = the host's SSH address, attached to the host's lease: a host that stops
  renewing (dead, frozen, cut off) leaves when the lease expires, by etcd's clock, not its own.
- `placement/KEY` = the owning host's name. It is written only with a compare-and-swap on the
  key's mod revision (absent, or the revision read when its owner was seen gone), so two hosts
  racing for a key never both win. The placement's mod revision is the **fencing token**: a
  host serves a computer only under the token it won, and a token is never reused.

A host keeps a local deadline: the moment its last successful lease renewal was sent, plus the
TTL less a margin. Past it, the host considers itself gone (`Member.valid()` is False) before
etcd can expire the lease and so before any other host may take its computers: the fence is on
the old owner's side first, whatever its clock or scheduling did (a SIGSTOPped host wakes past
its deadline and stops at its first check).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("kshell.fleet")

PREFIX = "/k/"


def grpc_target(endpoints: Sequence[str]) -> tuple[str, int]:
    """aetcd's (host, port) for a gRPC target naming every etcd member: `ipv4:A:P,B:Q` with the
    last port split off, which aetcd joins back with ':'."""
    if not endpoints:
        raise ValueError("[fleet] etcd: expected one endpoint or more (HOST:PORT)")
    cleaned = [e.removeprefix("http://") for e in endpoints]
    target = "ipv4:" + ",".join(cleaned) if len(cleaned) > 1 else cleaned[0]
    host, _, port = target.rpartition(":")
    return host, int(port)


def connect(endpoints: Sequence[str], timeout: float = 5.0) -> Any:
    """An aetcd client on every member (not connected yet: its first call connects)."""
    import aetcd

    host, port = grpc_target(endpoints)
    return aetcd.Client(host=host, port=port, timeout=timeout)


def rendezvous(key: str, members: Sequence[str]) -> str:
    """The member a key goes to: highest random weight (the same answer on every host, keys
    spread evenly, and only the keys of a member that leaves move)."""
    return max(members, key=lambda m: hashlib.blake2b(f"{m}\0{key}".encode(), digest_size=8).digest())


def _unavailable(e: Exception) -> bool:
    """An etcd error that passes by itself: UNAVAILABLE from gRPC, or aetcd's connection errors."""
    from aetcd.exceptions import ConnectionFailedError, ConnectionTimeoutError

    if isinstance(e, ConnectionFailedError | ConnectionTimeoutError):
        return True
    code = getattr(e, "code", None)
    return callable(code) and getattr(code(), "name", "") == "UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class Placement:
    key: str
    owner: str
    token: int  # the placement's mod revision: the fencing token


class Member:
    """One host's membership: its lease, kept alive, and what it reads and writes on etcd."""

    def __init__(self, client: Any, name: str, address: str, *, ttl: int = 3, prefix: str = PREFIX) -> None:
        self.client = client
        self.name = name
        self.address = address
        self.ttl = ttl
        self.prefix = prefix
        self.lease: Any = None
        self._deadline = 0.0
        self._keeper: asyncio.Task[None] | None = None

    async def _etcd(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """One etcd call, tried again for a few seconds while the cluster is briefly unavailable
        (a member died, a leader is being elected: gRPC says UNAVAILABLE); other errors, and
        one lasting longer (no quorum), are the caller's."""
        delay, deadline = 0.02, time.monotonic() + 5.0
        while True:
            try:
                return await getattr(self.client, method)(*args, **kwargs)
            except Exception as e:
                if not _unavailable(e) or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _k(self, *parts: str) -> bytes:
        return (self.prefix + "/".join(parts)).encode()

    async def join(self) -> None:
        """Take a lease and publish this host under it; renew it every third of its TTL."""
        sent = time.monotonic()
        self.lease = await self.client.lease(self.ttl)
        await self.client.put(self._k("members", self.name), self.address.encode(), lease=self.lease)
        self._deadline = sent + self.ttl * 2 / 3
        self._keeper = asyncio.get_running_loop().create_task(self._keep())

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            sent = time.monotonic()
            try:
                reply = await self.client.refresh_lease(self.lease.id)
            except Exception as e:  # noqa: BLE001 - etcd unreachable: the deadline decides
                log.warning("fleet: could not renew the lease of %s: %s", self.name, e)
                continue
            if reply is None or reply.TTL <= 0:  # expired meanwhile: this host is out for good
                log.warning("fleet: the lease of %s expired; it serves nothing more", self.name)
                self._deadline = 0.0
                return
            self._deadline = sent + self.ttl * 2 / 3

    def valid(self) -> bool:
        """Whether this host may still serve: its lease is certainly alive on etcd."""
        return time.monotonic() < self._deadline

    async def leave(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        self._deadline = 0.0
        if self.lease is not None:
            with contextlib.suppress(Exception):
                await self.lease.revoke()

    # -- reading the fleet ---------------------------------------------------------------------

    async def members(self) -> dict[str, str]:
        """Live hosts: name -> SSH address."""
        found = await self._etcd("get_prefix", self._k("members", ""))
        return {kv.key.decode()[len(self.prefix) + len("members/"):]: kv.value.decode() for kv in found}

    async def placement(self, key: str) -> Placement | None:
        got = await self._etcd("get", self._k("placement", key))
        return None if got is None else Placement(key, got.value.decode(), got.mod_revision)

    async def placements(self) -> list[Placement]:
        found = await self._etcd("get_prefix", self._k("placement", ""))
        start = len(self.prefix) + len("placement/")
        return [Placement(kv.key.decode()[start:], kv.value.decode(), kv.mod_revision) for kv in found]

    # -- placing -------------------------------------------------------------------------------

    async def place(self, key: str, *, to: str | None = None, expect: int | None = None) -> Placement:
        """The key's owner: the one placed, if it is alive; else a live host (`to`, or the
        rendezvous choice) written by compare-and-swap. A lost race returns the winner's.
        With `to`, a move (`komputer fleet move`): done only while the placement still has the
        token `expect` (when given), so of two moves from one state only one happens."""
        tx = self.client.transactions
        path = self._k("placement", key)
        while True:
            live = await self.members()
            if not live:
                raise ConnectionError("no live host in the fleet")
            current = await self.placement(key)
            if current is not None and current.owner in live and to in (None, current.owner):
                return current
            if current is not None and expect is not None and current.token != expect:
                return current  # moved meanwhile: the caller's view is stale
            owner = to or rendezvous(key, sorted(live))
            if owner not in live:
                raise LookupError(f"{owner}: no such live host")
            compare = [tx.version(path) == 0] if current is None else [tx.mod(path) == current.token]
            ok, _ = await self._etcd("transaction", compare=compare, success=[tx.put(path, owner.encode())], failure=[])
            if ok:
                won = await self.placement(key)
                if won is not None and won.owner == owner:
                    return won

    async def place_many(self, keys: Sequence[str]) -> list[Placement]:
        """Many keys' placements at once: the live hosts and the placements read once, then
        one compare-and-swap for each key needing a host (its revision from the reply); a key
        whose swap lost, or that another host placed meanwhile, goes through `place`."""
        tx = self.client.transactions
        live = await self.members()
        if not live:
            raise ConnectionError("no live host in the fleet")
        hosts = sorted(live)
        existing = {p.key: p for p in await self.placements()}

        async def one(key: str) -> Placement:
            current = existing.get(key)
            if current is not None and current.owner in live:
                return current
            path = self._k("placement", key)
            owner = rendezvous(key, hosts)
            compare = [tx.version(path) == 0] if current is None else [tx.mod(path) == current.token]
            ok, replies = await self._etcd("transaction", compare=compare, success=[tx.put(path, owner.encode())],
                                                        failure=[])
            if ok:
                return Placement(key, owner, replies[0].response_put.header.revision)
            return await self.place(key)

        return list(await asyncio.gather(*(one(k) for k in keys)))
