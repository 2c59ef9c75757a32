"""Kimi CLI context file -> Common conversation.

The conversation is what the client sends when it resumes (1.51.0): the chat messages of
``context.jsonl`` in file order (``kimi_cli/soul/context.py``). ``user`` lines are user
messages; ``assistant`` lines assistant messages (``think`` parts -> Thinking, ``text`` ->
Text, each ``tool_calls`` entry -> ToolUse, its JSON-string ``arguments`` parsed);
consecutive ``tool`` lines one user message of ToolResults (a list of text parts stays a
list, so the ``<system>Command executed successfully.</system>`` part the client adds is
kept as it was sent).

The file records no time, model or per-call usage: ``_usage`` is the context size after a
call, and ``_checkpoint`` marks undo points; both are the client's bookkeeping. The
``_system_prompt`` line (re-sent verbatim on resume) is the client's own instructions and
is reported, as is a ``system`` message. The work folder is the ``kimi.json`` entry
whose md5 names the session's parent folder, when the file is in a store.
``wire.jsonl`` and ``state.json`` are not read:
``wire.jsonl`` is the UI's replay of the same turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...kit.read import LastMessageCarryOn
from ...kit.read import add_result
from ...kit.read import chat_tool_calls
from ...kit.read import implied_stop
from ...kit.read import line_dicts
from ...kit.read import malformed
from ...kit.read import url_image
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Meta
from ...model.common import RawBlock
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.loss import LossReport
from ...model.loss import UnreadLoss
from ...model.native import NativeSession
from . import TOOL_KINDS
from . import store
from .records import CHECKPOINT
from .records import SYSTEM_PROMPT
from .records import USAGE


def read(session: NativeSession, loss: LossReport) -> Conversation:
    reader = _Reader(session.path, loss)
    for n, value in line_dicts(session):
        reader.step(n, value)
    return reader.conversation


def carry_on(path: Any = None, window: int | None = None) -> Any:
    """A followed context file's reader (Harness.carry_on): a line adds a message, or a
    tool result to the results message before it."""
    from .codec import CODEC

    return LastMessageCarryOn(_Reader(path, UnreadLoss()), "kimi_cli", CODEC, path, window=window)


class _Reader:
    """A line at a time (``step``): each adds a message to ``conversation``, or a result
    to its last one, or nothing."""

    def __init__(self, path: Any, loss: LossReport) -> None:
        path = Path(path) if path is not None else None
        self.file, self.loss = (str(path) if path else None), loss
        meta = Meta(source_harness="kimi_cli")
        if path is not None:
            meta.id = path.parent.name
            cwd = store.work_dir_of(path)
            if cwd is not None:
                meta.cwd = cwd
        self.conversation = Conversation(meta=meta)
        self.handed = 0  # messages handed on before conversation.messages[0] (LastMessageCarryOn)

    def step(self, n: int, value: Any) -> None:
        file, loss, messages = self.file, self.loss, self.conversation.messages
        role = value.get("role") if isinstance(value, dict) else None
        if not isinstance(role, str):
            loss.add("record:invalid", "not a Kimi CLI context record (the client skips it)", file=file, line=n)
            return
        if role in (CHECKPOINT, USAGE):
            return
        if role == SYSTEM_PROMPT:
            loss.add(
                "record:_system_prompt",
                "the client's system prompt (a written session gets the target's own)",
                file=file,
                line=n,
            )
            return
        with malformed(loss, file, n):
            if role == "user":
                messages.append(Message("user", _parts(value.get("content"), loss, file, n)))
            elif role == "assistant":
                messages.append(_assistant(value, loss, file, n))
            elif role == "tool":
                result = ToolResult(str(value.get("tool_call_id") or ""), _result(value.get("content"), loss, file, n))
                add_result(messages, result)
            elif role == "system":
                loss.add("message:system", "a system message inside the conversation", file=file, line=n)
            else:
                loss.add(f"record:{role}", "a record Common has no place for", file=file, line=n)


def _assistant(value: dict, loss: LossReport, file: str | None, n: int) -> Message:
    blocks = _parts(value.get("content"), loss, file, n) + chat_tool_calls(value.get("tool_calls"), TOOL_KINDS)
    message = Message("assistant", blocks)
    message.stop_reason = implied_stop(blocks)
    return message


def _result(content: Any, loss: LossReport, file: str | None, n: int) -> str | list:
    if isinstance(content, str):
        return content
    return _parts(content, loss, file, n)


def _parts(content: Any, loss: LossReport, file: str | None, n: int) -> list:
    """A message's ``content`` (a string, ``null`` or a list of parts) as blocks."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    if not isinstance(content, list):
        loss.add("read:malformed", "a content that is neither a string nor a list of parts", file=file, line=n)
        return []
    blocks: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append(Text(part["text"]))
        elif kind == "think" and isinstance(part.get("think"), str):
            thinking = Thinking(part["think"])
            if isinstance(part.get("encrypted"), str):
                thinking.signature = part["encrypted"]
            blocks.append(thinking)
        elif (
            kind == "image_url"
            and isinstance(part.get("image_url"), dict)
            and isinstance(part["image_url"].get("url"), str)
        ):
            blocks.append(url_image(part["image_url"]["url"]))
        else:  # audio_url, video_url, a part of a later version: kept as it is
            blocks.append(RawBlock(str(kind), part))
    return blocks
