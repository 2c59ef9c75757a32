"""opencode (or Kilo) export -> Common conversation.

The messages in order, as the client sends them when it resumes: a user message's
``text`` parts -> Text (``file`` parts with a data URL -> Image / Document); an assistant
message (one model step, or several: each ``step-start`` … ``step-finish``) -> one
assistant message: ``reasoning`` -> Thinking, ``text`` -> Text, ``tool`` -> ToolUse; the
``tool`` parts' states become the next user message's ToolResults (``completed``: its
``output``; ``error``: its ``error``, an error). The message's ``tokens`` are its usage
(``input`` without the cached tokens, which are ``cache.read`` / ``cache.write``) and its
``finish`` the stop reason. A ``summary: true`` assistant message opens a compaction
epoch. Text parts the client marks ``synthetic`` (file contents it attached to a prompt) are
kept in the message's ``extra`` rather than as typed text. (Kilo's ``<environment_details>``
part is added to each request, never stored.)
"""

from __future__ import annotations

from datetime import datetime
from datetime import timezone
from typing import Any

from ...kit.read import line_dicts
from ...kit.read import malformed
from ...model.common import Block
from ...model.common import Conversation
from ...model.common import Document
from ...model.common import Epoch
from ...model.common import Image
from ...model.common import Message
from ...model.common import Meta
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.common import Usage
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.tools import tool_kind

_STOP = {"tool-calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}
_BOOKKEEPING = {"step-start", "step-finish", "snapshot", "patch"}


def _kind(part: Any) -> str | None:
    """A part's ``type`` when it is a string: any other value tags nothing (and a dict or
    list one could not even be looked up among the known kinds)."""
    kind = part.get("type") if isinstance(part, dict) else None
    return kind if isinstance(kind, str) else None


def iso(ms: Any) -> str | None:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    stamp = datetime.fromtimestamp(ms / 1000, timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    meta = Meta(source_harness=session.harness)
    conversation = Conversation(meta=meta)
    documents = [(n, v) for n, v in line_dicts(session) if isinstance(v, dict) and isinstance(v.get("info"), dict)]
    if not documents:
        loss.add("record:invalid", "not an opencode export", file=file)
        return conversation
    n, value = documents[0]
    info = value["info"]
    for key, attr in (("id", "id"), ("title", "title"), ("directory", "cwd"), ("version", "client_version")):
        if isinstance(info.get(key), str):
            setattr(meta, attr, info[key])
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    if iso(time.get("created")):
        meta.started_at = iso(time.get("created"))
    if iso(time.get("updated")):
        meta.ended_at = iso(time.get("updated"))
    for key in ("slug", "projectID", "parentID"):
        if isinstance(info.get(key), str):
            meta.extra[key] = info[key]
    messages = conversation.messages
    entries = value.get("messages")
    if not isinstance(entries, list):  # the document is kept as bytes then: read what it says, and say so
        if entries is not None:
            loss.add("record:invalid", "the export's messages are not a list", file=file, line=n)
        entries = []
    for entry in entries:
        with malformed(loss, file, n, "message"):  # a message of an unexpected shape is reported, the next one read
            message_info = entry.get("info") if isinstance(entry, dict) else None
            parts = entry.get("parts") if isinstance(entry, dict) else None
            if not isinstance(message_info, dict) or not isinstance(parts, list):
                loss.add("record:invalid", "a message without info or parts", file=file, line=n)
                continue
            role = message_info.get("role")
            if role == "user":
                messages.append(_user(message_info, parts, loss, file, n))
            elif role == "assistant":
                message, results = _assistant(message_info, parts, loss, file, n)
                if message_info.get("summary") is True:
                    message.compact_summary = True
                    conversation.epochs.append(Epoch(start=len(messages), boundary_id=str(message_info.get("id", ""))))
                messages.append(message)
                if isinstance(message.model, str) and message.model not in meta.models:
                    meta.models.append(message.model)
                if results:
                    messages.append(Message("user", results, source_ids=[r.tool_use_id for r in results]))
            else:
                loss.add(f"record:{role}", "a message role Common has no place for", file=file, line=n)
    return conversation


def _stamp(message: Message, info: dict) -> None:
    if isinstance(info.get("id"), str):
        message.source_ids = [info["id"]]
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    if iso(time.get("created")):
        message.timestamp = iso(time.get("created"))


def _file(part: dict) -> Block | None:
    url, mime = part.get("url"), part.get("mime")
    if not isinstance(url, str) or not isinstance(mime, str):
        return None
    if url.startswith("data:") and ";base64," in url:
        data = url.split(";base64,", 1)[1]
        return Image(media_type=mime, data=data) if mime.startswith("image/") else Document(media_type=mime, data=data)
    return Image(media_type=mime, url=url) if mime.startswith("image/") else Document(media_type=mime, url=url)


def _user(info: dict, parts: list, loss: LossReport, file: str | None, n: int) -> Message:
    message = Message("user", [])
    _stamp(message, info)
    if isinstance(info.get("model"), dict):
        message.extra["model"] = info["model"]
    for part in parts:
        kind = _kind(part)
        if kind == "text" and isinstance(part.get("text"), str):
            if part.get("synthetic") is True:
                message.extra.setdefault("synthetic_text", []).append(part["text"])
            elif part.get("ignored") is not True:
                message.content.append(Text(part["text"]))
        elif kind == "file" and _file(part) is not None:
            message.content.append(_file(part))
        elif kind in _BOOKKEEPING:
            continue
        else:
            loss.add(f"part:{kind}", "a user part Common has no place for", file=file, line=n)
    return message


def _assistant(info: dict, parts: list, loss: LossReport, file: str | None, n: int) -> tuple[Message, list[ToolResult]]:
    message = Message("assistant", [])
    _stamp(message, info)
    results: list[ToolResult] = []
    for part in parts:
        kind = _kind(part)
        if kind == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                message.content.append(Text(part["text"]))
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            message.content.append(Thinking(part["text"]))
        elif kind == "tool":
            name = part.get("tool") if isinstance(part.get("tool"), str) else ""
            ident = str(part.get("callID", ""))
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            message.content.append(ToolUse(ident, name, state.get("input", {}), tool_kind(name)))
            status = state.get("status")
            if status == "completed":
                results.append(
                    ToolResult(
                        ident, state.get("output") if isinstance(state.get("output"), str) else "", is_error=False
                    )
                )
            elif status == "error":
                results.append(
                    ToolResult(ident, state.get("error") if isinstance(state.get("error"), str) else "", is_error=True)
                )
            else:
                loss.add(f"part:tool:{status}", "a tool call that never finished (no result)", file=file, line=n)
        elif kind in _BOOKKEEPING:
            continue
        else:
            loss.add(f"part:{kind}", "an assistant part Common has no place for", file=file, line=n)
    if isinstance(info.get("modelID"), str):
        message.model = info["modelID"]
    for key in ("providerID", "mode", "agent"):
        if isinstance(info.get(key), str):
            message.extra[key] = info[key]
    tokens = info.get("tokens")
    if isinstance(tokens, dict):
        message.usage = _usage(tokens)
    finish = info.get("finish")
    if isinstance(finish, str):
        message.stop_reason = _STOP.get(finish, finish)
    if isinstance(info.get("error"), dict):
        message.api_error = True
        message.extra["error"] = info["error"]
    return message, results


def _usage(tokens: dict) -> Usage:
    def count(v: Any) -> int:
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0

    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    usage = Usage(
        input_tokens=count(tokens.get("input")),
        output_tokens=count(tokens.get("output")),
        cache_read_input_tokens=count(cache.get("read")),
        cache_creation_input_tokens=count(cache.get("write")),
    )
    if isinstance(tokens.get("reasoning"), int):
        usage.reasoning_output_tokens = tokens["reasoning"]
    return usage
