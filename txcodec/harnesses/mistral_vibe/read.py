"""Mistral Vibe session -> Common conversation, from either form (``records.py``).

**Legacy** ``messages.jsonl``, in file order, as ``SessionLoader.load_session`` reads it:
``user`` -> user text (``injected`` ones marked ``meta``), ``assistant`` -> thinking
(``reasoning_content``), text and tool calls (``arguments`` parsed from their JSON
string), consecutive ``tool`` lines -> one user message of tool results. ``system`` lines,
which the client skips, are reported. ``meta.json`` beside it gives the id, work folder,
title and times.

**Unified** ``CURRENT``: the committed history of the current generation's checkpoint
chunks (``store.unified_history``), each entry ``{message: {role, content: [parts], name,
tool_call_id, outcome}, source, turn_index}``; parts ``text`` and ``tool_call`` (``{id,
name, arguments: {raw, type, value}}``); a tool message's ``outcome`` other than
``success`` is an error. A digest that does not match is reported (``store:digest``):
the client would refuse the session.
"""

from __future__ import annotations

from typing import Any

from ...kit.read import add_result
from ...kit.read import call_arguments
from ...kit.read import chat_tool_calls
from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...kit.read import malformed
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.tools import tool_kind
from . import TOOL_KINDS
from . import store
from .records import STORE_FORMAT


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    meta = Meta(source_harness="mistral_vibe")
    conversation = Conversation(meta=meta)
    lines = line_dicts(session)
    current = next((v for _, v in lines if isinstance(v, dict) and v.get("store_format") == STORE_FORMAT), None)
    if session.path is not None:
        _meta(meta, store.read_meta(session.path.parent))
    if current is not None:
        if session.path is None:
            loss.add("store:unified-without-folder", "a unified CURRENT read without its session folder: no history")
            return conversation
        history, errors = store.unified_history(session.path.parent, current)
        for error in errors:
            loss.add("store:digest", f"{error} (the client refuses this session)")
        if isinstance(current.get("session_id"), str):
            meta.id = current["session_id"]
        for n, entry in enumerate(history):
            with malformed(loss, file, None, f"history entry {n}"):
                message = entry.get("message")
                if isinstance(entry.get("source"), str) and entry["source"] != "history":
                    loss.add(f"entry:{entry['source']}", "a history entry Common has no place for", file=file)
                    continue
                _unified(conversation.messages, message, loss, file)
        return conversation
    for n, value in lines:
        role = value.get("role") if isinstance(value, dict) else None
        if not isinstance(role, str):
            loss.add("record:invalid", "not a Vibe message line (the client refuses the session)", file=file, line=n)
            continue
        with malformed(loss, file, n):
            _legacy(conversation.messages, value, role, loss, file, n)
    return conversation


def _meta(meta: Meta, value: dict[str, Any]) -> None:
    if isinstance(value.get("session_id"), str):
        meta.id = value["session_id"]
    environment = value.get("environment")
    if isinstance(environment, dict) and isinstance(environment.get("working_directory"), str):
        meta.cwd = environment["working_directory"]
    if isinstance(value.get("title"), str):
        meta.title = value["title"]
    if isinstance(value.get("start_time"), str):
        meta.started_at = value["start_time"]
    if isinstance(value.get("end_time"), str):
        meta.ended_at = value["end_time"]
    config = value.get("config")
    if isinstance(config, dict) and isinstance(config.get("model_name"), str):
        meta.models.append(config["model_name"])


def _legacy(messages: list[Message], value: dict, role: str, loss: LossReport, file: str | None, n: int) -> None:
    content = value.get("content")
    text = (
        content
        if isinstance(content, str)
        else (
            "\n".join(p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else str(p) for p in content)
            if isinstance(content, list)
            else ""
        )
    )  # the client joins a list of parts into one string
    if role == "user":
        message = Message("user", [Text(text)] if text else [])
        if value.get("injected") is True:
            message.meta = True
    elif role == "assistant":
        blocks: list[Any] = []
        if isinstance(value.get("reasoning_content"), str) and value["reasoning_content"]:
            blocks.append(Thinking(value["reasoning_content"]))
        if text:
            blocks.append(Text(text))
        blocks += chat_tool_calls(value.get("tool_calls"), TOOL_KINDS)
        message = Message("assistant", blocks)
        message.stop_reason = implied_stop(blocks)
    elif role == "tool":
        add_result(messages, ToolResult(str(value.get("tool_call_id") or ""), text))
        return
    elif role == "system":
        loss.add("message:system", "a system line (the client skips it)", file=file, line=n)
        return
    else:
        loss.add(f"message:{role}", "a message of a role the client does not know", file=file, line=n)
        return
    if isinstance(value.get("message_id"), str):
        message.id = value["message_id"]
    if value.get("images"):
        loss.add(
            "field:images", "image attachments (kept by the client beside the session) not read", file=file, line=n
        )
    messages.append(message)


def _unified(messages: list[Message], message: Any, loss: LossReport, file: str | None) -> None:
    role = message.get("role")
    parts = message.get("content")
    parts = [{"type": "text", "text": parts}] if isinstance(parts, str) else parts if isinstance(parts, list) else []
    blocks: list[Any] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append(Text(part["text"]))
        elif kind == "tool_call":
            arguments = part.get("arguments") or {}
            value = (
                arguments.get("value")
                if arguments.get("type") == "json" and "value" in arguments
                else call_arguments(arguments.get("raw"))
            )
            name = part.get("name") if isinstance(part.get("name"), str) else ""
            blocks.append(ToolUse(str(part.get("id") or ""), name, value, tool_kind(name, TOOL_KINDS)))
        else:
            blocks.append(RawBlock(str(kind), part))
    if role == "tool":
        text = "\n".join(b.text for b in blocks if isinstance(b, Text))
        outcome = message.get("outcome")
        add_result(
            messages,
            ToolResult(
                str(message.get("tool_call_id") or ""),
                text,
                is_error=None if not isinstance(outcome, str) else outcome != "success",
            ),
        )
    elif role in ("user", "assistant"):
        out = Message(role, blocks)
        if role == "assistant":
            out.stop_reason = implied_stop(blocks)
        messages.append(out)
    else:
        loss.add(f"message:{role}", "a history message of a role Common has no place for", file=file)
