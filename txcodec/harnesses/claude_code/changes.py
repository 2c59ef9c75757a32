"""Which files a Claude Code tool call changed (``model.changes``; docs/changes.md), from
the ``toolUseResult`` its result kept. stream-json declares the same extractor: its
``tool_use_result`` is the same object."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from msgspec import UNSET

from ...kit.registry import ChangesReader
from ...model.changes import SHELL_TOOLS
from ...model.changes import SUBAGENT_NOTE
from ...model.changes import Call
from ...model.changes import apply_hunks
from ...model.changes import failed
from ...model.changes import from_versions
from ...model.changes import relative
from ...model.changes import sha256
from ...model.changes import shell_change
from ...model.common import Change
from ...model.common import Hunk


def extract(call: Call, cwd: Any, harness: str) -> Iterator[Change]:
    """Claude Code's ``toolUseResult`` (stream-json carries the same object as
    ``tool_use_result``)."""
    name = call.use.name
    if name in SHELL_TOOLS:
        yield shell_change(call, harness)
        return
    if name not in ("Edit", "MultiEdit", "Write", "NotebookEdit") or failed(call):
        return
    s = call.result.structured if call.result is not None else UNSET
    if isinstance(s, dict) and isinstance(s.get("filePath"), str) and "originalFile" in s:
        before = s.get("originalFile")
        patch = s.get("structuredPatch")
        hunks = [_claude_hunk(h) for h in patch if isinstance(h, dict)] if isinstance(patch, list) else []
        after: Any = UNSET
        if name == "Write" and isinstance(s.get("content"), str):
            after = s["content"]
        elif isinstance(before, str) and hunks:
            after = apply_hunks(before, hunks)  # None when the patch does not fit
        operation = "create" if before is None else "modify"
        if isinstance(after, str):
            yield from_versions(name, call, harness, cwd, s["filePath"], before, after, hunks, operation)
        else:  # the after-content is not known: neither is its hash, nor a diff to compute
            yield Change(
                call.use.id,
                name,
                operation,
                harness,
                "runtime_reported",
                relative(s["filePath"], cwd),
                hunks=hunks,
                before_sha256=sha256(before if isinstance(before, str) else None),
            )
    elif isinstance(s, dict) and isinstance(s.get("notebook_path"), str):
        yield from_versions(
            name, call, harness, cwd, s["notebook_path"], s.get("original_file"), s.get("updated_file"), None, "modify"
        )
    elif s is UNSET and call.result is not None:
        # a subagent's transcript (or a client that wrote no toolUseResult): no patch
        i = call.use.input if isinstance(call.use.input, dict) else {}
        path = i.get("file_path", i.get("notebook_path"))
        yield Change(
            call.use.id,
            name,
            "write" if name == "Write" else "modify",
            harness,
            "unknown",
            relative(path, cwd),
            note=SUBAGENT_NOTE,
        )


def _claude_hunk(h: dict) -> Hunk:
    given = h.get("lines")
    lines = [x for x in given if isinstance(x, str) and not x.startswith("\\")] if isinstance(given, list) else []

    def num(key: str) -> Any:
        v = h.get(key)
        return v if isinstance(v, int) else UNSET

    return Hunk(lines, num("oldStart"), num("oldLines"), num("newStart"), num("newLines"))


CHANGES = ChangesReader(extract=extract)
