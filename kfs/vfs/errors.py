"""Errors inside kfs: OSError with errno and path, raised once at the point of failure."""

from __future__ import annotations

import os


def fs_error(code: int, path: str | bytes | None = None) -> OSError:
    """An OSError with the errno's standard message and the path, as Python's own os calls raise."""
    if path is None:
        return OSError(code, os.strerror(code))
    if isinstance(path, bytes):
        path = path.decode("utf-8", "surrogateescape")
    return OSError(code, os.strerror(code), path)
