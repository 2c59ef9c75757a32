"""Typed view of aider's chat history (``.aider.chat.history.md``): one record per line.

Facts from aider-chat 0.86.2 (``aider/io.py``, ``aider/utils.py``
``split_chat_history_markdown``, and files it wrote against a loopback mock): the history is
Markdown that aider appends to. Each run opens with ``# aider chat started at <local
time>``; what the user typed is ``#### <line>`` per line (a two-space Markdown line break
after each); the model's reply is written verbatim; tool output and notices are ``> `` lines.
When the history is restored, lines starting with ``# `` are skipped, ``#### `` lines make
a user message, ``> `` lines are never sent, and the other lines make the assistant message.
There are no ids, timestamps per turn or tool calls.
"""

from __future__ import annotations

import msgspec

# how aider reads a line that starts so (the order matters: "#### " is not "# ")
HEADER, USER, TOOL, TEXT = "header", "user", "tool", "text"


class MarkdownLine(msgspec.Struct, omit_defaults=True):
    kind: str  # header, user, tool or text
    text: str  # the line without its prefix and without its LF
