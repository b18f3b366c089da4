"""The agent loop as the SDK hands it out: `agent.loop(...)`, `agent.prompt(text)`,
`agent.send(message)`, `agent.stop()` on an AgentSession (kshell.sdk.session keeps only thin
calls into here), the model named among the computer's (`Komputer.boot(models=...)`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kshell.agent.loop import Agent

if TYPE_CHECKING:
    from kshell.agent.models.base import Model
    from kshell.sdk import AgentSession

__all__ = ["resolve_model", "session_loop"]


def resolve_model(session: AgentSession, model: str | Model | None) -> Model:
    """`model` itself, or the computer's model of that name (None: its only one, or "default")."""
    from kshell.agent.models.base import Model

    if isinstance(model, Model):
        return model.bind(session.computer.state)
    models: dict[str, Model] = getattr(session.computer, "models", {})
    if model is None:
        if len(models) == 1:
            return next(iter(models.values()))
        model = "default"
    if model not in models:
        known = ", ".join(models) or "none: Komputer.boot(models={...})"
        raise LookupError(f"no model {model!r} on this computer (models: {known})")
    return models[model]


def session_loop(session: AgentSession, model: str | Model | None = None, **options: Any) -> Agent:
    """The session's loop: made at the first call, the same one after (a call with a model or
    options makes a new one). Its conversation is AGENT.SESSION unless `conversation=` names
    another (conversation ids are the state's, not one agent's)."""
    current: Agent | None = getattr(session, "_agent_loop", None)
    if current is None or model is not None or options:
        options.setdefault("conversation", f"{session.agent}.{session.id}")
        current = Agent(session, resolve_model(session, model), **options)
        session._agent_loop = current  # noqa: SLF001 - the session's one loop
    return current
