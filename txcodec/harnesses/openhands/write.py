"""Common conversation -> an OpenHands conversation folder that ``openhands --resume <uuid>`` loads.

What 1.16.0 needs (docs/openhands.md#format-facts; the hand-written folder it resumed; SDK 1.21.0
``agent.py`` ``init_state``): ``<uuid hex>/events/event-<seq>-<event uuid>.json``, one event
per file, a ``SystemPromptEvent`` first (a user message before it is refused with an
AssertionError and exit 0). ``base_state.json`` is not needed: the client writes its own.

- The system prompt is sent as stored. A conversation read from OpenHands keeps its
  ``SystemPromptEvent`` (``meta.extra["openhands"]``) and gets it back; any other gets a
  short one of ours (``write:system-prompt``): the client's own is not regenerated.
- A user message -> a user ``MessageEvent``; its tool results -> one ``ObservationEvent``
  each (an ``MCPToolObservation``, the SDK's observation for a tool it did not define,
  sent as the result text) or, for an error, an ``AgentErrorEvent`` (sent as its text, where
  an observation's error would gain a header line).
- An assistant message with tool calls -> one ``ActionEvent`` per call sharing one
  ``llm_response_id`` (the client sends them back as one message with several calls); the
  texts are the first one's ``thought``, thinking text its ``reasoning_content``. No
  ``action`` is written (the SDK allows none: a call it will not execute again). Without
  calls -> an agent ``MessageEvent``.
- A call left without a result is answered with an ``AgentErrorEvent``
  (``write:synthetic-result``): Chat Completions refuses a call without its answer.
- Events carry a time but no model or usage (``write:model-usage``); the project folder and
  the model live in ``base_state.json``, which is not written (``write:workspace``).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from datetime import timezone
from typing import Any

import msgspec

from ...core.dates import parse_timestamp
from ...core.ids import shown
from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Image
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from .store import EVENTS
from .store import conversation_dir
from .store import event_name

SYSTEM_PROMPT = (
    "You are a software engineering agent working in the user's project with the tools you are given. "
    "This conversation was carried over from another agent's session."
)
INTERRUPTED = "[Tool call interrupted: no result was recorded]"
_NAMESPACE = uuid.UUID("6f1c2a7e-93d4-4b8a-a5e0-2d7c41f90b36")


def session_id_for(conversation: Conversation, options: WriteOptions, loss: LossReport | None = None) -> str:
    """A UUID (the folder is its hex): the one asked for, the source's when it is one, else derived."""
    return writekit.asked_or_kept_id(
        options.session_id,
        conversation,
        loss,
        _as_uuid,
        _NAMESPACE,
        "is not a UUID",
        "an OpenHands conversation id is a UUID",
    )


def _as_uuid(value: str) -> str | None:
    """A UUID in its canonical form (lower case, dashed), or ``None``."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    sid = session_id_for(conversation, options, loss)
    writekit.flattened(conversation, loss)
    _declare_unwritten(conversation, loss)
    writer = _Writer(sid, loss, conversation.meta.source_harness == "openhands")
    writer.system(conversation)
    for message in conversation.messages:
        writer.message(message)
    writer.answer_pending()
    folder = conversation_dir(sid)
    files = {f"{folder}/{EVENTS}/{event_name(n, e['id'])}": msgspec.json.encode(e) for n, e in enumerate(writer.events)}
    return Written(sid, files)


def _declare_unwritten(conversation: Conversation, loss: LossReport) -> None:
    """What the events have no place for: a message's model and usage; the session's folder and
    models, which OpenHands keeps in ``base_state.json`` (the client writes its own on resume)."""
    counted = sum(
        1
        for m in conversation.messages
        if m.model is not msgspec.UNSET or m.usage is not msgspec.UNSET or m.usage_unverified is not msgspec.UNSET
    )
    if counted:
        loss.add("write:model-usage", f"{counted} message(s) had a model or usage; an OpenHands event holds neither")
    meta = conversation.meta
    held = [f"project folder {shown(meta.cwd)}"] if isinstance(meta.cwd, str) and meta.cwd else []
    held += [f"model {shown(m)}" for m in meta.models]
    if held:
        loss.add(
            "write:workspace",
            f"{', '.join(held)} not written: base_state.json, which holds them, is left to the client",
        )


def _stamp(value: Any) -> str | None:
    """An event timestamp as the SDK writes them: ISO 8601 without a zone."""
    moment = parse_timestamp(value) if isinstance(value, str) else None  # in UTC, a zoneless time taken as UTC
    return None if moment is None else moment.replace(tzinfo=None).isoformat()


class _Writer:
    def __init__(self, sid: str, loss: LossReport, native: bool) -> None:
        self.sid = sid
        self.native = native  # read from OpenHands: its own actions and observations are given back
        self.loss = loss
        self.events: list[dict[str, Any]] = []
        self.calls: dict[str, str] = {}  # id -> tool name, of calls not answered yet
        self.when = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0).isoformat()

    def ident(self) -> str:
        return str(uuid.uuid5(uuid.UUID(self.sid), str(len(self.events))))

    def add(self, event: dict[str, Any], timestamp: Any = None) -> None:
        self.when = _stamp(timestamp) or self.when
        self.events.append({"id": self.ident(), "timestamp": self.when, **event})

    def system(self, conversation: Conversation) -> None:
        stored = (
            conversation.meta.extra.get("openhands", {}).get("system_prompt_event")
            if isinstance(conversation.meta.extra.get("openhands"), dict)
            else None
        )
        if isinstance(stored, dict) and stored.get("kind") == "SystemPromptEvent" and isinstance(stored.get("id"), str):
            self.events.append(stored)
            return
        self.loss.add(
            "write:system-prompt",
            "OpenHands sends the system prompt stored in the conversation: a short one "
            "of ours is written (the client's own, with its tool instructions, is not regenerated)",
        )
        self.add(
            {
                "source": "agent",
                "system_prompt": {"type": "text", "text": SYSTEM_PROMPT},
                "tools": [],
                "kind": "SystemPromptEvent",
            },
            conversation.meta.started_at,
        )

    def answer_pending(self) -> None:
        for ident, name in self.calls.items():
            self.loss.add("write:synthetic-result", f"call {ident} had no result: answered with an error")
            self.add(
                {
                    "source": "agent",
                    "tool_name": name,
                    "tool_call_id": ident,
                    "error": INTERRUPTED,
                    "kind": "AgentErrorEvent",
                }
            )
        self.calls = {}

    def message(self, message: Message) -> None:
        if message.role == "assistant":
            self.answer_pending()
            self.assistant(message)
            return
        content: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id in self.calls:
                self.result(block, message)
            elif isinstance(block, ToolResult):
                self.loss.add("write:orphan-result", f"result for unknown call {block.tool_use_id} written as text")
                content.append(_text(f"[tool result {block.tool_use_id}]\n{writekit.result_text(block, self.loss)}"))
            elif isinstance(block, Text):
                if block.text:
                    content.append(_text(block.text))
            elif isinstance(block, Image) and isinstance(block.data, str) and isinstance(block.media_type, str):
                content.append({"type": "image", "image_urls": [f"data:{block.media_type};base64,{block.data}"]})
            elif isinstance(block, Image) and isinstance(block.url, str):
                content.append({"type": "image", "image_urls": [block.url]})
            else:
                content.append(_text(writekit.as_text(block, self.loss, "an OpenHands message")))
        if not content:
            return
        self.answer_pending()
        self.add(
            {
                "source": "user",
                "llm_message": {"role": "user", "content": content},
                "activated_skills": [],
                "extended_content": [],
                "kind": "MessageEvent",
            },
            message.timestamp,
        )

    def result(self, block: ToolResult, message: Message) -> None:
        name = self.calls.pop(block.tool_use_id)
        text = writekit.result_text(block, self.loss)
        if block.is_error:
            self.add(
                {
                    "source": "agent",
                    "tool_name": name,
                    "tool_call_id": block.tool_use_id,
                    "error": text,
                    "kind": "AgentErrorEvent",
                },
                message.timestamp,
            )
            return
        action = next((e["id"] for e in reversed(self.events) if e.get("tool_call_id") == block.tool_use_id), "")
        saved = message.extra.get("openhands_observations") if self.native else None
        observation = saved.get(block.tool_use_id) if isinstance(saved, dict) else None  # extra may hold anything
        if not isinstance(observation, dict):
            observation = {"content": [_text(text)], "is_error": False, "tool_name": name, "kind": "MCPToolObservation"}
        self.add(
            {
                "source": "environment",
                "tool_name": name,
                "tool_call_id": block.tool_use_id,
                "observation": observation,
                "action_id": action,
                "kind": "ObservationEvent",
            },
            message.timestamp,
        )

    def assistant(self, message: Message) -> None:
        texts: list[dict[str, Any]] = []
        thoughts: list[str] = []
        calls: list[ToolUse] = []
        for block in message.content:
            if isinstance(block, Text):
                if block.text:
                    texts.append(_text(block.text))
            elif isinstance(block, Thinking):
                if block.thinking:
                    thoughts.append(block.thinking)
                    if isinstance(block.signature, str):
                        self.loss.add(
                            "write:thinking-signature", "reasoning_content has no place for the provider's signature"
                        )
                else:
                    self.loss.add("write:thinking", "thinking without text (signature only) dropped")
            elif isinstance(block, ToolUse):
                calls.append(block)
            else:
                texts.append(_text(writekit.as_text(block, self.loss, "an OpenHands message")))
        reasoning = "\n\n".join(thoughts) or None
        if not calls:
            if not texts and reasoning is None:
                self.loss.add("write:empty-message", "an assistant message with nothing to write")
                return
            llm: dict[str, Any] = {"role": "assistant", "content": texts}
            if reasoning is not None:
                llm["reasoning_content"] = reasoning
            self.add(
                {
                    "source": "agent",
                    "llm_message": llm,
                    "activated_skills": [],
                    "extended_content": [],
                    "kind": "MessageEvent",
                },
                message.timestamp,
            )
            return
        response = str(uuid.uuid5(uuid.UUID(self.sid), f"response-{len(self.events)}"))
        for i, call in enumerate(calls):
            args = call.input
            if not isinstance(args, dict):
                self.loss.add(
                    "write:wrapped-input", f"tool {call.name} input is not an object; wrapped as {{'input': ...}}"
                )
                args = {"input": args}
            event: dict[str, Any] = {"source": "agent", "thought": texts if i == 0 else []}
            if i == 0 and reasoning is not None:
                event["reasoning_content"] = reasoning
            saved = message.extra.get("openhands_actions") if self.native else None
            action = saved.get(call.id) if isinstance(saved, dict) else None
            if isinstance(action, dict):
                event["action"] = action
            event.update(
                {
                    "tool_name": call.name,
                    "tool_call_id": call.id,
                    "tool_call": {
                        "id": call.id,
                        "name": call.name,
                        "arguments": json.dumps(args, ensure_ascii=False),
                        "origin": "completion",
                    },
                    "llm_response_id": response,
                    "kind": "ActionEvent",
                }
            )
            self.add(event, message.timestamp)
            self.calls[call.id] = call.name


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}
