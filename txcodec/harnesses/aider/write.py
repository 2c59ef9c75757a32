"""Common conversation -> an ``.aider.chat.history.md`` that ``aider --restore-chat-history`` restores.

Written the way aider 0.86.2 writes its own (``aider/io.py``): ``\\n# aider chat started at
<time>\\n\\n``; a user message as ``\\n#### <line>  \\n`` for each of its lines; an assistant
message as ``\\n<text>\\n\\n``. The history holds text only, so:

- a tool call, a tool result and any other block that is not text are written as text (their
  JSON), each declared (``write:block:tool_use``, ``write:block:tool_result``, ...): the model
  reads them back as prose, and aider will not run them again;
- thinking is dropped (``write:thinking``);
- an assistant line that aider would take for something else (``# `` skipped, ``#### `` a user
  line, ``> `` tool output never sent) is written with one space in front, which Markdown
  renders the same (``write:markdown-line``);
- a message with nothing left is left out (``write:empty-message``);
- a message's time, model and usage have no place (``write:timestamps-usage``), nor the
  project folder: aider's is the folder the history is in (``write:cwd-by-place``).

There is no session id in the file; the written session's id is the source's when it is a
plain name, else a uuid5 of it (``write:session-id``), used only to name it.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime

import msgspec

from ...core.ids import shown
from ...kit import write as writekit
from ...kit.registry import WriteOptions
from ...kit.registry import Written
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Text
from ...model.common import Thinking
from ...model.common import ToolResult
from ...model.common import ToolUse
from ...model.loss import LossReport
from .store import HISTORY

_NAMESPACE = uuid.UUID("0b8e4f1a-6c2d-4e3b-9a7f-5d1c2e3f4a5b")
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # \Z: no newline after
# a line starting so would not be restored as assistant text (records.py)
_MISREAD = ("# ", "#### ", "> ")


def write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written:
    meta = conversation.meta
    sid = _session_id(conversation, options, loss)
    writekit.flattened(conversation, loss)
    _declare_unwritten(conversation, loss)
    parts = [f"\n# aider chat started at {_started(meta.started_at)}\n\n"]
    for message in conversation.messages:
        text = _text(message, loss)
        if not text.strip():
            loss.add("write:empty-message", f"a {message.role} message with no text for aider to restore")
            continue
        if message.role == "user":
            parts.append("\n" + "".join(f"#### {line}  \n" for line in text.splitlines()))
        else:
            parts.append("\n" + _escaped(text.strip(), loss) + "\n\n")
    return Written(sid, {HISTORY: "".join(parts).encode("utf-8")})


def _declare_unwritten(conversation: Conversation, loss: LossReport) -> None:
    """What the Markdown history has no place for (only the session's start time is written)."""
    counted = sum(
        1
        for m in conversation.messages
        if m.timestamp is not msgspec.UNSET
        or m.model is not msgspec.UNSET
        or m.usage is not msgspec.UNSET
        or m.usage_unverified is not msgspec.UNSET
    )
    if counted:
        loss.add(
            "write:timestamps-usage", f"{counted} message(s) had a time, model or usage; aider's history holds none"
        )
    cwd = conversation.meta.cwd
    if isinstance(cwd, str) and cwd:
        loss.add(
            "write:cwd-by-place",
            f"aider's history names no project folder: {shown(cwd)} is carried only by installing the file there",
        )


def _session_id(conversation: Conversation, options: WriteOptions, loss: LossReport) -> str:
    """The name the written history goes by (the file holds none): the one asked for, the
    source's when it is plain, else a uuid5 of it."""
    return writekit.asked_or_kept_id(
        options.session_id,
        conversation,
        loss,
        lambda s: s if SAFE_ID.match(s) else None,
        _NAMESPACE,
        "is not a plain name",
        "a session id is letters, digits, '.', '_' and '-' only",
    )


def _started(value: object) -> str:
    """The first message's start as aider writes it (local time, no zone), else now."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            pass
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def _text(message: Message, loss: LossReport) -> str:
    pieces = []
    for block in message.content:
        if isinstance(block, Text):
            pieces.append(block.text)
        elif isinstance(block, Thinking):
            loss.add("write:thinking", "aider's history has no place for thinking: dropped")
        else:
            # the call's id goes in the report: read back, it is only text inside a paragraph
            ident = (
                block.id if isinstance(block, ToolUse) else block.tool_use_id if isinstance(block, ToolResult) else None
            )
            holder = (
                f"aider's Markdown history (call {ident})" if isinstance(ident, str) else "aider's Markdown history"
            )
            pieces.append(writekit.as_text(block, loss, holder))
    return "\n\n".join(p for p in pieces if p)


def _escaped(text: str, loss: LossReport) -> str:
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(_MISREAD):
            loss.add("write:markdown-line", f"an assistant line starting {line[:2]!r} written with a space in front")
            lines[i] = " " + line
    return "".join(lines)
