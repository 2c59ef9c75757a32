"""Typed view of a Continue CLI session file (``~/.continue/sessions/<sessionId>.json``).

Facts from ``cn`` 1.5.47 (``dist/index.js`` and files it wrote against a loopback mock): one
JSON document ``{sessionId, title, workspaceDirectory, history, usage}``, pretty-printed
with two spaces and no final newline. A history item is ``{message: {role, content,
toolCalls?, usage?}, contextItems: [], editorState?, toolCallStates?, conversationSummary?}``;
``contextItems`` is required (without it: "Cannot read properties of undefined (reading
'map')", exit 1). Tool results live in the assistant item's ``toolCallStates[{toolCallId,
toolCall, status, parsedArgs, output: [{content, name, description}]}]``.

The items vary and stay :class:`msgspec.Raw`, so unknown keys survive in the bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType


class Session(msgspec.Struct, rename="camel", omit_defaults=True):
    session_id: str
    history: list[Raw]
    title: str | UnsetType = UNSET
    workspace_directory: str | UnsetType = UNSET
    usage: Raw | UnsetType = UNSET
