"""One assertion for the whole suite: a call fails with OSError, the right errno and the path."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def raises_errno(code: int, *paths: str) -> Iterator[pytest.ExceptionInfo[OSError]]:
    """Expect an OSError with errno `code`; when `paths` are given, `.filename` is one of them."""
    with pytest.raises(OSError) as info:
        yield info
    err = info.value
    assert err.errno == code, (
        f"expected {errno.errorcode[code]}, "
        f"got {errno.errorcode.get(err.errno, err.errno)}: {err!r}"
    )
    if paths:
        assert err.filename in paths, f"expected .filename in {paths!r}, got {err.filename!r}"
