"""Which files a pi tool call changed (``model.changes``; docs/changes.md): a ``write``
from its call, an ``edit`` from the display diff pi keeps in the message's ``details``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ...kit.registry import ChangesReader
from ...model.changes import SHELL_TOOLS
from ...model.changes import Call
from ...model.changes import diff_hunks
from ...model.changes import failed
from ...model.changes import relative
from ...model.changes import sha256
from ...model.changes import shell_change
from ...model.common import Change
from ...model.common import Hunk

_PI_LINE = re.compile(r"^([ +-])\s*\d+ (.*)$", re.S)


def extract(call: Call, cwd: Any, harness: str) -> Iterator[Change]:
    if call.use.name in SHELL_TOOLS:
        yield shell_change(call, harness)
        return
    if failed(call) or call.result is None:
        return
    i = call.use.input if isinstance(call.use.input, dict) else {}
    path = i.get("path", i.get("file_path"))
    if call.use.name == "write" and isinstance(i.get("content"), str):
        # pi's write result carries no details: the content is the call's, and whether
        # the file existed before is not recorded
        yield Change(
            call.use.id,
            "write",
            "write",
            harness,
            "derived",
            relative(path, cwd),
            hunks=diff_hunks(None, i["content"]),
            after_sha256=sha256(i["content"]),
        )
        return
    details = (call.message.extra.get("details") or {}).get(call.use.id) if call.message is not None else None
    if call.use.name == "edit" and isinstance(details, dict) and isinstance(details.get("diff"), str):
        # pi's display diff: "+12 text" / "-12 text" / " 12 text", "..." between hunks
        hunks: list[Hunk] = [Hunk([])]
        for line in details["diff"].split("\n"):
            m = _PI_LINE.match(line)
            if m:
                hunks[-1].lines.append(m.group(1) + m.group(2))
            elif line.strip() == "..." and hunks[-1].lines:
                hunks.append(Hunk([]))
        yield Change(
            call.use.id,
            "edit",
            "modify",
            harness,
            "runtime_reported",
            relative(path, cwd),
            hunks=[h for h in hunks if h.lines],
        )


CHANGES = ChangesReader(extract=extract)
