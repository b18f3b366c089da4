"""Anthropic Messages (`POST /v1/messages`, streamed), and DeepSeek's Anthropic-shaped API
(the same protocol at https://api.deepseek.com/anthropic).

Sidecar: the answer's content blocks as the provider sent them (`thinking` with its
`signature`, `redacted_thinking` with its `data`, text, tool_use), sent back in place of the
standard blocks, so signed thinking reaches the provider byte for byte, as its tool-use
continuation requires. A message with `anchor` gets `cache_control` on its last block.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from kshell.agent.errors import ModelHTTPError, StreamError
from kshell.agent.messages import Chunk, Message, ToolSpec
from kshell.agent.models.base import Assembly, Model
from kshell.agent.sse import SSE

__all__ = ["AnthropicModel", "deepseek_anthropic"]

STOPS = {"end_turn": "end", "stop_sequence": "end", "tool_use": "tool_calls", "max_tokens": "length",
         "model_context_window_exceeded": "length", "pause_turn": "end", "refusal": "end"}
IN_STREAM_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


class AnthropicModel(Model):
    family = "anthropic"
    path = "/v1/messages"
    default_base = "https://api.anthropic.com"
    version = "2023-06-01"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key, "anthropic-version": self.version} if key else {"anthropic-version": self.version}

    def body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: dict[str, Any]) -> dict[str, Any]:
        system = [b for m in messages if m.role == "system" for b in _blocks(m, self.family)]
        turns: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "system":
                continue
            role = "assistant" if message.role == "assistant" else "user"
            blocks = _blocks(message, self.family)
            if not blocks:
                continue
            if turns and turns[-1]["role"] == role:  # tool results (and a user's words) in one turn
                turns[-1]["content"].extend(blocks)
            else:
                turns.append({"role": role, "content": blocks})
        body: dict[str, Any] = {"model": self.model, "max_tokens": 4096, "messages": turns, "stream": True}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in tools]
        body.update(settings)
        return body

    async def parse(self, events: AsyncIterator[SSE], into: Assembly) -> AsyncIterator[Chunk]:
        raw: dict[int, dict[str, Any]] = {}  # the blocks as sent, for the sidecar
        stop = ""
        async for event in events:
            data = json.loads(event.data)
            kind = data.get("type", event.event)
            if kind == "message_start":
                message = data.get("message", {})
                into.id = message.get("id", "")
                into.usage.update(message.get("usage") or {})
            elif kind == "content_block_start":
                index, block = data["index"], dict(data["content_block"])
                raw[index] = block
                if block["type"] == "tool_use":
                    block["input"] = ""
                    yield into.call(index, block["id"], block["name"])
                elif block["type"] == "text" and block.get("text"):
                    yield into.text(block["text"])
                elif block["type"] == "thinking" and block.get("thinking"):
                    yield into.thinking(block["thinking"])
            elif kind == "content_block_delta":
                index, delta = data["index"], data["delta"]
                block = raw[index]
                dtype = delta.get("type")
                if dtype == "text_delta":
                    block["text"] = block.get("text", "") + delta["text"]
                    yield into.text(delta["text"])
                elif dtype == "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta["thinking"]
                    yield into.thinking(delta["thinking"])
                elif dtype == "signature_delta":
                    block["signature"] = block.get("signature", "") + delta["signature"]
                elif dtype == "input_json_delta":
                    block["input"] += delta["partial_json"]
                    yield into.arguments(index, delta["partial_json"])
            elif kind == "message_delta":
                stop = (data.get("delta") or {}).get("stop_reason") or stop
                into.usage.update(data.get("usage") or {})
            elif kind == "message_stop":
                break
            elif kind == "error":
                error = data.get("error") or {}
                etype = error.get("type", "error")
                status = IN_STREAM_STATUS.get(etype)
                text = f"{self.name}: {etype}: {error.get('message', '')}"
                raise ModelHTTPError(text, status) if status else StreamError(text)
        else:
            raise StreamError(f"{self.name}: the stream ended before message_stop")
        blocks = []
        for index in sorted(raw):
            block = raw[index]
            if block["type"] == "tool_use":
                block = {**block, "input": _json(block["input"])}
            blocks.append(block)
        yield Chunk("finish", stop=STOPS.get(stop, "end"))
        yield into.finish(STOPS.get(stop, "end"), {"content": blocks})


def _json(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return {}


def _blocks(message: Message, family: str) -> list[dict[str, Any]]:
    """The message's content in Anthropic's blocks: the sidecar's own when it has one."""
    side = message.sidecar.get(family)
    if message.role == "assistant" and side is not None:
        blocks = [dict(b) for b in side["content"]]
    else:
        blocks = []
        for block in message.content:
            kind = block["type"]
            if kind == "text" and block["text"]:
                blocks.append({"type": "text", "text": block["text"]})
            elif kind == "tool_call":
                blocks.append({"type": "tool_use", "id": block["id"], "name": block["name"],
                               "input": block["arguments"]})
            elif kind == "tool_result":
                blocks.append({"type": "tool_result", "tool_use_id": block["call_id"], "content": block["output"],
                               **({"is_error": True} if block.get("status", "ok") != "ok" else {})})
    if message.anchor and blocks:
        blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
    return blocks


def deepseek_anthropic(model: str = "deepseek-chat", **options: Any) -> AnthropicModel:
    """DeepSeek through its Anthropic-shaped API."""
    options.setdefault("base_url", "https://api.deepseek.com/anthropic")
    return AnthropicModel(model, **options)
