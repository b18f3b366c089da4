"""A session's side of approvals (kfs.runtime.approvals): waiting for a decision where an `ask`
rule matched, and, when the session is resumed, applying what was decided while nobody waited.

The paused action is the command that asked (a tool or program with its arguments, in its
directory), and, for a write or a host, that path or host. Waiting, the command keeps its
place: an allowed command just runs on, inside whatever script it was part of; a rejected one
fails with status 126. If the connection goes away meanwhile, the approval waits for the
session; on its resume (`K_SESSION`), the first command line first applies the decision: an
allowed command runs again from its argv in its directory, its output on the new channel and
its status in `$?`; a rejected one says so and sets `$?` to 126. The rest of the script it was
part of is gone with the old connection, as it is for any command a hangup ends.

A path or host decided `allow` stays allowed for the session (a `cp -p` writes, chmods and
touches the same file; a script fetches from the same host again)."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any

from kfs.kstate import KState
from kfs.runtime import approvals
from kshell.exec.scripts import current


def verdict(record: dict[str, Any]) -> tuple[bool, str]:
    """(allowed, what to tell the agent when not)."""
    if record["status"] == "allowed":
        return True, ""
    return False, f"approval {record['id']} {approvals.describe_status(record)}"


class SessionApprovals:
    """`ask` blocks the calling command until the approval is decided; `resume` applies the
    decisions that reached no one."""

    def __init__(self, state: KState, spec: dict[str, Any], front: str, policy: Any, tell: Callable[[str], None],
                 pause: Callable[[bool], None], stop: Callable[[], bool], hung_up: Callable[[], bool],
                 shell: Callable[[], Any]) -> None:
        self.state = state
        self.agent = spec["agent"]
        self.session = spec.get("session") or "-"
        self.ephemeral = bool(spec.get("ephemeral", True))
        self.timeout = float(spec.get("approval_timeout") or 0.0)
        self.max_pending = int(spec.get("approvals_max_pending", approvals.MAX_PENDING))
        self.front = front
        self.policy = policy  # the session's WritePolicy (paths decided `allow` are granted there)
        self.tell = tell  # one line on the channel, whatever the command's redirections
        self.pause = pause  # the front end's wall-time clock stops while a command waits
        self.stop = stop  # Ctrl-C or the connection went away
        self.hung_up = hung_up  # ... and which of the two
        self.shell = shell  # the session's interpreter now (for a write no tool makes)
        self.told_pending = False
        self.hosts: set[str] = set()  # hosts decided `allow` for this session

    def ask(self, sh: Any, kind: str, action: str, rule: Any, argv: list[str] | None,
            subject: str = "") -> tuple[bool, str]:
        """Store the approval, say so, wait; (allowed, why not). `subject`: the path or host.
        Refused at once (126) while the agent has its bound of pending approvals."""
        cwd = sh.fs.cwd.decode("utf-8", "surrogateescape")
        try:
            record = approvals.ask(self.state, agent=self.agent, session=self.session, kind=kind,
                                   action=action[:4096], rule=rule.id,
                                   replay={"argv": argv, "cwd": cwd, "subject": subject}, timeout=self.timeout,
                                   front=self.front, resumable=not self.ephemeral, max_pending=self.max_pending,
                                   why=getattr(rule, "reason", "") or "")
        except approvals.TooManyPending as e:
            return False, str(e)
        self.tell(approvals.waiting_line(record))
        cancel = sh.session.cancel
        left = cancel.deadline - time.monotonic()
        cancel.deadline = float("inf")  # waiting for a person is not the command's wall time
        self.pause(True)
        try:
            decided = approvals.wait(self.state, record["id"], lambda: self.stop() or cancel.cancelled)
        finally:
            cancel.deadline = time.monotonic() + left
            self.pause(False)
        if decided is None:
            if self.hung_up() and not self.ephemeral:
                approvals.let_go(self.state, record["id"])  # decided later, applied on the resume
            else:
                approvals.withdraw(self.state, record["id"], "the session ended" if self.hung_up() else "interrupted")
            return False, ""
        return verdict(decided)

    def command(self, sh: Any, command: str, rule: Any, argv: list[str]) -> tuple[bool, str]:
        return self.ask(sh, "command", command, rule, argv)

    def write(self, e: Any) -> bool:
        """WritePolicy.approve: a write an `ask` rule matched."""
        allowed, why = self._for_current("write", f"write {e.physical}", e.rule, e.physical)
        if why:
            self.tell(f"K: write {e.physical}: {why}\n")
        return allowed

    def host(self, host: str, url: str, rule: Any) -> tuple[bool, str]:
        """HostTable.approve: a host an `ask` rule matched (granted for the session once allowed)."""
        if host in self.hosts:
            return True, ""
        allowed, why = self._for_current("host", f"fetch {url}", rule, host)
        if allowed:
            self.hosts.add(host)
        return allowed, why

    def _for_current(self, kind: str, action: str, rule: Any, subject: str) -> tuple[bool, str]:
        """Ask for the tool running in this thread (a redirection has none: the shell's own
        write, nothing to replay but the grant)."""
        sh = getattr(current, "sh", None)
        return self.ask(sh or self.shell(), kind, action, rule, getattr(current, "argv", None) if sh else None,
                        subject)

    def resume(self, run: Callable[[str, str], int], err: Callable[[bytes], None]) -> int | None:
        """Apply what was decided for this session while nobody waited; `run(source, command)`
        runs a replay with `command` approved once. The last status, None when nothing was."""
        if self.ephemeral:
            return None
        status = None
        for approval_id in approvals.orphans(self.state, self.agent, self.session):
            record = approvals.get(self.state, approval_id)
            if record is None:
                continue
            if record["status"] == "pending":
                if not self.told_pending:
                    err(f"K: approval {approval_id} is still pending: {record['action']}\n".encode())
                continue
            decided = approvals.claim(self.state, approval_id, waiter=False)
            if decided is None:
                continue
            allowed, why = verdict(decided)
            replay = decided.get("replay") or {}
            argv = replay.get("argv")
            if not allowed:
                err(f"K: {decided['action']}: {why}\n".encode())
                status = 126
                continue
            err(f"K: approval {approval_id} was allowed by {decided['by']}: {decided['action']}\n".encode())
            self._grant(decided["kind"], replay.get("subject") or "")
            if not argv:
                status = 0
                continue
            cwd = shlex.quote(replay.get("cwd") or ".")
            status = run(f"( cd -- {cwd} 2>/dev/null; {shlex.join(argv)} )\n",
                         " ".join(argv) if decided["kind"] == "command" else "")
        self.told_pending = True
        return status

    def _grant(self, kind: str, subject: str) -> None:
        """A write or host approval allows that path or host for the rest of the session."""
        if kind == "host":
            self.hosts.add(subject)
        elif kind == "write" and self.policy is not None:
            self.policy.granted.add(subject)
