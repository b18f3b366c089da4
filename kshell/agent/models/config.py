"""Models from configuration: an image's `[models.NAME]` tables (kfs.runtime.image), each a
protocol, the provider's model name, a base URL and the API key's secret handle."""

from __future__ import annotations

from typing import Any

from kshell.agent.models.anthropic import AnthropicModel, deepseek_anthropic
from kshell.agent.models.base import Model
from kshell.agent.models.openai_chat import OpenAIChatModel, deepseek, minimax, openai_compatible
from kshell.agent.models.openai_responses import OpenAIResponsesModel

__all__ = ["from_spec", "image_models"]


def from_spec(name: str, spec: dict[str, Any]) -> Model:
    """The model a `[models.NAME]` table describes (its key read from the secret when first used)."""
    protocol = spec["protocol"]
    options: dict[str, Any] = {"name": name, "key_secret": spec.get("key"), "settings": spec.get("settings")}
    if spec.get("base_url"):
        options["base_url"] = spec["base_url"]
    model = spec["model"]
    if protocol == "anthropic":
        return AnthropicModel(model, **options)
    if protocol == "deepseek-anthropic":
        return deepseek_anthropic(model, **options)
    if protocol == "openai-chat":
        return OpenAIChatModel(model, **options)
    if protocol == "openai-responses":
        return OpenAIResponsesModel(model, **options)
    if protocol == "deepseek":
        return deepseek(model, **options)
    if protocol == "minimax":
        return minimax(model, **options)
    if protocol == "openai-compatible":
        return openai_compatible(options.pop("base_url"), model, **options)
    raise ValueError(f"model {name}: unknown protocol {protocol!r}")


def image_models(state: Any) -> dict[str, Model]:
    """The models the image in force declares, bound to `state` for their keys."""
    from kfs.runtime import image

    record = image.current(state)
    declared = (record or {}).get("spec", {}).get("models", {})
    return {name: from_spec(name, spec).bind(state) for name, spec in declared.items()}
