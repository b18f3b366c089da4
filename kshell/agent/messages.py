"""What the loop, the adapters and the store pass each other: messages of standard content
blocks, the chunks a streamed answer arrives in, and the answer itself.

A message's `content` holds only standard blocks the core understands:
`{"type": "text", "text"}`, `{"type": "thinking", "text"}`, `{"type": "tool_call", "id", "name",
"arguments"}` (a dict) and `{"type": "tool_result", "call_id", "name", "output", "status"}`
(status: ok, error, stopped, uncertain). What a provider needs back to continue (signed
thinking, encrypted reasoning, reasoning_details) is its adapter's `sidecar` entry, kept as the
provider sent it and never read by the core; `anchor` is the one generic provider flag (a cache
anchor: the adapter marks the prompt up to this message as cacheable, where it can).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Chunk", "Message", "Response", "ToolSpec", "text_of", "tool_calls"]


@dataclass(slots=True)
class Message:
    """One message of a conversation (role: system, user, assistant or tool)."""

    role: str
    content: list[dict[str, Any]]
    sidecar: dict[str, Any] = field(default_factory=dict)
    anchor: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [{"type": "text", "text": text}])

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", [{"type": "text", "text": text}])

    @classmethod
    def tool_result(cls, call_id: str, name: str, output: str, status: str = "ok") -> Message:
        return cls("tool", [{"type": "tool_result", "call_id": call_id, "name": name, "output": output,
                             "status": status}])

    @property
    def text(self) -> str:
        return text_of(self)

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.sidecar:
            record["sidecar"] = self.sidecar
        if self.anchor:
            record["anchor"] = True
        if self.meta:
            record["meta"] = self.meta
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Message:
        return cls(record["role"], list(record["content"]), dict(record.get("sidecar") or {}),
                   bool(record.get("anchor")), dict(record.get("meta") or {}))


def text_of(message: Message) -> str:
    return "".join(b["text"] for b in message.content if b["type"] == "text")


def tool_calls(message: Message) -> list[dict[str, Any]]:
    return [b for b in message.content if b["type"] == "tool_call"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told of a tool: its name, what it does, its arguments' JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a streamed answer. kind: `text`, `thinking` (text: the piece),
    `tool_call` (a call begins: index, id, name), `tool_args` (index, text: a piece of its JSON
    arguments), `finish` (stop: end, tool_calls or length), `done` (response: the whole answer)."""

    kind: str
    text: str = ""
    index: int = 0
    id: str = ""
    name: str = ""
    stop: str = ""
    response: Response | None = None

    def to_json(self) -> dict[str, Any]:
        """What a stream event carries (never the whole response: the message says that)."""
        record: dict[str, Any] = {"kind": self.kind}
        if self.text:
            record["text"] = self.text
        if self.kind in ("tool_call", "tool_args"):
            record["index"] = self.index
        if self.id:
            record["id"] = self.id
        if self.name:
            record["name"] = self.name
        if self.stop:
            record["stop"] = self.stop
        return record


@dataclass(slots=True)
class Response:
    """A whole answer: the assistant message, why it stopped (end, tool_calls, length), the
    provider's own id for it and its token usage."""

    message: Message
    stop: str
    id: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
