"""The loop's typed errors: each says which part failed, so a caller can retry the right thing."""

from __future__ import annotations

__all__ = ["AgentError", "ContextOverflowError", "ConversationBusy", "ModelHTTPError", "PersistenceError",
           "StreamError", "ToolExecutionError"]


class AgentError(Exception):
    """Base of the agent loop's errors."""


class StreamError(AgentError):
    """The model's answer could not be had: the connection failed, the provider answered with an
    error (after the retries), or the stream ended or broke before its end."""


class ModelHTTPError(StreamError):
    """The provider answered with an HTTP error status (`status`; `retryable`: 429 and 5xx)."""

    def __init__(self, message: str, status: int, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.status in (408, 409, 429) or self.status >= 500


class ContextOverflowError(AgentError):
    """The answer stopped at its length limit (or the prompt no longer fits) and no
    `on_context_overflow` made room."""


class PersistenceError(AgentError):
    """A step could not be written to KState (the disk is full, the state closed): the step is
    not taken, so nothing runs that the store would not remember."""


class ToolExecutionError(AgentError):
    """A tool failed. Raised by a tool, its message goes back to the model as an error result;
    an unexpected exception of a tool is raised out of the loop wrapped in it."""


class ConversationBusy(AgentError, RuntimeError):
    """Another loop answers the conversation now (in this process or another: the run's hold is
    durable in KState): a second prompt or resume is refused; `send` queues a message for it."""
