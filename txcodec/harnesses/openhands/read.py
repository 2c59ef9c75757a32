"""OpenHands conversation -> Common conversation.

The events the agent sends the model, in sequence order (SDK 1.21.0,
``openhands/sdk/event/llm_convertible``): a user ``MessageEvent`` -> a user message; an agent
``MessageEvent`` -> an assistant message (``reasoning_content`` -> Thinking); the
``ActionEvent`` s of one model response (the same ``llm_response_id``) -> one assistant
message, each the event's ``thought`` texts and a ToolUse (``tool_call.arguments`` is a JSON
string); an ``ObservationEvent`` (``observation.content``), ``UserRejectObservation``
(``rejection_reason``) or ``AgentErrorEvent`` (``error``) -> a ToolResult in the user
message after it. The ``SystemPromptEvent`` (the system prompt and tool list the client
sends first) has no place in Common: it is kept in ``meta.extra["openhands"]`` so that an
OpenHands session written back keeps it, as are each call's executed ``action`` and each
``observation`` (``extra["openhands_actions"]`` / ``["openhands_observations"]``, by call
id): the client renders some observations its own way (a terminal's with its exit code and
folder appended), which only its own observation reproduces. A result's text is the
observation's ``content``. Every other kind is client bookkeeping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ...kit.read import add_result
from ...kit.read import call_arguments
from ...kit.read import content_blocks
from ...kit.read import line_dicts
from ...kit.read import malformed
from ...kit.read import url_image
from ...model.common import Block
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Meta
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.tools import tool_kind
from . import TOOL_KINDS
from .store import CONVERSATION
from .store import dashed

RESULT_KINDS = ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent")


def read(session: NativeSession, loss: LossReport) -> Conversation:
    folder = str(session.path) if session.path else None
    members = getattr(session, "members", None)
    meta = Meta(source_harness="openhands")
    conversation = Conversation(meta=meta)
    reader = _Reader(conversation, loss)
    for n, value in line_dicts(session):
        file = f"{folder}/{members[n - 1][0]}" if folder and members else folder
        line = None if members else n
        if not isinstance(value, dict):
            loss.add("record:invalid", "not a JSON object", file=file, line=line)
            continue
        with malformed(loss, file, line, "event"):
            reader.event(value, file, line)
    reader.close()
    if meta.id is msgspec.UNSET and session.path is not None:  # no base_state.json: the folder names it
        if CONVERSATION.match(Path(session.path).name):
            meta.id = dashed(Path(session.path).name)
    return conversation


class _Reader:
    def __init__(self, conversation: Conversation, loss: LossReport) -> None:
        self.conversation = conversation
        self.messages = conversation.messages
        self.loss = loss
        self.response: str | None = None  # llm_response_id of the assistant message being built

    def event(self, value: dict, file: str | None, line: int | None) -> None:
        kind = value.get("kind")
        if kind is None and isinstance(value.get("agent"), dict):  # base_state.json
            self.base_state(value)
            return
        if kind == "SystemPromptEvent":
            self.conversation.meta.extra.setdefault("openhands", {})["system_prompt_event"] = value
            self.loss.add(
                "record:SystemPromptEvent",
                "the client's system prompt and tools: kept in meta.extra for OpenHands only",
                file=file,
                line=line,
            )
            return
        if kind == "MessageEvent":
            self.message(value)
            return
        if kind == "ActionEvent":
            self.action(value)
            return
        if kind in RESULT_KINDS:
            self.result(value)
            return
        self.loss.add(f"record:{kind}", "client bookkeeping, not conversation", file=file, line=line)

    def base_state(self, value: dict) -> None:
        meta = self.conversation.meta
        if isinstance(value.get("id"), str):
            meta.id = value["id"]
        workspace = value.get("workspace")
        if isinstance(workspace, dict) and isinstance(workspace.get("working_dir"), str):
            meta.cwd = workspace["working_dir"]
        agent = value.get("agent")
        llm = agent.get("llm") if isinstance(agent, dict) else None
        if isinstance(llm, dict) and isinstance(llm.get("model"), str) and llm["model"] not in meta.models:
            meta.models.append(llm["model"])

    def message(self, value: dict) -> None:
        llm = value.get("llm_message") if isinstance(value.get("llm_message"), dict) else {}
        role = "assistant" if llm.get("role") == "assistant" or value.get("source") == "agent" else "user"
        blocks: list[Block] = []
        if role == "assistant":
            blocks += _thinking(llm)
        blocks += _content(llm.get("content"))
        blocks += _content(value.get("extended_content"))  # context the client adds: sent after the text
        out = Message(role, blocks, source_ids=[str(value.get("id", ""))])
        if isinstance(value.get("timestamp"), str):
            out.timestamp = value["timestamp"]
        if role == "assistant":
            out.stop_reason = "end_turn"
        self.response = None
        self.messages.append(out)

    def action(self, value: dict) -> None:
        call = value.get("tool_call") if isinstance(value.get("tool_call"), dict) else {}
        response = value.get("llm_response_id")
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant" and isinstance(response, str) and response == self.response:
            out = last  # another call of the same model response
        else:
            out = Message("assistant", _thinking(value), source_ids=[], stop_reason="tool_use")
            if isinstance(value.get("timestamp"), str):
                out.timestamp = value["timestamp"]
            self.messages.append(out)
            self.response = response if isinstance(response, str) else None
        out.source_ids.append(str(value.get("id", "")))
        out.content += _content(value.get("thought"))
        name = call.get("name") if isinstance(call.get("name"), str) else str(value.get("tool_name", ""))
        ident = call.get("id") if isinstance(call.get("id"), str) else str(value.get("tool_call_id", ""))
        out.content.append(
            ToolUse(
                ident, name, call_arguments(call.get("arguments"), empty_is_object=True), tool_kind(name, TOOL_KINDS)
            )
        )
        if isinstance(value.get("action"), dict):  # what the client executed: given back to OpenHands only
            out.extra.setdefault("openhands_actions", {})[ident] = value["action"]
        out.stop_reason = "tool_use"

    def result(self, value: dict) -> None:
        kind = value["kind"]
        ident = str(value.get("tool_call_id", ""))
        if kind == "ObservationEvent":
            observation = value.get("observation") if isinstance(value.get("observation"), dict) else {}
            content = _content(observation.get("content"))
            text = "\n".join(b.text for b in content if isinstance(b, Text))
            result = ToolResult(
                ident,
                text if all(isinstance(b, Text) for b in content) else content,
                is_error=bool(observation.get("is_error")) or None,
            )
        elif kind == "UserRejectObservation":
            result = ToolResult(ident, str(value.get("rejection_reason", "")), is_error=True)
        else:
            result = ToolResult(ident, str(value.get("error", "")), is_error=True)
        self.response = None
        last = add_result(self.messages, result, str(value.get("id", "")))
        if kind == "ObservationEvent" and isinstance(value.get("observation"), dict):
            # the client renders some observations its own way (a terminal's adds its exit
            # code and folder): given back to OpenHands as they were
            last.extra.setdefault("openhands_observations", {})[ident] = value["observation"]

    def close(self) -> None:
        models = self.conversation.meta.models
        for message in self.messages:
            if message.role == "assistant" and models:
                message.model = models[0]


def _thinking(value: dict) -> list[Block]:
    """Anthropic ``thinking_blocks`` (with their signatures) when there are any, else the
    ``reasoning_content`` text."""
    blocks: list[Block] = []
    for block in value.get("thinking_blocks") or []:
        if isinstance(block, dict) and block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
            thinking = Thinking(block["thinking"])
            if isinstance(block.get("signature"), str):
                thinking.signature = block["signature"]
            blocks.append(thinking)
    text = value.get("reasoning_content")
    if not blocks and isinstance(text, str) and text:
        blocks.append(Thinking(text))
    return blocks


def _content(content: Any) -> list[Block]:
    return content_blocks(content, _images)


def _images(kind: str | None, part: Any) -> list[Block] | None:
    if kind == "image" and isinstance(part.get("image_urls"), list):
        return [url_image(url) for url in part["image_urls"] if isinstance(url, str)]
    return None
