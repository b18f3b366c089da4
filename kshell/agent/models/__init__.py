"""Model adapters: one surface (`complete`, `stream`) over each provider protocol family."""

from kshell.agent.models.anthropic import AnthropicModel, deepseek_anthropic
from kshell.agent.models.base import Key, Model
from kshell.agent.models.openai_chat import OpenAIChatModel, deepseek, minimax, openai_compatible
from kshell.agent.models.openai_responses import OpenAIResponsesModel
from kshell.agent.models.scripted import ScriptedModel

__all__ = ["AnthropicModel", "Key", "Model", "OpenAIChatModel", "OpenAIResponsesModel", "ScriptedModel",
           "deepseek", "deepseek_anthropic", "minimax", "openai_compatible"]
