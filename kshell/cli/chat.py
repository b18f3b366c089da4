"""`komputer chat AGENT [--model NAME]` (talk to an agent loop, its answer streamed to the
terminal), `komputer send AGENT TEXT` (queue a message for a running loop) and `komputer stop
AGENT` (stop it, from any process): the agent loop of docs/agent.md on the state's computer."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any

from kshell.cli import AddCommand

__all__ = ["add_commands"]


def _conversation(args: argparse.Namespace) -> str:
    return args.conversation or f"{args.agent}.{args.session}"


def cmd_chat(args: argparse.Namespace) -> int:
    from kshell.cli import state_path

    return asyncio.run(_chat(str(state_path(args)), args))


async def _chat(state: str, args: argparse.Namespace) -> int:
    from kshell.agent import ConversationBusy, Hooks, StreamError
    from kshell.sdk import Komputer, LeaseHeld

    out, err = sys.stdout, sys.stderr

    def chunk(piece: Any, response_id: str) -> None:
        if piece.kind == "text":
            out.write(piece.text)
            out.flush()
        elif piece.kind == "finish":
            out.write("\n")
            out.flush()

    def call(c: dict[str, Any]) -> None:
        err.write(f"[{c['name']} {str(c['arguments'])[:200]}]\n")

    def result(c: dict[str, Any], output: Any) -> None:
        err.write(f"[{c['name']}: {output.status}]\n")

    async with Komputer.boot(state=state) as computer:
        computer.agent(args.agent)
        try:
            session = await computer.login(args.agent, args.session)
        except LeaseHeld as e:  # another chat (or a login) holds the session
            err.write(f"komputer chat: {args.agent}/{args.session}: {e}\n")
            return 1
        agent = session.loop(args.model, conversation=_conversation(args),
                             hooks=Hooks(chunk=chunk, tool_call=call, tool_result=result))
        interactive = sys.stdin.isatty()
        status = 0
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, lambda: asyncio.ensure_future(agent.stop()))  # Ctrl-C stops the answer
        while True:
            if interactive:
                err.write("> ")
                err.flush()
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            if not line.strip():
                continue
            try:
                result = await agent.prompt(line.rstrip("\n"))
                if result.status == "stopped":
                    err.write("[stopped]\n")
            except ConversationBusy as e:  # another program's loop answers it: this line is not taken
                err.write(f"komputer chat: {e}\n")
                status = 1
            except StreamError as e:
                err.write(f"komputer chat: {e}\n")
                return 1
        await session.detach()
    return status


def cmd_send(args: argparse.Namespace) -> int:
    from kfs.runtime import conversations
    from kshell.agent.messages import Message
    from kshell.cli.runtime import _state

    state = _state(args)
    try:
        conversations.enqueue(state, _conversation(args), Message.user(" ".join(args.text)).to_json(),
                              by=f"cli:{os.getuid()}")
    except LookupError:
        print(f"komputer send: no conversation {_conversation(args)}", file=sys.stderr)
        return 1
    finally:
        state.close()
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    from kfs.runtime import conversations
    from kshell.cli.runtime import _state

    state = _state(args)
    try:
        conversations.request_stop(state, _conversation(args), by=f"cli:{os.getuid()}")
    except LookupError:
        print(f"komputer stop: no conversation {_conversation(args)}", file=sys.stderr)
        return 1
    finally:
        state.close()
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    def target(p: argparse.ArgumentParser) -> None:
        p.add_argument("agent", metavar="AGENT")
        p.add_argument("--session", default="chat", metavar="S", help="the agent's session (default: chat)")
        p.add_argument("--conversation", metavar="ID", help="the conversation (default: AGENT.SESSION)")

    p = add("chat", cmd_chat, "talk to AGENT's agent loop: each line a message, the answer streamed back")
    target(p)
    p.add_argument("--model", metavar="NAME", help="one of the image's [models.NAME] (default: its only one)")
    p = add("send", cmd_send, "queue a message for AGENT's agent loop: answered when its current answer ends")
    target(p)
    p.add_argument("text", nargs="+", metavar="TEXT")
    p = add("stop", cmd_stop, "stop AGENT's running agent loop (between steps, mid-answer or mid-tool)")
    target(p)
