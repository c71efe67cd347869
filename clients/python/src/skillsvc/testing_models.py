"""A scripted chat model for running agents without a model provider: the
tests and the examples' offline mode use it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Answers with the given messages in order, tool calls included, and
    records what it was sent. Binding tools changes nothing: the script
    already says which tools to call."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def tool_call(name: str, call_id: str, **args: Any) -> AIMessage:
    """A model turn that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def script(*turns: AIMessage | str) -> Iterator[AIMessage | str]:
    return iter(turns)
