"""Each model adapter against the test provider (real HTTP and SSE on loopback) replaying
transcripts in its provider's wire format: text, streamed tool-call arguments, thinking and
reasoning with signatures whose sidecar goes back byte for byte, retries, the length stop, and
the API key from a K secret that no error shows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kfs.kstate import KState
from kfs.runtime import secrets
from kshell.agent.errors import ModelHTTPError, StreamError
from kshell.agent.messages import Message, ToolSpec
from kshell.agent.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    deepseek,
    deepseek_anthropic,
    minimax,
    openai_compatible,
)
from tests.agent import transcripts as t
from tests.agent.provider import Provider

T = TypeVar("T")
HANG = 60.0
TOOLS = [ToolSpec("shell", "run a command", {"type": "object", "properties": {"command": {"type": "string"}}})]
ARGS = {"command": "ls -la ~/work", "note": "ünïcode \"quoted\""}


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(make(), HANG))


def adapters(url: str) -> dict[str, Any]:
    return {
        "anthropic": AnthropicModel("claude-test", base_url=url, key="k-a", retry_base=0.01),
        "deepseek-anthropic": deepseek_anthropic("deepseek-chat", base_url=url, key="k-d", retry_base=0.01),
        "chat": OpenAIChatModel("gpt-test", base_url=url, key="k-o", retry_base=0.01),
        "deepseek": deepseek("deepseek-reasoner", base_url=url, key="k-d", retry_base=0.01),
        "minimax": minimax("MiniMax-M2", base_url=url, key="k-m", retry_base=0.01),
        "compatible": openai_compatible(url, "llama", retry_base=0.01),
        "responses": OpenAIResponsesModel("gpt-test", base_url=url, key="k-r", retry_base=0.01),
    }


def wire(kind: str, **parts: Any) -> list[tuple[str | None, Any]]:
    if kind in ("anthropic", "deepseek-anthropic"):
        return t.anthropic(text=parts.get("text", ""), calls=parts.get("calls", ()),
                           stop="max_tokens" if parts.get("length") else None)
    if kind == "responses":
        return t.responses(text=parts.get("text", ""), calls=parts.get("calls", ()), incomplete=parts.get("length", False))
    return t.chat(text=parts.get("text", ""), calls=parts.get("calls", ()), stop="length" if parts.get("length") else None)


KINDS = ["anthropic", "deepseek-anthropic", "chat", "deepseek", "minimax", "compatible", "responses"]
PATHS = {"anthropic": "/v1/messages", "deepseek-anthropic": "/v1/messages", "responses": "/responses"}


@pytest.mark.parametrize("kind", KINDS)
def test_text_streams_in_pieces_and_completes(kind: str) -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = adapters(provider.url)[kind]
            provider.replies.append({"events": wire(kind, text="Hello from the test provider.")})
            chunks = [c async for c in model.stream([Message.system("be brief"), Message.user("hi")])]
            assert "".join(c.text for c in chunks if c.kind == "text") == "Hello from the test provider."
            assert sum(c.kind == "text" for c in chunks) > 1
            assert [c.kind for c in chunks[-2:]] == ["finish", "done"]
            response = chunks[-1].response
            assert response is not None and response.stop == "end" and response.message.text == "Hello from the test provider."
            request = provider.requests[0]
            assert request.path == PATHS.get(kind, "/chat/completions") and request.json["stream"] is True
            assert "be brief" in request.body.decode()

    run(main)


@pytest.mark.parametrize("kind", KINDS)
def test_tool_call_arguments_stream_and_parse(kind: str) -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = adapters(provider.url)[kind]
            provider.replies.append({"events": wire(kind, text="Listing.", calls=[("call_1", "shell", ARGS),
                                                                               ("call_2", "shell", {"command": "pwd"})])})
            chunks = [c async for c in model.stream([Message.user("list")], tools=TOOLS)]
            assert [c.name for c in chunks if c.kind == "tool_call"] == ["shell", "shell"]
            response = chunks[-1].response
            calls = [b for b in response.message.content if b["type"] == "tool_call"]
            assert [(c["id"], c["arguments"]) for c in calls] == [("call_1", ARGS), ("call_2", {"command": "pwd"})]
            assert response.stop == "tool_calls"
            assert sum(c.kind == "tool_args" for c in chunks) > 2
            sent = provider.requests[0].json
            assert "shell" in json.dumps(sent["tools"])
            # the tool results go back in the provider's shape, and the provider's arguments with them
            results = [Message.tool_result("call_1", "shell", "a\nb\n"), Message.tool_result("call_2", "shell", "/home")]
            provider.replies.append({"events": wire(kind, text="Done.")})
            await model.complete([Message.user("list"), response.message, *results], tools=TOOLS)
            body = provider.requests[1].body.decode()
            assert "call_1" in body and "a\\nb\\n" in body and "/home" in body

    run(main)


@pytest.mark.parametrize("kind", ["anthropic", "chat", "responses"])
def test_length_stop_is_reported(kind: str) -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = adapters(provider.url)[kind]
            provider.replies.append({"events": wire(kind, text="This answer is cut", length=True)})
            response = await model.complete([Message.user("a long essay")])
            assert response.stop == "length" and response.message.text == "This answer is cut"

    run(main)


def test_anthropic_signed_thinking_goes_back_byte_for_byte() -> None:
    signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDJ+/==" + "x" * 300
    thinking = "Let me think: the user wants ünïcode \\ and \"quotes\"."

    async def main() -> None:
        async with Provider() as provider:
            model = AnthropicModel("claude-test", base_url=provider.url, key="k")
            provider.replies.append({"events": t.anthropic(thinking=thinking, signature=signature, redacted="REDACTED==data",
                                                           calls=[("toolu_1", "shell", ARGS)])})
            response = await model.complete([Message.user("go")], tools=TOOLS, settings={"thinking": {"type": "enabled", "budget_tokens": 1024}})
            assert [b["type"] for b in response.message.content] == ["thinking", "tool_call"]
            assert response.message.content[0]["text"] == thinking
            provider.replies.append({"events": t.anthropic(text="ok")})
            await model.complete([Message.user("go"), response.message, Message.tool_result("toolu_1", "shell", "out")], tools=TOOLS)
            sent = provider.requests[1].json["messages"][1]["content"]
            assert sent[0] == {"type": "thinking", "thinking": thinking, "signature": signature}
            assert sent[1] == {"type": "redacted_thinking", "data": "REDACTED==data"}
            assert sent[2] == {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": ARGS}
            assert json.dumps(signature).encode() in provider.requests[1].body
            assert provider.requests[1].json["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"

    run(main)


def test_responses_encrypted_reasoning_goes_back_byte_for_byte() -> None:
    encrypted = "gAAAAABo" + "Zm9vYmFy/+=" * 40

    async def main() -> None:
        async with Provider() as provider:
            model = OpenAIResponsesModel("gpt-test", base_url=provider.url, key="k")
            provider.replies.append({"events": t.responses(summary="Thinking about it.", encrypted=encrypted,
                                                           calls=[("call_9", "shell", ARGS)])})
            response = await model.complete([Message.user("go")], tools=TOOLS)
            assert response.message.content[0] == {"type": "thinking", "text": "Thinking about it."}
            assert provider.requests[0].json["include"] == ["reasoning.encrypted_content"]
            provider.replies.append({"events": t.responses(text="ok")})
            await model.complete([Message.user("go"), response.message, Message.tool_result("call_9", "shell", "out")])
            items = provider.requests[1].json["input"]
            assert items[1] == {"id": "rs_1", "type": "reasoning", "encrypted_content": encrypted,
                                "summary": [{"type": "summary_text", "text": "Thinking about it."}]}
            assert items[2]["type"] == "function_call" and items[2]["arguments"] == json.dumps(ARGS)
            assert items[3] == {"type": "function_call_output", "call_id": "call_9", "output": "out"}
            assert json.dumps(encrypted).encode() in provider.requests[1].body

    run(main)


def test_deepseek_reasoning_content_goes_back_byte_for_byte() -> None:
    reasoning = "First, ünïcode and \"quotes\"; then the tool.\n"

    async def main() -> None:
        async with Provider() as provider:
            model = deepseek("deepseek-reasoner", base_url=provider.url, key="k")
            provider.replies.append({"events": t.chat(reasoning_content=reasoning, calls=[("call_0", "shell", ARGS)])})
            response = await model.complete([Message.user("go")], tools=TOOLS)
            assert response.message.content[0] == {"type": "thinking", "text": reasoning}
            provider.replies.append({"events": t.chat(text="ok")})
            await model.complete([Message.user("go"), response.message, Message.tool_result("call_0", "shell", "out")])
            assistant = provider.requests[1].json["messages"][1]
            assert assistant["reasoning_content"] == reasoning
            assert assistant["tool_calls"][0]["function"]["arguments"] == json.dumps(ARGS)  # the text as streamed
            assert json.dumps(reasoning).encode() in provider.requests[1].body

    run(main)


def test_minimax_reasoning_details_go_back_byte_for_byte() -> None:
    detail = {"type": "reasoning.text", "id": "reasoning-text-1", "format": "MiniMax-response-v1", "index": 0,
              "text": "The user asks for a listing; ünïcode \"ok\"."}

    async def main() -> None:
        async with Provider() as provider:
            model = minimax(base_url=provider.url, key="k")
            provider.replies.append({"events": t.chat(reasoning_details=[detail], calls=[("call_0", "shell", ARGS)])})
            response = await model.complete([Message.user("go")], tools=TOOLS)
            assert provider.requests[0].json["reasoning_split"] is True
            assert response.message.content[0]["text"] == detail["text"]
            provider.replies.append({"events": t.chat(text="ok")})
            await model.complete([Message.user("go"), response.message, Message.tool_result("call_0", "shell", "out")])
            assert provider.requests[1].json["messages"][1]["reasoning_details"] == [detail]

    run(main)


def test_plain_chat_does_not_send_reasoning_back() -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = openai_compatible(provider.url, "llama")
            provider.replies.append({"events": t.chat(reasoning_content="hmm", text="hi")})
            response = await model.complete([Message.user("go")])
            provider.replies.append({"events": t.chat(text="ok")})
            await model.complete([Message.user("go"), response.message, Message.user("again")])
            assert "reasoning_content" not in provider.requests[1].json["messages"][1]
            assert "authorization" not in provider.requests[0].headers  # no key: no header

    run(main)


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_http_errors_are_retried(status: int) -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = OpenAIChatModel("m", base_url=provider.url, key="k", retry_base=0.01)
            provider.replies += [{"status": status, "headers": {"retry-after": "0"}, "json": {"error": {"message": "slow down"}}},
                                 {"status": status, "json": {"error": {"message": "again"}}},
                                 {"events": t.chat(text="finally")}]
            assert (await model.complete([Message.user("x")])).message.text == "finally"
            assert len(provider.requests) == 3

    run(main)


@pytest.mark.parametrize("kind", KINDS)
def test_every_adapter_retries_a_rate_limit_and_a_server_error(kind: str) -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = adapters(provider.url)[kind]
            provider.replies += [{"status": 429, "headers": {"retry-after": "0"}, "json": {"error": {"message": "slow"}}},
                                 {"status": 500, "json": {"error": {"message": "oops"}}},
                                 {"events": wire(kind, text="finally")}]
            assert (await model.complete([Message.user("x")])).message.text == "finally"
            assert len(provider.requests) == 3

    run(main)


def test_anthropic_overloaded_in_stream_is_retried() -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = AnthropicModel("c", base_url=provider.url, key="k", retry_base=0.01)
            provider.replies += [{"events": t.anthropic_overloaded()}, {"status": 529, "json": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}},
                                 {"events": t.anthropic(text="there")}]
            assert (await model.complete([Message.user("x")])).message.text == "there"
            assert len(provider.requests) == 3

    run(main)


def test_retries_end_in_a_typed_error_and_a_client_error_is_not_retried() -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = OpenAIChatModel("m", base_url=provider.url, key="k", retries=2, retry_base=0.01)
            provider.replies += [{"status": 429, "json": {"error": {"message": "rate limited"}}}] * 3
            with pytest.raises(ModelHTTPError) as caught:
                await model.complete([Message.user("x")])
            assert caught.value.status == 429 and "rate limited" in str(caught.value) and len(provider.requests) == 3
            provider.replies.append({"status": 400, "json": {"error": {"message": "bad request"}}})
            with pytest.raises(ModelHTTPError) as caught:
                await model.complete([Message.user("x")])
            assert caught.value.status == 400 and len(provider.requests) == 4
            provider.replies.append({"events": t.chat(text="cut")[:2]})  # the stream ends early
            with pytest.raises(StreamError):
                await model.complete([Message.user("x")])

    run(main)


def test_key_comes_from_a_k_secret_and_no_error_shows_it(tmp_path: Path) -> None:
    key = "sk-test-7f3a9c1e5b2d4a6f8e0c"
    state = KState(tmp_path / "state", create=True)
    secrets.put(state, "anthropic_key", key.encode(), by="test")

    async def main() -> None:
        async with Provider() as provider:
            model = AnthropicModel("c", base_url=provider.url, key_secret="anthropic_key", retries=0).bind(state)
            assert key not in repr(model)
            provider.replies.append({"events": t.anthropic(text="hi")})
            await model.complete([Message.user("x")])
            assert provider.requests[0].headers["x-api-key"] == key
            provider.replies.append({"status": 401, "json": {"error": {"type": "authentication_error",
                                                                       "message": f"invalid x-api-key {key}"}}})
            with pytest.raises(ModelHTTPError) as caught:
                await model.complete([Message.user("x")])
            assert key not in str(caught.value) and "[redacted]" in str(caught.value)
            unbound = AnthropicModel("c", base_url=provider.url, key_secret="nope").bind(state)
            with pytest.raises(StreamError, match="no secret nope"):
                await unbound.complete([Message.user("x")])

    try:
        run(main)
    finally:
        state.close()


def test_an_anchored_message_is_a_cache_anchor_for_anthropic() -> None:
    async def main() -> None:
        async with Provider() as provider:
            model = AnthropicModel("c", base_url=provider.url, key="k")
            provider.replies.append({"events": t.anthropic(text="ok")})
            system = Message.system("a long system prompt")
            system.anchor = True
            await model.complete([system, Message.user("hi")])
            body = provider.requests[0].json
            assert body["system"] == [{"type": "text", "text": "a long system prompt", "cache_control": {"type": "ephemeral"}}]
            assert "cache_control" not in json.dumps(body["messages"])

    run(main)
