"""K's agent loop: model adapters (kshell.agent.models), the loop and its Agent
(kshell.agent.loop), the tools of the agent's own computer (kshell.agent.tools), kept durable in
KState (kfs.runtime.conversations). See docs/agent.md.

    agent = await computer.login("alice")
    result = await agent.loop(AnthropicModel("claude-sonnet-4-5", key_secret="anthropic")).prompt("hi")
"""

from kshell.agent.errors import (
                                 AgentError,
                                 ContextOverflowError,
                                 ConversationBusy,
                                 ModelHTTPError,
                                 PersistenceError,
                                 StreamError,
                                 ToolExecutionError,
)
from kshell.agent.loop import STOPPED, Agent, Hooks, RunResult
from kshell.agent.messages import Chunk, Message, Response, ToolSpec
from kshell.agent.tools import Tool, ToolOutput, computer_tools, tool

__all__ = ["STOPPED", "Agent", "AgentError", "Chunk", "ContextOverflowError", "ConversationBusy", "Hooks", "Message",
           "ModelHTTPError", "PersistenceError", "Response", "RunResult", "StreamError", "Tool", "ToolExecutionError",
           "ToolOutput", "ToolSpec", "computer_tools", "tool"]
