"""OpenAI Chat Completions (`POST /chat/completions`, streamed), and the providers that speak
it: DeepSeek (`reasoning_content`), MiniMax (`reasoning_details`, with `reasoning_split`) and
any OpenAI-compatible server at a base URL (llama.cpp's server, vLLM, Ollama).

Sidecar: `{"arguments": {call id: the arguments' JSON text as streamed}}`, plus the
reasoning the provider wants back (`reasoning_content` text for DeepSeek, the
`reasoning_details` list for MiniMax), put on the assistant message as it came.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from kshell.agent.errors import ModelHTTPError, StreamError
from kshell.agent.messages import Chunk, Message, ToolSpec
from kshell.agent.models.base import Assembly, Model
from kshell.agent.sse import SSE

__all__ = ["OpenAIChatModel", "deepseek", "minimax", "openai_compatible"]

STOPS = {"stop": "end", "tool_calls": "tool_calls", "function_call": "tool_calls", "length": "length",
         "content_filter": "end"}


class OpenAIChatModel(Model):
    """`reasoning`: which reasoning field the provider streams and wants back on the assistant
    message ("reasoning_content", "reasoning_details", or "" for none sent back)."""

    family = "openai-chat"
    path = "/chat/completions"
    default_base = "https://api.openai.com/v1"

    def __init__(self, model: str, *, reasoning: str = "", **options: Any) -> None:
        super().__init__(model, **options)
        self.reasoning = reasoning

    def body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": [m for msg in messages for m in self._wire(msg)],
                                "stream": True, "stream_options": {"include_usage": True}}
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in tools]
        body.update(settings)
        return body

    def _wire(self, message: Message) -> list[dict[str, Any]]:
        text = "".join(b["text"] for b in message.content if b["type"] == "text")
        if message.role == "tool":
            return [{"role": "tool", "tool_call_id": b["call_id"], "content": b["output"]}
                    for b in message.content if b["type"] == "tool_result"]
        if message.role != "assistant":
            return [{"role": message.role, "content": text}]
        side = message.sidecar.get(self.family) or {}
        raw = side.get("arguments", {})
        wire: dict[str, Any] = {"role": "assistant", "content": text or None}
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"],
                               "arguments": raw.get(b["id"], json.dumps(b["arguments"], separators=(",", ":")))}}
                 for b in message.content if b["type"] == "tool_call"]
        if calls:
            wire["tool_calls"] = calls
        if self.reasoning and self.reasoning in side:
            wire[self.reasoning] = side[self.reasoning]
        return [wire]

    async def parse(self, events: AsyncIterator[SSE], into: Assembly) -> AsyncIterator[Chunk]:
        stop = ""
        reasoning: list[str] = []
        details: dict[int, dict[str, Any]] = {}
        ids: dict[int, str] = {}
        async for event in events:
            if event.data.strip() == "[DONE]":
                break
            data = json.loads(event.data)
            if "error" in data:
                error = data["error"] if isinstance(data["error"], dict) else {"message": str(data["error"])}
                code = error.get("code")
                status = code if isinstance(code, int) else 429 if "rate" in str(error.get("type", "")) else 0
                text = f"{self.name}: {error.get('message', 'error')}"
                raise ModelHTTPError(text, status) if status else StreamError(text)
            into.id = into.id or data.get("id", "")
            if data.get("usage"):
                into.usage.update(data["usage"])
            for choice in data.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("reasoning_content"):
                    reasoning.append(delta["reasoning_content"])
                    yield into.thinking(delta["reasoning_content"])
                for item in delta.get("reasoning_details") or ():
                    at = item.get("index", len(details))
                    held = details.setdefault(at, {k: v for k, v in item.items() if k != "text"} | {"text": ""})
                    held["text"] += item.get("text") or ""
                    if item.get("text"):
                        yield into.thinking(item["text"])
                if delta.get("content"):
                    yield into.text(delta["content"])
                for call in delta.get("tool_calls") or ():
                    index = call.get("index", 0)
                    function = call.get("function") or {}
                    if index not in ids:
                        ids[index] = call.get("id") or f"call_{index}"
                        yield into.call(index, ids[index], function.get("name", ""))
                    elif function.get("name"):
                        into.calls[index]["name"] += function["name"]
                    if function.get("arguments"):
                        yield into.arguments(index, function["arguments"])
                stop = choice.get("finish_reason") or stop
        if not stop:
            raise StreamError(f"{self.name}: the stream ended without a finish_reason")
        side: dict[str, Any] = {"arguments": {ids[i]: into.raw_arguments(i) for i in ids}}
        if reasoning:
            side["reasoning_content"] = "".join(reasoning)
        if details:
            side["reasoning_details"] = [details[i] for i in sorted(details)]
        yield Chunk("finish", stop=STOPS.get(stop, "end"))
        yield into.finish(STOPS.get(stop, "end"), side)


def deepseek(model: str = "deepseek-chat", **options: Any) -> OpenAIChatModel:
    """DeepSeek's OpenAI-shaped API: its `reasoning_content` goes back with the assistant
    message (thinking mode with tool calls needs it within a turn)."""
    options.setdefault("base_url", "https://api.deepseek.com")
    return OpenAIChatModel(model, reasoning="reasoning_content", **options)


def minimax(model: str = "MiniMax-M2", **options: Any) -> OpenAIChatModel:
    """MiniMax's OpenAI-shaped API with `reasoning_split`: reasoning arrives as
    `reasoning_details` and is sent back on the assistant message unchanged."""
    options.setdefault("base_url", "https://api.minimax.io/v1")
    settings = {"reasoning_split": True, **(options.pop("settings", None) or {})}
    return OpenAIChatModel(model, reasoning="reasoning_details", settings=settings, **options)


def openai_compatible(base_url: str, model: str, **options: Any) -> OpenAIChatModel:
    """Any server speaking Chat Completions at `base_url` (…/v1): llama.cpp, vLLM, Ollama."""
    return OpenAIChatModel(model, base_url=base_url, **options)
