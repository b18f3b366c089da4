"""A model whose answers a Python function writes: for tests, examples and the loop's
benchmark (the loop's own cost without a provider). It streams like a real adapter: text in
pieces, each tool call's JSON arguments in pieces, a finish chunk, the whole answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from kshell.agent.messages import Chunk, Message, ToolSpec
from kshell.agent.models.base import Assembly, Model

__all__ = ["ScriptedModel"]

Reply = Mapping[str, Any]  # {"text": str, "calls": [{"name", "arguments"}], "stop": "end"|"length"}


class ScriptedModel(Model):
    """`script(messages)` gives the next answer as `{"text": ..., "calls": [{"name": ...,
    "arguments": {...}}], "stop": ...}` (a str is text alone). `piece`: characters per chunk;
    `delay`: seconds between chunks (a slow stream, to stop in the middle of)."""

    family = "scripted"

    def __init__(self, script: Callable[[list[Message]], Reply | str], *, piece: int = 16, delay: float = 0.0,
                 name: str = "scripted") -> None:
        super().__init__(name, name=name, base_url="scripted:")
        self.script = script
        self.piece = piece
        self.delay = delay
        self.calls = 0

    async def stream(self, messages: Sequence[Message], tools: Iterable[ToolSpec] = (),
                     settings: Mapping[str, Any] | None = None) -> AsyncIterator[Chunk]:
        reply = self.script(list(messages))
        if isinstance(reply, str):
            reply = {"text": reply}
        self.calls += 1
        into = Assembly(self.family)
        into.id = f"scripted-{self.calls}"
        text = reply.get("text", "")
        for start in range(0, len(text), self.piece):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield into.text(text[start:start + self.piece])
        for index, call in enumerate(reply.get("calls") or ()):
            yield into.call(index, call.get("id") or f"call-{self.calls}-{index}", call["name"])
            args = json.dumps(call.get("arguments") or {})
            for start in range(0, len(args), self.piece):
                if self.delay:
                    await asyncio.sleep(self.delay)
                yield into.arguments(index, args[start:start + self.piece])
        stop = reply.get("stop", "end")
        yield Chunk("finish", stop=stop if not reply.get("calls") else "tool_calls")
        yield into.finish(stop)
