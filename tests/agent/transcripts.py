"""Provider transcripts written from each provider's documented streaming wire format, as
builders: (event name, data) lists the test provider replays.

Anthropic Messages: message_start, content_block_start/delta/stop (text_delta, thinking_delta,
signature_delta, input_json_delta), message_delta (stop_reason), message_stop; `error` events
(overloaded_error). OpenAI Chat Completions: `data:` chunks with choices[].delta (content,
tool_calls with index/id/function.arguments pieces, DeepSeek's reasoning_content, MiniMax's
reasoning_details) and finish_reason, then `data: [DONE]`. OpenAI Responses: response.created,
response.output_item.added/done, response.output_text.delta,
response.reasoning_summary_text.delta, response.function_call_arguments.delta,
response.completed / response.incomplete.
"""

from __future__ import annotations

import json
from typing import Any

Events = list[tuple[str | None, Any]]


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


# -- Anthropic Messages ------------------------------------------------------------------------------

def anthropic(*, text: str = "", thinking: str = "", signature: str = "", redacted: str = "",
              calls: list[tuple[str, str, dict[str, Any]]] = (), stop: str | None = None, id: str = "msg_01") -> Events:
    events: Events = [("message_start", {"type": "message_start", "message": {
        "id": id, "type": "message", "role": "assistant", "model": "claude-test", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 25, "output_tokens": 1}}}), ("ping", {"type": "ping"})]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        events.extend(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas)
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if thinking:
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": p} for p in pieces(thinking)]
              + [{"type": "signature_delta", "signature": signature}])
    if redacted:
        block({"type": "redacted_thinking", "data": redacted}, [])
    if text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(text)])
    for call_id, name, args in calls:
        block({"type": "tool_use", "id": call_id, "name": name, "input": {}},
              [{"type": "input_json_delta", "partial_json": ""}]
              + [{"type": "input_json_delta", "partial_json": p} for p in pieces(json.dumps(args), 5)])
    stop = stop or ("tool_use" if calls else "end_turn")
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 15}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_overloaded() -> Events:
    return [("message_start", {"type": "message_start", "message": {"id": "msg_x", "content": [], "usage": {}}}),
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})]


# -- OpenAI Chat Completions (and DeepSeek, MiniMax, compatible servers) -------------------------------

def chat(*, text: str = "", reasoning_content: str = "", reasoning_details: list[dict[str, Any]] = (),
         calls: list[tuple[str, str, dict[str, Any]]] = (), stop: str | None = None, id: str = "chatcmpl-1") -> Events:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        return (None, {"id": id, "object": "chat.completion.chunk", "created": 1, "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events: Events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": p}) for p in pieces(reasoning_content)] if reasoning_content else []
    for detail in reasoning_details:  # MiniMax: the text in pieces, the item's fields on each
        events += [chunk({"reasoning_details": [{**detail, "text": p}]}) for p in pieces(detail["text"])]
    events += [chunk({"content": p}) for p in pieces(text)] if text else []
    for i, (call_id, name, args) in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        events += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in pieces(json.dumps(args), 4)]
    events.append(chunk({}, stop or ("tool_calls" if calls else "stop")))
    events.append((None, {"id": id, "object": "chat.completion.chunk", "choices": [],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}))
    events.append((None, "[DONE]"))
    return events


# -- OpenAI Responses --------------------------------------------------------------------------------

def responses(*, text: str = "", summary: str = "", encrypted: str = "", calls: list[tuple[str, str, dict[str, Any]]] = (),
              incomplete: bool = False, id: str = "resp_1") -> Events:
    events: Events = [("response.created", {"type": "response.created",
                                            "response": {"id": id, "status": "in_progress", "output": []}})]
    output: list[dict[str, Any]] = []
    if encrypted:
        item = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": encrypted}
        index = len(output)
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": {**item, "encrypted_content": None}}))
        events += [("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta",
                    "item_id": "rs_1", "output_index": index, "summary_index": 0, "delta": p}) for p in pieces(summary)]
        done = {**item, "summary": [{"type": "summary_text", "text": summary}] if summary else []}
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": done}))
        output.append(done)
    if text:
        index = len(output)
        item = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": {**item, "status": "in_progress", "content": []}}))
        events += [("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_1",
                    "output_index": index, "content_index": 0, "delta": p}) for p in pieces(text)]
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
        output.append(item)
    for call_id, name, args in calls:
        index = len(output)
        arguments = json.dumps(args)
        item = {"id": f"fc_{index}", "type": "function_call", "status": "completed", "call_id": call_id,
                "name": name, "arguments": arguments}
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": {**item, "arguments": "", "status": "in_progress"}}))
        events += [("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                    "item_id": item["id"], "output_index": index, "delta": p}) for p in pieces(arguments, 4)]
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
        output.append(item)
    final = {"id": id, "status": "incomplete" if incomplete else "completed", "output": output,
             "usage": {"input_tokens": 10, "output_tokens": 5},
             "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None}
    kind = "response.incomplete" if incomplete else "response.completed"
    events.append((kind, {"type": kind, "response": final}))
    return events
