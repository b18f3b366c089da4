"""OpenAI Responses (`POST /responses`, streamed, `store: false`).

Sidecar: the answer's output items as `response.output_item.done` gave them (reasoning items
with their `encrypted_content`, messages, function calls), sent back as input items in place of
the standard blocks: stateless continuation of reasoning, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from kshell.agent.errors import ModelHTTPError, StreamError
from kshell.agent.messages import Chunk, Message, ToolSpec
from kshell.agent.models.base import Assembly, Model
from kshell.agent.sse import SSE

__all__ = ["OpenAIResponsesModel"]


class OpenAIResponsesModel(Model):
    family = "openai-responses"
    path = "/responses"
    default_base = "https://api.openai.com/v1"

    def body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: dict[str, Any]) -> dict[str, Any]:
        settings = dict(settings)
        body: dict[str, Any] = {"model": self.model, "input": [i for m in messages for i in self._items(m)],
                                "stream": True, "store": False, "include": ["reasoning.encrypted_content"]}
        if "max_tokens" in settings:
            body["max_output_tokens"] = settings.pop("max_tokens")
        if tools:
            body["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                              "parameters": t.parameters} for t in tools]
        body.update(settings)
        return body

    def _items(self, message: Message) -> list[dict[str, Any]]:
        text = "".join(b["text"] for b in message.content if b["type"] == "text")
        if message.role == "tool":
            return [{"type": "function_call_output", "call_id": b["call_id"], "output": b["output"]}
                    for b in message.content if b["type"] == "tool_result"]
        if message.role in ("system", "user"):
            return [{"role": "developer" if message.role == "system" else "user", "content": text}]
        side = message.sidecar.get(self.family)
        if side is not None:
            return [dict(item) for item in side["output"]]
        items: list[dict[str, Any]] = [{"role": "assistant", "content": text}] if text else []
        items += [{"type": "function_call", "call_id": b["id"], "name": b["name"],
                   "arguments": json.dumps(b["arguments"], separators=(",", ":"))}
                  for b in message.content if b["type"] == "tool_call"]
        return items

    async def parse(self, events: AsyncIterator[SSE], into: Assembly) -> AsyncIterator[Chunk]:
        output: dict[int, dict[str, Any]] = {}
        stop = ""
        async for event in events:
            data = json.loads(event.data)
            kind = data.get("type", event.event)
            if kind == "response.created":
                into.id = data["response"].get("id", "")
            elif kind == "response.output_item.added":
                item = data["item"]
                if item.get("type") == "function_call":
                    yield into.call(data["output_index"], item.get("call_id", ""), item.get("name", ""))
            elif kind == "response.output_text.delta":
                yield into.text(data["delta"])
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                yield into.thinking(data["delta"])
            elif kind == "response.function_call_arguments.delta":
                yield into.arguments(data["output_index"], data["delta"])
            elif kind == "response.output_item.done":
                output[data["output_index"]] = data["item"]
            elif kind in ("response.completed", "response.incomplete"):
                response = data["response"]
                into.usage.update(response.get("usage") or {})
                reason = (response.get("incomplete_details") or {}).get("reason", "")
                stop = "length" if kind == "response.incomplete" and reason == "max_output_tokens" else "end"
                break
            elif kind in ("response.failed", "error"):
                error = (data.get("response") or {}).get("error") or data.get("error") or data
                code = str(error.get("code", ""))
                status = 429 if "rate_limit" in code else 500 if code in ("server_error", "overloaded") else 0
                text = f"{self.name}: {error.get('message', code or 'error')}"
                raise ModelHTTPError(text, status) if status else StreamError(text)
        else:
            raise StreamError(f"{self.name}: the stream ended before response.completed")
        for index, item in output.items():  # the final arguments and call id, as the item says them
            if item.get("type") == "function_call" and index in into.calls and not into.args.get(index):
                into.args[index] = [item.get("arguments", "")]
        yield Chunk("finish", stop=stop)
        yield into.finish(stop, {"output": [output[i] for i in sorted(output)]})
