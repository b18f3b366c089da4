"""Server-sent events over an httpx response stream.

A parser of our own rather than httpx-sse: the format is a dozen lines of the WHATWG spec
(fields `event`, `data` joined by newlines, `id`, `retry`, comments, a blank line dispatches),
and owning it lets an adapter see a provider's `data: [DONE]` sentinel and a stream that ends
without its final blank line, with no dependency beyond httpx, which does the HTTP/1.1 and
HTTP/2, connection pooling, timeouts and cancellation (closing the response aborts the request).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

__all__ = ["SSE", "parse_sse"]


@dataclass(frozen=True, slots=True)
class SSE:
    event: str
    data: str
    id: str = ""


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[SSE]:
    """The events in `lines` (an httpx `aiter_lines()`: line ends already split off)."""
    event, data, last_id = "", [], ""
    async for line in lines:
        if not line:
            if data:
                yield SSE(event or "message", "\n".join(data), last_id)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
    if data:  # a stream that ended without the last blank line
        yield SSE(event or "message", "\n".join(data), last_id)
