"""`komputer run --config kgent.yaml --prompt TEXT --sandbox PATH` (a run, its progress streamed:
one line rewritten per step on a terminal, plain lines otherwise) and `komputer runs [list]`,
`runs show ID`, `runs resume ID`, `runs cancel ID`: the runs of docs/runs.md on the state's
computer. Exit status of `run` and `runs resume`: 0 completed, 3 review_required, 1 otherwise."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

from kshell.cli import PROG, AddCommand

__all__ = ["add_commands"]

SPINNER = "|/-\\"
REVIEW = 3  # the exit status of a run that ended review_required


class _Progress:
    """A run's progress on stderr: on a terminal one line rewritten in place (a spinner, the
    step, the time since the start), else a plain line per event."""

    def __init__(self, run_id: str, stream: Any = None) -> None:
        self.run_id = run_id
        self.out = stream or sys.stderr
        self.tty = self.out.isatty()
        self.start = time.monotonic()
        self.n = 0

    def __call__(self, line: str) -> None:
        if self.tty:
            self.n += 1
            self.out.write(f"\r\x1b[K{SPINNER[self.n % 4]} {line} ({time.monotonic() - self.start:.1f}s)")
        else:
            self.out.write(f"run {self.run_id}: {line}\n")
        self.out.flush()

    def end(self) -> None:
        if self.tty and self.n:
            self.out.write("\r\x1b[K")
            self.out.flush()


def _exit(record: dict[str, Any]) -> int:
    return 0 if record["status"] == "completed" else REVIEW if record["status"] == "review_required" else 1


def _summary(record: dict[str, Any]) -> str:
    why = record.get("failure_reason") or record.get("review_reason")
    return f"run {record['run_id']}: {record['status']}" + (f" ({why})" if why and record["status"] != "completed"
                                                             else "") + f"\n  {record['sandbox']}"


async def _work(state: str, make: Any, args: argparse.Namespace, name: str, programs: bool = True) -> int:
    """Boot the computer (with programs under the local sandbox when `programs` and it is
    usable here), run what `make(computer, holder, progress)` starts, with Ctrl-C asking the
    run to stop."""
    from kfs.runtime import conversations
    from kshell.runs import RunError
    from kshell.sdk import Komputer, local_remote
    from kshell.sdk.options import bubblewrap_usable

    remotes = {"local": local_remote()} if programs and bubblewrap_usable() else None
    async with Komputer.boot(state=state, remotes=remotes) as computer:
        holder: dict[str, Any] = {}

        def progress(line: str) -> None:
            holder["progress"](line)

        def interrupt() -> None:
            if "conversation" in holder:
                conversations.request_stop(computer.state, holder["conversation"], by=f"cli:{os.getuid()}")

        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, interrupt)
        try:
            record = await make(computer, holder, progress)
        except RunError as e:
            print(f"{PROG} {name}: {e}", file=sys.stderr)
            return 1
        finally:
            if "progress" in holder:
                holder["progress"].end()
    print(_summary(record))
    return _exit(record)


def cmd_run(args: argparse.Namespace) -> int:
    from kshell.cli import state_path
    from kshell.runs import ConfigError, RunError, create_run_context, load_config
    from kshell.runs.runner import recover_runs, run

    try:
        config = load_config(args.config)  # before the state is touched: a bad config makes nothing
    except ConfigError as e:
        print(f"{PROG} run: {e}", file=sys.stderr)
        return 2

    async def make(computer: Any, holder: dict[str, Any], progress: Any) -> dict[str, Any]:
        recover_runs(computer.state)
        try:
            ctx = await asyncio.to_thread(create_run_context, config, args.prompt, args.sandbox, args.session_id,
                                          args.task_id, args.run_id, state=computer.state, agent=args.agent)
        except (RunError, OSError) as e:
            raise RunError(str(e)) from None
        holder["progress"] = _Progress(ctx.run_id)
        holder["conversation"] = ctx.conversation
        print(f"run {ctx.run_id} in {ctx.sandbox}", file=sys.stderr)
        return await run(computer, ctx, args.model, progress=progress)

    return asyncio.run(_work(str(state_path(args)), make, args, "run", config["programs"] == "local"))


def cmd_runs_resume(args: argparse.Namespace) -> int:
    from kshell.cli import state_path
    from kshell.runs import RunError, open_run
    from kshell.runs.runner import recover_runs, run

    try:
        with _open(args) as state:
            programs = open_run(state, args.id).config.get("programs", "local") == "local"
    except RunError as e:
        print(f"{PROG} runs resume: {e}", file=sys.stderr)
        return 1

    async def make(computer: Any, holder: dict[str, Any], progress: Any) -> dict[str, Any]:
        recover_runs(computer.state)
        ctx = open_run(computer.state, args.id)
        holder["progress"] = _Progress(ctx.run_id)
        holder["conversation"] = ctx.conversation
        return await run(computer, ctx, args.model, progress=progress, message=args.message)

    return asyncio.run(_work(str(state_path(args)), make, args, "runs resume", programs))


def _open(args: argparse.Namespace) -> Any:
    from kfs.kstate import KState
    from kshell.cli import state_path
    from kshell.runs.runner import recover_runs

    state = KState(state_path(args), create=False)
    recover_runs(state)
    return state


def cmd_runs_list(args: argparse.Namespace) -> int:
    from kshell.runs import list_runs

    with _open(args) as state:
        records = list_runs(state)
    if args.json:
        print(json.dumps(records, indent=2, sort_keys=True))
        return 0
    print(f"{'RUN':<38} {'STATUS':<18} {'AGENT':<12} {'UPDATED':<25} SANDBOX")
    for r in records:
        print(f"{r['run_id']:<38} {r['status']:<18} {r.get('agent', ''):<12} {r.get('updated_at') or '':<25} "
              f"{r.get('sandbox', '')}")
    return 0


def cmd_runs_show(args: argparse.Namespace) -> int:
    from kshell.runs import RunError, open_run

    with _open(args) as state:
        try:
            ctx = open_run(state, args.id)
        except RunError as e:
            print(f"{PROG} runs show: {e}", file=sys.stderr)
            return 1
    print(json.dumps(ctx.record, indent=2, sort_keys=True))
    return 0


def cmd_runs_cancel(args: argparse.Namespace) -> int:
    from kshell.runs import RunError
    from kshell.runs.runner import cancel_run

    with _open(args) as state:
        try:
            done = cancel_run(state, args.id, by=f"cli:{os.getuid()}")
        except RunError as e:
            print(f"{PROG} runs cancel: {e}", file=sys.stderr)
            return 1
    print(f"run {args.id}: {done}")
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("run", cmd_run, "start a run: the agent loop in a sandbox of the agent's tree, its progress streamed")
    p.add_argument("--config", required=True, metavar="FILE", help="the run's kgent.yaml")
    p.add_argument("--prompt", required=True, metavar="TEXT", help="the task")
    p.add_argument("--sandbox", required=True, metavar="PATH", help="the run's folder, relative to the agent's home")
    p.add_argument("--agent", metavar="NAME", help="the agent (default: the config's `agent`)")
    p.add_argument("--model", metavar="NAME", help="one of the image's [models.NAME] (default: the config's model)")
    for kind in ("session", "task", "run"):
        p.add_argument(f"--{kind}-id", metavar="ID", help=f"the {kind}'s id (default: a new one, sorting by time)")
    p = add("runs", cmd_runs_list, "the runs: list, show ID, resume ID, cancel ID")
    p.set_defaults(fn=cmd_runs_list, json=False)
    sub = p.add_subparsers(dest="runs_command", metavar="ACTION")
    q = sub.add_parser("list", parents=[common], help="every run, oldest first")
    q.add_argument("--json", action="store_true", help="run.json of each, as JSON")
    q.set_defaults(fn=cmd_runs_list)
    q = sub.add_parser("show", parents=[common], help="a run's run.json")
    q.add_argument("id", metavar="ID")
    q.set_defaults(fn=cmd_runs_show)
    q = sub.add_parser("resume", parents=[common], help="go on with a failed or revision_required run")
    q.add_argument("id", metavar="ID")
    q.add_argument("--model", metavar="NAME", help="one of the image's [models.NAME] (default: the config's model)")
    q.add_argument("--message", metavar="TEXT", help="a message for the model first (a revision's instructions)")
    q.set_defaults(fn=cmd_runs_resume)
    q = sub.add_parser("cancel", parents=[common], help="stop a running run, or cancel one no worker runs")
    q.add_argument("id", metavar="ID")
    q.set_defaults(fn=cmd_runs_cancel)
