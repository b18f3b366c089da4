"""A call into operator code (the image's handlers, hooks, drives) bounded in time: run in a
thread of its own, so that a call that never returns costs its caller `timeout` seconds, not
the session."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Overran(TimeoutError):
    """The call had not returned after its time (it runs on in its thread, unwaited)."""


def bounded(fn: Callable[..., Any], *args: Any, timeout: float, name: str = "call") -> Any:
    """fn(*args), for at most `timeout` seconds: its value, or its exception raised again here
    (traceback kept), or Overran."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the caller, in its thread
            box["error"] = e

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise Overran(f"{name} did not return within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
