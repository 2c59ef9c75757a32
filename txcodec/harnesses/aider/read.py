"""aider chat history -> Common conversation.

The history is split the way aider restores it (``split_chat_history_markdown``, 0.86.2):
the text is cut into lines as :meth:`str.splitlines` does; a ``# `` line is skipped; a run
of ``#### `` lines is one user message; a run of ``> `` lines (tool output, notices) ends
the messages before it and is never sent; every other line joins the assistant message. A
message of whitespace alone is no message.

In Common a user message is its lines without the ``#### `` prefix and the two-space
Markdown line break aider adds to each, and an assistant message is its text with the blank
lines around it removed (aider sends both with that whitespace; nothing else differs).
Each ``> `` block is reported (``record:tool-output``), as is any other ``# `` line
(``record:heading``); the first ``# aider chat started at`` gives ``meta.started_at``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import msgspec

from ...model.common import Conversation
from ...model.common import Message
from ...model.common import Meta
from ...model.common import Text
from ...model.loss import LossReport
from ...model.native import NativeSession
from ...model.native import Opaque

STARTED = "# aider chat started at "


def parse(text: str) -> list[tuple[str, str, int]]:
    """``(role, content as aider sends it, line number from 1)`` of each message, the
    ``> `` blocks as role ``tool``."""
    messages: list[tuple[str, str, int]] = []
    current: dict[str, list[str]] = {"user": [], "assistant": [], "tool": []}
    first: dict[str, int] = {}

    def flush(role: str) -> None:
        content = "".join(current[role])
        if content.strip():
            messages.append((role, content, first[role]))
        current[role] = []

    for n, line in enumerate(text.splitlines(keepends=True), 1):
        if line.startswith("# "):
            continue
        if line.startswith("> "):
            flush("assistant")
            flush("user")
            role, piece = "tool", line[2:]
        elif line.startswith("#### "):
            flush("assistant")
            flush("tool")
            role, piece = "user", line[5:]
        else:
            flush("user")
            flush("tool")
            role, piece = "assistant", line
        if not current[role]:
            first[role] = n
        current[role].append(piece)
    flush("assistant")
    flush("user")
    flush("tool")
    return messages


def user_text(content: str) -> str:
    """What the user typed: each line without the two-space line break aider added."""
    lines = content.splitlines()
    return "\n".join(line[:-2] if line.endswith("  ") else line for line in lines)


def read(session: NativeSession, loss: LossReport) -> Conversation:
    file = str(session.path) if session.path else None
    conversation = Conversation(meta=Meta(source_harness="aider"))
    for n, line in enumerate(session.lines, 1):
        if isinstance(line.record, Opaque):
            loss.add("opaque", f"{line.record.diagnostic}: read with its bad bytes replaced", file=file, line=n)
    text = session.dump().decode("utf-8", "replace")
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(STARTED):
            if conversation.meta.started_at is msgspec.UNSET:
                conversation.meta.started_at = _when(line[len(STARTED) :])
        elif line.startswith("# "):
            loss.add("record:heading", "a '# ' line: aider skips it when it restores the history", file=file, line=n)
    if session.path is not None:
        conversation.meta.cwd = str(Path(session.path).resolve().parent)
    for role, content, n in parse(text):
        if role == "tool":
            loss.add(
                "record:tool-output",
                "aider's tool output and notices ('> ' lines): never sent to the model",
                file=file,
                line=n,
            )
            continue
        body = user_text(content) if role == "user" else content.strip()
        message = Message(role, [Text(body)], source_ids=[f"line {n}"])
        if role == "assistant":
            message.stop_reason = "end_turn"
        conversation.messages.append(message)
    return conversation


def _when(value: str) -> str:
    """aider's local time ``%Y-%m-%d %H:%M:%S`` as ISO 8601 (no zone is recorded)."""
    try:
        return datetime.strptime(value.strip(), "%Y-%m-%d %H:%M:%S").isoformat()
    except ValueError:
        return value.strip()
