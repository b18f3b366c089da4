"""Errors inside kfs: OSError with errno and path, raised once at the point of failure."""

from __future__ import annotations

import os


# errno -> os.strerror's message, asked once per errno (a negative lookup is an ENOENT, and
# strerror decodes its message every time); the process's locale is set once, at its start.
_MESSAGES: dict[int, str] = {}


def fs_error(code: int, path: str | bytes | None = None) -> OSError:
    """An OSError with the errno's standard message and the path, as Python's own os calls raise."""
    message = _MESSAGES.get(code)
    if message is None:
        message = _MESSAGES[code] = os.strerror(code)
    if path is None:
        return OSError(code, message)
    if isinstance(path, bytes):
        path = path.decode("utf-8", "surrogateescape")
    return OSError(code, message, path)
