"""What every model adapter shares: one surface (`complete`, `stream`), the HTTP call with its
retries, the API key taken from a K secret and kept out of every message, and the assembly of
streamed pieces into one answer.

An adapter (anthropic.py, openai_chat.py, openai_responses.py) says only how messages become its
provider's request body and how its provider's events become chunks. Retries: an HTTP 408, 409,
429 or 5xx, a connection that fails, or an in-stream `overloaded`/`rate limit` error before any
piece of the answer came, is tried again (after the provider's `retry-after` when it gives one,
else 0.5 s doubling, at most `retries` times); after a piece came, the loop sees a StreamError.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import httpx

from kshell.agent.errors import ModelHTTPError, StreamError
from kshell.agent.messages import Chunk, Message, Response, ToolSpec
from kshell.agent.sse import SSE, parse_sse

__all__ = ["Assembly", "Key", "Model"]

REDACTED = "[redacted]"


class Key:
    """An API key: a K secret's handle (its value read from the state when first needed) or a
    value given in code. Its repr, and every error the adapter raises, show the handle only."""

    def __init__(self, value: str | None = None, *, secret: str | None = None) -> None:
        self._value = value
        self.secret = secret
        self._state: Any = None

    def bind(self, state: Any) -> None:
        """The KState whose secrets hold this key (Komputer.boot binds its models)."""
        self._state = state

    def value(self) -> str:
        if self._value is None and self.secret is not None:
            if self._state is None:
                raise StreamError(f"model key: secret {self.secret} has no state to be read from "
                                  "(give the model to Komputer.boot(models=...))")
            from kfs.runtime.secrets import SecretError, reveal

            try:
                self._value = reveal(self._state, self.secret).decode().strip()
            except SecretError as e:
                raise StreamError(f"model key: {e}") from None
        return self._value or ""

    def __repr__(self) -> str:
        return f"Key(secret={self.secret!r})" if self.secret else "Key(<given>)"


class Model:
    """A model behind one provider protocol. `complete(messages, tools=..., settings=...)`
    gives the whole answer; `stream(...)` the same as chunks, the last a `done` chunk holding
    it. `settings` (per model, overridden per call): `max_tokens`, `temperature`, and any field
    the provider's request body takes, merged in as given."""

    family = ""  # the key of its sidecar entries on messages
    path = ""
    default_base = ""

    def __init__(self, model: str, *, base_url: str | None = None, key: str | Key | None = None,
                 key_secret: str | None = None, headers: Mapping[str, str] | None = None,
                 settings: Mapping[str, Any] | None = None, retries: int = 3, retry_base: float = 0.5,
                 timeout: float = 600.0, name: str | None = None) -> None:
        self.model = model
        self.name = name or model
        self.base_url = (base_url or self.default_base).rstrip("/")
        self.key = key if isinstance(key, Key) else Key(key, secret=key_secret)
        self.headers = dict(headers or {})
        self.settings = dict(settings or {})
        self.retries = retries
        self.retry_base = retry_base
        self.timeout = timeout
        self._client: tuple[asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={self.base_url!r}, key={self.key!r})"

    def bind(self, state: Any) -> Model:
        self.key.bind(state)
        return self

    # -- what an adapter says --------------------------------------------------------------------

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"} if key else {}

    def body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, events: AsyncIterator[SSE], into: Assembly) -> AsyncIterator[Chunk]:
        raise NotImplementedError

    # -- the surface -----------------------------------------------------------------------------

    async def complete(self, messages: Sequence[Message], tools: Iterable[ToolSpec] = (),
                       settings: Mapping[str, Any] | None = None) -> Response:
        async with contextlib.aclosing(self.stream(messages, tools, settings)) as chunks:
            async for chunk in chunks:
                if chunk.kind == "done" and chunk.response is not None:
                    return chunk.response
        raise StreamError(f"{self.name}: the stream ended without an answer")

    async def stream(self, messages: Sequence[Message], tools: Iterable[ToolSpec] = (),
                     settings: Mapping[str, Any] | None = None) -> AsyncIterator[Chunk]:
        merged = {**self.settings, **(settings or {})}
        payload = json.dumps(self.body(list(messages), list(tools), merged), separators=(",", ":")).encode()
        key = self.key.value()
        headers = {"content-type": "application/json", "accept": "text/event-stream", **self.headers,
                   **self.auth_headers(key)}
        url = self.base_url + self.path
        attempt = 0
        while True:
            into = Assembly(self.family)
            started = False
            try:
                async with self.client().stream("POST", url, content=payload, headers=headers) as response:
                    if response.status_code >= 400:
                        detail = (await response.aread()).decode("utf-8", "replace")
                        raise ModelHTTPError(f"{self.name}: HTTP {response.status_code}: {_detail(detail)}",
                                             response.status_code, _seconds(response.headers.get("retry-after")))
                    async for chunk in self.parse(parse_sse(response.aiter_lines()), into):
                        started = started or chunk.kind != "done"
                        yield chunk
                    if into.response is None:
                        raise StreamError(f"{self.name}: the stream ended before the answer was complete")
                    return
            except ModelHTTPError as e:
                if started or not e.retryable or attempt >= self.retries:
                    raise self._scrubbed(e) from None
                wait = e.retry_after if e.retry_after is not None else self.retry_base * 2 ** attempt
            except httpx.HTTPError as e:
                if started or attempt >= self.retries:
                    raise StreamError(self._scrub(f"{self.name}: {type(e).__name__}: {e}")) from None
                wait = self.retry_base * 2 ** attempt
            attempt += 1
            await asyncio.sleep(min(wait, 30.0))

    def client(self) -> httpx.AsyncClient:
        """One client (its pooled connections) per event loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client[0] is not loop:
            self._client = (loop, httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=30.0)))
        return self._client[1]

    async def aclose(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client[1].aclose()
            self._client = None

    def _scrub(self, text: str) -> str:
        key = self.key._value  # noqa: SLF001 - only a key already read can leak
        return text.replace(key, REDACTED) if key else text

    def _scrubbed(self, error: ModelHTTPError) -> ModelHTTPError:
        return ModelHTTPError(self._scrub(str(error)), error.status, error.retry_after)


def _detail(text: str) -> str:
    """The provider's error message, short."""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        record = json.loads(text)
        error = record.get("error", record)
        text = error.get("message") or json.dumps(error) if isinstance(error, dict) else str(error)
    return text.strip()[:500]


def _seconds(value: str | None) -> float | None:
    """A `retry-after` header's seconds (an HTTP date is not worth waiting for here: None)."""
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


class Assembly:
    """The answer as its pieces arrive: blocks in order (text, thinking, tool calls whose JSON
    arguments come in pieces), the provider's response id, usage and stop reason; `finish`
    makes the Response, with the adapter's sidecar for the message."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.blocks: list[dict[str, Any]] = []
        self.args: dict[int, list[str]] = {}
        self.calls: dict[int, dict[str, Any]] = {}
        self.id = ""
        self.usage: dict[str, Any] = {}
        self.stop = ""
        self.response: Response | None = None

    def text(self, piece: str) -> Chunk:
        self._append("text", piece)
        return Chunk("text", piece)

    def thinking(self, piece: str) -> Chunk:
        self._append("thinking", piece)
        return Chunk("thinking", piece)

    def _append(self, kind: str, piece: str) -> None:
        if self.blocks and self.blocks[-1]["type"] == kind:
            self.blocks[-1]["text"] += piece
        else:
            self.blocks.append({"type": kind, "text": piece})

    def call(self, index: int, call_id: str, name: str) -> Chunk:
        block = {"type": "tool_call", "id": call_id, "name": name, "arguments": {}}
        self.blocks.append(block)
        self.calls[index] = block
        self.args[index] = []
        return Chunk("tool_call", index=index, id=call_id, name=name)

    def arguments(self, index: int, piece: str) -> Chunk:
        self.args.setdefault(index, []).append(piece)
        return Chunk("tool_args", piece, index=index)

    def raw_arguments(self, index: int) -> str:
        return "".join(self.args.get(index, ()))

    def finish(self, stop: str, sidecar: Any = None) -> Chunk:
        """The `done` chunk: tool calls' arguments parsed (text that is no JSON object is kept
        under `_invalid`, for the tool's error result to quote)."""
        for index, block in self.calls.items():
            raw = self.raw_arguments(index)
            try:
                value = json.loads(raw) if raw.strip() else {}
            except ValueError:
                value = None
            block["arguments"] = value if isinstance(value, dict) else {"_invalid": raw}
        if self.calls and stop == "end":
            stop = "tool_calls"
        message = Message("assistant", self.blocks, {self.family: sidecar} if sidecar is not None else {})
        self.stop = stop
        self.response = Response(message, stop, self.id, self.usage)
        return Chunk("done", stop=stop, response=self.response)
