"""The SDK's own errors that the session view (kshell.view) raises too: below both, so that the
view, which the server and the SDK build on, never imports the SDK's package (kshell.sdk.types
re-exports them)."""

from __future__ import annotations


class SDKError(Exception):
    """Base of the SDK's own errors (file errors are OSError with the errno a Unix user expects)."""


class AgentNotFound(SDKError, LookupError):
    """`login(agent)` named no agent of the computer (`komputer agent add NAME` makes one)."""
