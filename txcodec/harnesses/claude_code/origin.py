"""How a Claude Code session began (``txcodec.lineage``; docs/lineage.md).

A session whose head is the fixed three-record ``/clear`` chain (a root ``isMeta`` user
record with ``<local-command-caveat>``, a user record ``<command-name>/clear</command-name>``
under it, a ``system/local_command`` under that) began with ``/clear``; nothing points back
to its predecessor. Records carrying ``forkedFrom {sessionId, messageUuid}`` naming another
session make it a fork.
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import attrgetter
from operator import is_
from pathlib import Path
from typing import Any

import msgspec

from ...kit.registry import OriginReader
from ...model.common import ForkedFrom
from ...model.native import Line
from ...model.origin import UUID
from ...model.origin import Origin
from ...model.origin import line_objects

CLEAR_COMMAND = "<command-name>/clear</command-name>"
CAVEAT = "<local-command-caveat>"
FORKED_FROM = b'"forkedFrom"'
_FORKED_FROM = re.compile(FORKED_FROM)


def _text(record: dict) -> str:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else record.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def is_clear_head(head: list[dict]) -> bool:
    """The first three records that have a ``uuid`` are the ``/clear`` chain."""
    if len(head) < 3:
        return False
    caveat, command, local = head[:3]
    return (
        caveat.get("type") == "user"
        and caveat.get("isMeta") is True
        and caveat.get("parentUuid") is None
        and CAVEAT in _text(caveat)
        and command.get("type") == "user"
        and command.get("parentUuid") == caveat.get("uuid")
        and CLEAR_COMMAND in _text(command)
        and local.get("type") == "system"
        and local.get("subtype") == "local_command"
        and local.get("parentUuid") == command.get("uuid")
    )


def _views_of(lines: list[Any], source: Any) -> bool:
    """Whether every loaded line is still a view into ``source``: a line changed since it
    was loaded no longer says what the file holds."""
    raws = list(map(attrgetter("_raw"), lines))
    return all(map(isinstance, raws, repeat(memoryview))) and all(
        map(is_, map(attrgetter("obj"), raws), repeat(source))
    )


def claude_origin(
    lines: list[Any], path: Path | None = None, source: bytes | None = None, maybe_fork: bool | None = None
) -> Origin:
    """``source``, when given, is the file the untouched ``lines`` were loaded from: one
    scan of it says whether any line can name a fork (loaded lines are taken as untouched
    only while each is still a view into it). ``maybe_fork`` is that answer when the
    caller already has it (a streamed session scans each batch as it decodes it)."""
    if source is not None and lines and type(lines[0]) is Line and not _views_of(lines, source):
        source = None
    head: list[dict] = []
    session_id = None
    for record in line_objects(lines):
        if session_id is None and isinstance(record.get("sessionId"), str):
            session_id = record["sessionId"]
        if isinstance(record.get("uuid"), str):
            head.append(record)
        if len(head) >= 3 and session_id is not None:
            break
    if session_id is None and path is not None and UUID.fullmatch(path.stem):
        session_id = path.stem
    forked: ForkedFrom | None = None
    # the last copied record (in line order) names the message the fork reaches: read
    # from the end, so a long fork decodes one line, not every copied one
    if maybe_fork is None:
        maybe_fork = source is None or _FORKED_FROM.search(source) is not None
    for record in line_objects(reversed(lines) if maybe_fork else (), _FORKED_FROM.pattern):
        link = record.get("forkedFrom")
        if (
            isinstance(link, dict)
            and isinstance(link.get("sessionId"), str)
            and link["sessionId"] != record.get("sessionId", session_id)
        ):
            message = link.get("messageUuid")
            forked = ForkedFrom(link["sessionId"], message if isinstance(message, str) else msgspec.UNSET)
            break
    if forked is not None:
        return Origin("claude_code", session_id, "fork", forked, path)
    return Origin("claude_code", session_id, "clear" if is_clear_head(head) else "new", None, path)


def main_files(root: Path) -> list[Path]:
    """The sessions of a store root: ``<project>/<session id>.jsonl``."""
    return sorted(p for p in root.glob("*/*.jsonl") if UUID.fullmatch(p.stem))


ORIGIN = OriginReader(read=claude_origin, main_files=main_files)
