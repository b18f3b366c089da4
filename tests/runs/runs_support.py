"""What the run tests share: a computer whose programs run under the local sandbox (bubblewrap
over the state's FUSE mount: a delegated python3 must be refused by K, not merely absent), and
the run's files read back as K holds them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from kshell.runs import RunContext
from kshell.sdk import Komputer, local_remote
from kshell.sdk.options import bubblewrap_usable

T = TypeVar("T")
HANG = 240.0
ROOT = Path(__file__).resolve().parents[2]


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(asyncio.wait_for(make(), HANG))


def boot(tmp_path: Path, **options: Any) -> Any:
    """The computer of a test, with delegated programs (install bubblewrap: they are a guard's subject)."""
    assert bubblewrap_usable(), "install bubblewrap (apt-get install bubblewrap): delegated programs are tested"
    return Komputer.boot(state=tmp_path / "state", remotes={"local": local_remote()}, **options)


def text(ctx: RunContext, name: str) -> str:
    return ctx.fs().read_file(ctx.path(name)).decode()


def events(ctx: RunContext) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text(ctx, "events.jsonl").splitlines()]
