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
  key's mod revision (absent, or the revision read when its owner was seen gone, or by a move),
  so two hosts racing for a key never both win. The placement's mod revision is the **fencing
  token**: a host serves a computer only under the token it won, and a key's token only grows
  (keys placed in one transaction share its revision, each as its own token).
- `open/KEY` = "NAME TOKEN", on the host's lease: the host that has the computer open, claimed
  only while the placement still has that token, deleted once the host has closed it. Each
  host watches `placement/` and lets go of a computer placed elsewhere (`komputer fleet move`).

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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("kshell.fleet")

PREFIX = "/k/"
TXN_OPS = 128  # operations in one etcd transaction (etcd's default --max-txn-ops)
BATCHES_IN_FLIGHT = 8  # place_many's transactions under way at once
BATCH_ROUNDS = 4  # tries of a batch before its contended keys go one by one


def prefix_end(prefix: bytes) -> bytes:
    """The end of the key range holding every key that starts with `prefix`."""
    from aetcd.utils import prefix_range_end

    return bytes(prefix_range_end(prefix))


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

    def _members_of(self, kvs: Any) -> dict[str, str]:
        start = len(self.prefix) + len("members/")
        return {kv.key.decode()[start:]: kv.value.decode() for kv in kvs}

    async def members(self) -> dict[str, str]:
        """Live hosts: name -> SSH address."""
        return self._members_of(await self._etcd("get_prefix", self._k("members", "")))

    async def leases(self) -> dict[str, tuple[int, int]]:
        """Live hosts: name -> (lease id, seconds left on it), as etcd counts them."""
        found = await self._etcd("get_prefix", self._k("members", ""))
        start = len(self.prefix) + len("members/")
        out = {}
        for kv in found:
            info = await self._etcd("get_lease_info", kv.lease, keys=False)
            out[kv.key.decode()[start:]] = (kv.lease, int(info.TTL))
        return out

    async def placement(self, key: str) -> Placement | None:
        got = await self._etcd("get", self._k("placement", key))
        return None if got is None else Placement(key, got.value.decode(), got.mod_revision)

    async def placements(self) -> list[Placement]:
        found = await self._etcd("get_prefix", self._k("placement", ""))
        start = len(self.prefix) + len("placement/")
        return [Placement(kv.key.decode()[start:], kv.value.decode(), kv.mod_revision) for kv in found]

    async def opened(self) -> dict[str, tuple[str, int]]:
        """The computers open now: key -> (host, the fencing token it opened it under)."""
        found = await self._etcd("get_prefix", self._k("open", ""))
        start = len(self.prefix) + len("open/")
        out = {}
        for kv in found:
            host, _, token = kv.value.decode().partition(" ")
            out[kv.key.decode()[start:]] = (host, int(token))
        return out

    async def _read(self, key: str) -> tuple[dict[str, str], Placement | None]:
        """The live hosts and the key's placement, in one round trip (one transaction of reads)."""
        tx = self.client.transactions
        members = self._k("members", "")
        _, (live, got) = await self._etcd("transaction", compare=[], success=[
            tx.get(members, prefix_end(members)), tx.get(self._k("placement", key))], failure=[])
        current = None if not got else Placement(key, got[0][0].decode(), got[0][1].mod_revision)
        return self._members_of(kv for _, kv in live), current

    # -- placing -------------------------------------------------------------------------------

    async def place(self, key: str, *, to: str | None = None, expect: int | None = None) -> Placement:
        """The key's owner (`locate`, without the owner's address)."""
        return (await self.locate(key, to=to, expect=expect))[0]

    async def locate(self, key: str, *, to: str | None = None,
                     expect: int | None = None) -> tuple[Placement, dict[str, str]]:
        """The key's owner and the live hosts: the one placed, if it is alive; else a live host
        (`to`, or the rendezvous choice) written by compare-and-swap. A lost race returns the
        winner's. With `to`, a move (`komputer fleet move`): done only while the placement
        still has the token `expect` (when given), so of two moves from one state only one
        happens. One round trip when the key is placed on a live host (a login's case)."""
        tx = self.client.transactions
        path = self._k("placement", key)
        while True:
            live, current = await self._read(key)
            if not live:
                raise ConnectionError("no live host in the fleet")
            if current is not None and current.owner in live and to in (None, current.owner):
                return current, live
            if current is not None and expect is not None and current.token != expect:
                return current, live  # moved meanwhile: the caller's view is stale
            owner = to or rendezvous(key, sorted(live))
            if owner not in live:
                raise LookupError(f"{owner}: no such live host")
            compare = [tx.version(path) == 0] if current is None else [tx.mod(path) == current.token]
            ok, replies = await self._etcd("transaction", compare=compare,
                                           success=[tx.put(path, owner.encode())], failure=[])
            if ok:
                return Placement(key, owner, replies[0].response_put.header.revision), live

    async def place_many(self, keys: Sequence[str]) -> list[Placement]:
        """Many keys' placements at once: the live hosts read once, then one transaction for
        up to TXN_OPS keys (a compare-and-swap of each, all or none), a few in flight. A batch
        whose swap fails reads the keys' placements in the same round trip; the keys placed
        on live hosts are done, the others are swapped again from what was read."""
        live = await self.members()
        if not live:
            raise ConnectionError("no live host in the fleet")
        gate = asyncio.Semaphore(BATCHES_IN_FLIGHT)

        async def batch(chunk: Sequence[str]) -> dict[str, Placement]:
            async with gate:
                return await self._place_batch(chunk, live)

        unique = list(dict.fromkeys(keys))  # etcd refuses a transaction putting one key twice
        done: dict[str, Placement] = {}
        for part in await asyncio.gather(*(batch(unique[i:i + TXN_OPS]) for i in range(0, len(unique), TXN_OPS))):
            done.update(part)
        return [done[k] for k in keys]

    async def _place_batch(self, keys: Sequence[str], live: dict[str, str]) -> dict[str, Placement]:
        tx = self.client.transactions
        hosts = sorted(live)
        seen: dict[str, Placement | None] = dict.fromkeys(keys)  # None: absent, as far as we know
        done: dict[str, Placement] = {}
        pending = list(keys)
        for _ in range(BATCH_ROUNDS):
            paths = [self._k("placement", k) for k in pending]
            owners = [rendezvous(k, hosts) for k in pending]
            compare = [tx.version(p) == 0 if seen[k] is None else tx.mod(p) == seen[k].token  # type: ignore[union-attr]
                       for k, p in zip(pending, paths)]
            ok, replies = await self._etcd("transaction", compare=compare,
                                           success=[tx.put(p, o.encode()) for p, o in zip(paths, owners)],
                                           failure=[tx.get(p) for p in paths])
            if ok:
                revision = replies[0].response_put.header.revision  # one transaction, one revision
                done.update((k, Placement(k, o, revision)) for k, o in zip(pending, owners))
                return done
            stale = False
            for k, got in zip(pending, replies):
                current = None if not got else Placement(k, got[0][0].decode(), got[0][1].mod_revision)
                if current is not None and current.owner in live:
                    done[k] = current
                else:
                    stale = stale or current is not None and current.owner not in live
                    seen[k] = current
            pending = [k for k in pending if k not in done]
            if not pending:
                return done
            if stale:  # placed on a host this batch thinks gone: perhaps one joined since
                live = await self.members()
                hosts = sorted(live)
        for k in pending:  # contended beyond a few rounds: one key at a time
            done[k] = await self.place(k)
        return done

    # -- watching ------------------------------------------------------------------------------

    async def watch_placements(self, moved: Callable[[str, str | None], Awaitable[None]],
                               resync: Callable[[], Awaitable[None]]) -> None:
        """Call `moved(key, owner)` for each placement written or deleted (owner None), in
        etcd's order, from now on. When the watch breaks (a member died, the history was
        compacted) it starts again where it stopped, or from now after calling `resync()`
        for what it may have missed."""
        prefix = self._k("placement", "")
        start = None
        while True:
            try:
                if start is None:  # from now: what was placed before is read by resync
                    start = await self._revision()
                    await resync()
                watch = await self.client.watch_prefix(prefix, start_revision=start + 1)
                async for event in watch:
                    key = event.kv.key.decode()[len(prefix):]
                    await moved(key, event.kv.value.decode() if event.kind == "PUT" else None)
                    start = event.kv.mod_revision
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - etcd unreachable or compacted: start again
                from aetcd.exceptions import RevisionCompactedError

                log.warning("fleet: the placement watch of %s broke: %r", self.name, e)
                if isinstance(e, RevisionCompactedError):
                    start = None
                await asyncio.sleep(self.ttl / 6)

    async def _revision(self) -> int:
        """etcd's current revision (the header of a read of the few members' keys)."""
        return int((await self._etcd("get_prefix", self._k("members", ""))).header.revision)

    # -- what a host has open ------------------------------------------------------------------

    async def claim(self, key: str) -> int:
        """Record that this host opens `key` (`open/KEY` = "NAME TOKEN", on its lease) if and
        only if the key is placed here now; returns the fencing token. PermissionError when
        it is placed elsewhere (moved meanwhile): the host must not open it."""
        tx = self.client.transactions
        path = self._k("placement", key)
        ok, replies = await self._etcd("transaction", compare=[tx.value(path) == self.name.encode()],
                                       success=[tx.get(path)], failure=[])
        if not ok or not self.valid():
            raise PermissionError(1, "computer is placed on another host", key)
        token = replies[0][0][1].mod_revision
        ok, _ = await self._etcd("transaction", compare=[tx.mod(path) == token], success=[
            tx.put(self._k("open", key), f"{self.name} {token}".encode(), lease=self.lease)], failure=[])
        if not ok:
            raise PermissionError(1, "computer is placed on another host", key)
        return int(token)

    async def unclaim(self, key: str, token: int) -> None:
        """This host has let go of `key` (its state closed, its open-lock released)."""
        tx = self.client.transactions
        path = self._k("open", key)
        await self._etcd("transaction", compare=[tx.value(path) == f"{self.name} {token}".encode()],
                         success=[tx.delete(path)], failure=[])

    # -- operating the fleet (komputer fleet) --------------------------------------------------

    async def move(self, key: str, to: str, *, wait: float) -> tuple[Placement | None, Placement, bool]:
        """Move `key` to the live host `to`: the placement swapped from the token read (so a
        concurrent move or failover wins and this one is refused: ValueError), then a wait of
        up to `wait` seconds for the old owner to let go of it (it closes a computer placed
        elsewhere as soon as its watch sees the move, and its claim goes with it). Returns the
        placement before, after, and whether the old owner let go in time."""
        before = await self.placement(key)
        if before is not None and before.owner == to:
            return before, before, True
        after = await self.place(key, to=to, expect=None if before is None else before.token)
        if after.owner != to:
            raise ValueError(f"{key}: moved meanwhile to {after.owner}; not moved")
        return before, after, await self.closed_before(key, after.token, wait)

    async def closed_before(self, key: str, token: int, wait: float) -> bool:
        """Whether, within `wait` seconds, no host has `key` open under a token older than
        `token` (its `open/KEY` claim deleted, or lapsed with its lease)."""
        from aetcd.exceptions import WatchTimeoutError

        path = self._k("open", key)
        deadline = time.monotonic() + wait
        while True:
            got = await self._etcd("get", path)
            if got is None or int(got.value.decode().partition(" ")[2]) >= token:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with contextlib.suppress(WatchTimeoutError):
                await self.client.watch_once(path, timeout=left, start_revision=got.header.revision + 1)
