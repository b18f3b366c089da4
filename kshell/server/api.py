"""The `komputer-api` SSH subsystem: what an agent's program needs beyond exec and SFTP (its own
events, forks of its own tree, counters, the end of its session), for `kshell.sdk.remote`.

It runs with exactly the authority of the agent's login, nothing more: the channel joins the
connection's agent session as a shell channel does (K_SESSION, K_FORK, K_MODE and their floors,
the same lease), so holding it open holds the session; the events it shows are the agent's own;
a fork it makes is of the session's tree (the state, or the fork the session works in), for
this agent only, at least as restricted as the session (mode, a fork's scope, the image's hooks);
approvals are the operator's (`komputer decide`), never an agent's.

The protocol is JSON lines: the server first sends a greeting (`{"ok": true, "agent": ...,
"session": ..., "home": ..., "mode": ..., "fork": ...}` or `{"ok": false, "error": KIND,
"message": ...}`), then answers each request line (`{"op": "stats"}`, `{"op": "fork", "mode":
..., "disk": ..., "hooks": ..., "scope": [...]}`, `{"op": "close"}`, `{"op": "decide", ...}`,
`{"op": "processes"[, "session": NAME]}`, `{"op": "kill", "pid": P, "signal": S}`) with one line.
`{"op": "events", "since": SEQ}` makes the channel a stream of `{"event": {...}}` lines that
follows the log until the client closes the channel or the session is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

import asyncssh

from kfs.accounts import agent_settings
from kfs.agents import BadSessionName, LeaseHeld, SessionRecord
from kfs.agents.records import merged_settings
from kfs.vfs.policy import MODES, effective_mode, stricter
from kshell.server.session import client_env, fork_refusal

if TYPE_CHECKING:
    from kshell.server.auth import Connection
    from kshell.server.session import SessionHost

SUBSYSTEM = "komputer-api"
POLL = 0.05  # seconds between reads of the event log while nothing new came (LMDB has no notification)


class Refused(Exception):
    """A request the agent may not make, or one that is wrong; `kind` names the Python error the
    client raises (PermissionError, ValueError, LookupError)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ApiChannel:
    """One `komputer-api` channel of an authenticated agent."""

    def __init__(self, server: SessionHost, conn: Connection, process: asyncssh.SSHServerProcess) -> None:
        self.server = server
        self.conn = conn
        self.process = process
        agent = conn.agent
        assert agent is not None
        self.agent = agent
        self.env = client_env(server.config, conn, process.env)
        self.record: SessionRecord | None = None

    # -- the channel ---------------------------------------------------------------------------

    def send(self, obj: dict[str, Any]) -> None:
        self.process.stdout.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    async def run(self) -> None:
        refused = fork_refusal(self.server.state, self.agent.name, self.env)
        if refused is not None:
            self.send({"ok": False, "error": "PermissionError", "message": refused})
            self.process.exit(1)
            return
        try:
            self.record = await self.server.leases.join(self.conn, self.env.get("K_SESSION"))
        except LeaseHeld as e:
            self.send({"ok": False, "error": "LeaseHeld", "message": str(e)})
            self.process.exit(1)
            return
        except BadSessionName as e:
            self.send({"ok": False, "error": "ValueError", "message": str(e)})
            self.process.exit(1)
            return
        status = 0
        try:
            self.send({"ok": True, "agent": self.agent.name, "session": self.record.name, "home": self.agent.home,
                       "uid": self.agent.uid, "gid": self.agent.gid, "mode": self.mode(),
                       "channels": self.server.config.max_sessions,  # a client's bound on channels at once
                       "fork": int(self.env["K_FORK"]) if "K_FORK" in self.env else None})
            await self.serve()
        except (asyncssh.Error, ConnectionError, BrokenPipeError):
            status = 1  # the client went away
        finally:
            await self.server.leases.leave(self.conn, self.record, None)  # a shell channel saves the shell
        with contextlib.suppress(OSError, asyncssh.Error):
            self.process.exit(status)

    async def serve(self) -> None:
        stdin = self.process.stdin
        while True:
            line = await stdin.readline()
            if not line:
                return
            self.conn.touch()
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("expected a JSON object")
            except ValueError as e:
                self.send({"ok": False, "error": "ValueError", "message": f"bad request: {e}"})
                continue
            op = request.get("op")
            if op == "events":
                await self.events(request.get("since"))
                return
            handler = {"stats": self.stats, "fork": self.fork, "close": self.close, "decide": self.decide,
                       "processes": self.processes, "kill": self.kill}.get(op)
            try:
                if handler is None:
                    raise Refused("ValueError",
                                  f"{op!r}: no such request (events, fork, stats, close, processes, kill)")
                self.send({"ok": True, **await handler(request)})
            except Refused as e:
                self.send({"ok": False, "error": e.kind, "message": str(e)})
            await self.process.stdout.drain()

    # -- what the session is -------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        configured = self.server.config.configured(self.agent.name)
        return merged_settings(agent_settings(self.server.state, self.agent.name), configured.get("settings"))

    def fork_record(self) -> dict[str, Any] | None:
        if "K_FORK" not in self.env:
            return None
        from kfs import forks

        return forks.get(self.server.state, int(self.env["K_FORK"]))

    def mode(self) -> str:
        """The session's mode as its shell obeys it: the client's K_MODE with the server's, the
        key's, the fork's and the agent's own floors."""
        mode = self.env.get("K_MODE") or "full"
        return effective_mode(self.settings(), mode if mode in MODES else "readonly")

    # -- requests ------------------------------------------------------------------------------

    async def events(self, since: Any) -> None:
        """Stream the agent's own events after `since` (0: from the oldest kept) until the client
        closes the channel or this session is closed (after what was written before that)."""
        from kfs.journal import events_since, last_event

        seq = since if isinstance(since, int) and since >= 0 else 0
        # a session.close of this name before now ended an earlier holding (a detach before this
        # resume): only one after it ends this one
        now = await asyncio.to_thread(last_event, self.server.state)
        name = self.agent.name
        assert self.record is not None
        session = self.record.name
        eof = asyncio.ensure_future(self.process.stdin.read())  # the client's end of the channel
        try:
            while not eof.done():
                batch = await asyncio.to_thread(events_since, self.server.state, seq, 1000)
                ended = False
                for event in batch:
                    seq = event["seq"]
                    if event.get("agent") != name:
                        continue
                    self.send({"event": event})
                    ended = ended or (event["type"] in ("session.close", "session.closed")
                                      and event.get("session") == session and event["seq"] > now)
                if batch:
                    await self.process.stdout.drain()
                if ended:
                    return
                if len(batch) < 1000:
                    await asyncio.wait({eof}, timeout=POLL)
        finally:
            eof.cancel()
            await asyncio.gather(eof, return_exceptions=True)

    async def stats(self, request: dict[str, Any]) -> dict[str, Any]:
        """The agent's counters: its sessions (stored, and held by a connection), its processes
        (live, and those of this session), its events kept and its forks."""
        from kfs import forks
        from kfs.agents.sessions import lease_alive, list_sessions
        from kfs.journal.events import agent_counts
        from kfs.runtime import procs

        state, name = self.server.state, self.agent.name
        assert self.record is not None

        def count() -> dict[str, Any]:
            import time

            now = time.time_ns()
            mine = [(r, lease) for r, lease in list_sessions(state) if r.agent == name]
            live = procs.rows(state, agent=name, live=True)
            return {"sessions": len(mine), "attached": sum(1 for _, lease in mine if lease and lease_alive(lease, now)),
                    "processes": len(live),
                    "session_processes": sum(1 for r in live if r["session"] == self.record.name),  # type: ignore[union-attr]
                    "events": agent_counts(state).get(name, 0),
                    "forks": sum(1 for f in forks.forks(state) if f.get("agent") == name)}

        return {"agent": name, "session": self.record.name, "mode": self.mode(),
                "fork": int(self.env["K_FORK"]) if "K_FORK" in self.env else None, **await asyncio.to_thread(count)}

    async def processes(self, request: dict[str, Any]) -> dict[str, Any]:
        """The agent's live process rows (kfs.runtime.procs: every session's and every front
        end's, the one table `ps` reads), so a client sees the processes its other connections
        and programs started."""
        from kfs.runtime import procs

        session = request.get("session")
        if session is None:
            rows = await asyncio.to_thread(procs.rows, self.server.state, agent=self.agent.name, live=True)
        elif isinstance(session, str):  # one session's rows, ended ones too (a command that ended
            # before its client saw its row finds its pid: the exec channel carries none)
            rows = [r for r in await asyncio.to_thread(procs.rows, self.server.state, agent=self.agent.name)
                    if r["session"] == session]
        else:
            raise Refused("ValueError", "processes: expected a session name")
        return {"processes": rows}

    async def kill(self, request: dict[str, Any]) -> dict[str, Any]:
        """Signal one of the agent's processes (as `kill -SIG PID` in its shell): `found` is
        False when it is not running."""
        from kshell.worker.procs import send

        pid, sig = request.get("pid"), request.get("signal", 15)
        if not isinstance(pid, int) or not isinstance(sig, int) or not 0 <= sig < 65:
            raise Refused("ValueError", "kill: expected an integer pid and signal")
        return {"found": await asyncio.to_thread(send, self.server.state, pid, sig, self.agent.name)}

    async def fork(self, request: dict[str, Any]) -> dict[str, Any]:
        """A new fork of the session's tree for this agent, never less restricted than the
        session: its mode at least the session's, inside the session's fork's scope, and with the
        image's hooks when the image has any."""
        from kfs import forks
        from kfs.runtime import image

        mode = request.get("mode") or "full"
        disk = request.get("disk") or "overlay"
        hooks = request.get("hooks", True)
        scope = request.get("scope") or []
        if mode not in MODES:
            raise Refused("ValueError", f"mode {mode!r}: expected one of {', '.join(MODES)}")
        if disk not in forks.DISKS:
            raise Refused("ValueError", f"disk {disk!r}: expected overlay or shared")
        if not isinstance(scope, list) or not all(isinstance(p, str) for p in scope):
            raise Refused("ValueError", "scope: expected a list of paths")
        if not hooks:
            record = image.current(self.server.state)
            if record is not None and record["spec"]["hooks"]:
                raise Refused("PermissionError", "a fork without the image's hooks is the operator's "
                                                 "(komputer fork create --no-hooks); an agent's forks keep them")
        parent = self.fork_record()
        session_mode = self.mode()
        mode = stricter(mode, session_mode)
        scope = self.fork_scope(scope, parent, session_mode) if mode == "limited" else scope
        assert self.record is not None
        try:
            number = await asyncio.to_thread(
                forks.create, self.server.state, parent=forks.STATE if parent is None else parent["id"], mode=mode,
                disk=disk, hooks=bool(hooks), scope=tuple(scope), agent=self.agent.name,
                by=f"ssh {self.agent.name}/{self.record.name}", limit=self.server.config.forks_max_per_agent,
            )
        except forks.TooMany as e:
            raise Refused("PermissionError", str(e)) from None
        return {"fork": number, "mode": mode, "session": f"fork-{number}"}

    def fork_scope(self, scope: list[str], parent: dict[str, Any] | None, session_mode: str) -> list[str]:
        """The scope of a limited fork this session makes: never reaching beyond where the session
        itself may write. A limited fork's scope bounds its sessions (kfs.runtime.rules.fork_bounds)
        and, for an agent without a scope of its own, is their scope: so it must lie inside the
        scope of the fork this session works in, and a limited session without any scope (it may
        write nowhere) makes only forks that may write nowhere. None given: the fork's own."""
        from kfs.runtime.rules import fork_bounds

        limits: list[tuple[tuple[str, ...], str]] = []
        above = fork_bounds(parent)
        if above is not None:
            limits.append((above, f"the scope of fork {parent['id']}"))  # type: ignore[index]
        elif session_mode == "limited" and not self.settings().get("scope"):
            limits.append(((), "this session's scope"))
        if limits and not scope:
            return list(limits[0][0])
        home = self.agent.home
        for bound, what in limits:
            for path in scope:
                if not any(_inside(path, b, home) for b in bound):
                    raise Refused("PermissionError", f"scope {path}: outside {what} ({', '.join(bound) or 'nothing'})")
        return scope

    async def close(self, request: dict[str, Any]) -> dict[str, Any]:
        """End this durable session now, as the local SDK's `agent.close()` does: its record and
        lease go and `session.closed` is on record (kfs.agents.sessions.end_session); the
        connection's channels save nothing more of it."""
        from kfs.agents.sessions import end_session

        assert self.record is not None
        self.record.ephemeral = True  # the connection's channels leave nothing to resume
        holder = self.conn.session_holder
        if holder is not None:
            await asyncio.to_thread(end_session, self.server.state, self.record, holder,
                                    f"sdk {self.agent.name}/{self.record.name}")
        return {"session": self.record.name}

    async def decide(self, request: dict[str, Any]) -> dict[str, Any]:
        raise Refused("PermissionError", "approvals are decided by the operator (komputer decide ID allow|reject), "
                                         "not by an agent's session")


def _inside(path: str, bound: str, home: str) -> bool:
    """Whether `path` is `bound` or under it (`~` is the agent's home)."""
    import posixpath

    def norm(p: str) -> str:
        if p == "~" or p.startswith("~/"):
            p = home + p[1:]
        elif not p.startswith("/"):
            p = posixpath.join(home, p)
        return posixpath.normpath(p)

    path, bound = norm(path), norm(bound)
    return path == bound or path.startswith(bound.rstrip("/") + "/")


async def run_api(server: SessionHost, conn: Connection, process: asyncssh.SSHServerProcess) -> None:
    await ApiChannel(server, conn, process).run()


__all__ = ["SUBSYSTEM", "ApiChannel", "run_api"]
