"""Which files a Gemini CLI tool call changed (``model.changes``; docs/changes.md), from
the ``resultDisplay`` its result kept. Qwen Code declares the same extractor: its
``toolCallResult`` holds the same display."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from msgspec import UNSET

from ...kit.registry import ChangesReader
from ...model.changes import SHELL_TOOLS
from ...model.changes import Call
from ...model.changes import failed
from ...model.changes import from_versions
from ...model.changes import parse_unified
from ...model.changes import shell_change
from ...model.common import Change


def extract(call: Call, cwd: Any, harness: str) -> Iterator[Change]:
    """Gemini CLI's ``resultDisplay`` (Qwen Code's, kept on the message as
    ``toolCallResult`` when not on the result)."""
    if call.use.name in SHELL_TOOLS:
        yield shell_change(call, harness)
        return
    if failed(call) or call.result is None:
        return
    display = call.result.structured
    if display is UNSET and call.message is not None:  # Qwen Code keeps it on the message
        record = call.message.extra.get("toolCallResult")
        if isinstance(record, dict) and record.get("callId") in (None, call.use.id):
            display = record.get("resultDisplay")
    if not isinstance(display, dict) or "newContent" not in display or "fileDiff" not in display:
        return
    before = None if display.get("isNewFile") is True else display.get("originalContent")
    path = display.get("filePath") or display.get("fileName")
    diff = display.get("fileDiff")
    hunks = parse_unified(diff) if isinstance(diff, str) else []
    change = from_versions(call.use.name, call, harness, cwd, path, before, display.get("newContent"), hunks)
    if "isNewFile" not in display and before == "":
        # Qwen Code writes no isNewFile: an empty original is a new file or an empty
        # one, which the record does not tell apart
        change.operation, change.before_sha256 = "write", UNSET
    yield change


CHANGES = ChangesReader(extract=extract)
