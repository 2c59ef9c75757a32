"""Session lineage: how a session began, what it was forked from, and the graph those
links make across a store (docs/lineage.md).

Only what a file records is used (docs/lineage.md#what-is-measured: no heuristic over
cwd, branch, title or time is sound):

* Claude Code: a session whose head is the fixed three-record ``/clear`` chain (a root
  ``isMeta`` user record with ``<local-command-caveat>``, a user record
  ``<command-name>/clear</command-name>`` under it, a ``system/local_command`` under
  that) began with ``/clear``; nothing points back to its predecessor. Records carrying
  ``forkedFrom {sessionId, messageUuid}`` naming another session make it a fork.
* Codex: ``session_meta.forked_from_id``. pi: the header's ``parentSession``.

``started_by`` is ``new`` when the file records none of these. ``resume`` is part of
the vocabulary, but no pinned client records a resume as a session of its own: each
appends the resumed run to the same file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, is_
from pathlib import Path
from typing import Any

import msgspec

from .model.common import ForkedFrom
from .model.native import Line

_decode = msgspec.json.Decoder()
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
CLEAR_COMMAND = "<command-name>/clear</command-name>"
CAVEAT = "<local-command-caveat>"
FORKED_FROM = b'"forkedFrom"'
_FORKED_FROM = re.compile(FORKED_FROM)


@dataclass
class Origin:
    """How one session began. ``started_by`` is ``None`` when its harness records no
    lineage at all (Gemini CLI, Qwen Code)."""

    harness: str
    session_id: str | None
    started_by: str | None
    forked_from: ForkedFrom | None = None
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "session_id": self.session_id, "started_by": self.started_by,
                "forked_from": msgspec.to_builtins(self.forked_from) if self.forked_from else None,
                "path": str(self.path) if self.path else None}


def _objects(lines: Iterable[Any], needle: bytes | None = None) -> Iterable[dict]:
    # a loaded line is read where it lies (``Line.raw`` would copy each view into the
    # data to bytes of its own and keep them: a second copy of the file)
    search = re.compile(re.escape(needle)).search if needle is not None else None
    for line in lines:
        raw = line._raw if type(line) is Line else getattr(line, "raw", line)
        if not raw or (search is not None and search(raw) is None):
            continue
        try:
            value = _decode.decode(raw)
        except msgspec.DecodeError:
            continue
        if isinstance(value, dict):
            yield value


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
    return (caveat.get("type") == "user" and caveat.get("isMeta") is True and caveat.get("parentUuid") is None
            and CAVEAT in _text(caveat)
            and command.get("type") == "user" and command.get("parentUuid") == caveat.get("uuid")
            and CLEAR_COMMAND in _text(command)
            and local.get("type") == "system" and local.get("subtype") == "local_command"
            and local.get("parentUuid") == command.get("uuid"))


def claude_origin(lines: list[Any], path: Path | None = None, source: bytes | None = None,
                  maybe_fork: bool | None = None) -> Origin:
    """``source``, when given, is the file the untouched ``lines`` were loaded from: one
    scan of it says whether any line can name a fork. ``maybe_fork`` is that answer when
    the caller already has it (a streamed session scans each batch as it decodes it)."""
    head: list[dict] = []
    session_id = None
    for record in _objects(lines):
        if session_id is None and isinstance(record.get("sessionId"), str):
            session_id = record["sessionId"]
        if isinstance(record.get("uuid"), str):
            head.append(record)
        if len(head) >= 3 and session_id is not None:
            break
    if session_id is None and path is not None and _UUID.fullmatch(path.stem):
        session_id = path.stem
    forked: ForkedFrom | None = None
    # the last copied record (in line order) names the message the fork reaches: read
    # from the end, so a long fork decodes one line, not every copied one
    if maybe_fork is None:
        maybe_fork = source is None or _FORKED_FROM.search(source) is not None
    for record in _objects(reversed(lines) if maybe_fork else (), _FORKED_FROM.pattern):
        link = record.get("forkedFrom")
        if isinstance(link, dict) and isinstance(link.get("sessionId"), str) and link["sessionId"] != record.get("sessionId", session_id):
            message = link.get("messageUuid")
            forked = ForkedFrom(link["sessionId"], message if isinstance(message, str) else msgspec.UNSET)
            break
    if forked is not None:
        return Origin("claude_code", session_id, "fork", forked, path)
    return Origin("claude_code", session_id, "clear" if is_clear_head(head) else "new", None, path)


def codex_origin(lines: list[Any], path: Path | None = None) -> Origin:
    """The first ``session_meta`` is the rollout's own: its ``forked_from_id`` names the
    parent. A fork also copies the parent's ``session_meta`` ahead of the replayed
    history, which names it when the field is absent."""
    own: str | None = None
    for record in _objects(codex_meta_candidates(lines), b'"session_meta"'):
        payload = record.get("payload")
        if record.get("type") != "session_meta" or not isinstance(payload, dict):
            continue
        sid = payload.get("id") if isinstance(payload.get("id"), str) else None
        if own is None:
            own = sid or ""
            parent = payload.get("forked_from_id")
            if isinstance(parent, str) and parent:
                return Origin("codex", sid, "fork", ForkedFrom(parent), path)
        elif sid and sid != own:
            return Origin("codex", own, "fork", ForkedFrom(sid), path)
    if own is None:
        return Origin("codex", None, None, None, path)
    return Origin("codex", own or None, "new", None, path)


def codex_meta_candidates(lines: list[Any]) -> list[Any]:
    """``lines`` without the loaded lines decoded as a response item or an event, which
    name no session: msgspec takes a tagged line only when every "type" key in it agrees
    with the tag, so its last "type" (the one a plain decode keeps) is not
    "session_meta". Leaving them out spares a search of nearly every line."""
    from .harnesses.codex.records import EventMsgLine, ResponseItemLine

    skip = (ResponseItemLine, EventMsgLine)
    return [line for line in lines if type(line) is not Line or type(line._record) not in skip]


def pi_origin(lines: list[Any], path: Path | None = None) -> Origin:
    for record in _objects(lines[:1]):
        if record.get("type") != "session":
            break
        sid = record.get("id") if isinstance(record.get("id"), str) else None
        parent = record.get("parentSession")
        if isinstance(parent, str) and parent:
            return Origin("pi", sid, "fork", ForkedFrom(_pi_session_id(parent, path)), path)
        return Origin("pi", sid, "new", None, path)
    return Origin("pi", None, None, None, path)


def _pi_session_id(parent: str, path: Path | None) -> str:
    """pi names the parent by its file (``<time>_<id>.jsonl``): the id in its header when
    the file is there, else the one in its name, else the path as written."""
    where = Path(parent)
    if not where.is_absolute() and path is not None:
        where = path.parent / where
    try:
        with open(where, "rb") as f:
            first = f.readline()
        header = _decode.decode(first)
        if isinstance(header, dict) and isinstance(header.get("id"), str):
            return header["id"]
    except (OSError, msgspec.DecodeError):
        pass
    m = _UUID.search(where.name)
    return m.group(0) if m else parent


_BY_HARNESS = {"claude_code": claude_origin, "stream_json": None, "codex": codex_origin, "pi": pi_origin}
# the harnesses whose files record an origin, each with the function that reads it from the
# file's lines (bytes do: a session listing hands over the lines it has already read)
ORIGIN_FROM_LINES = {name: find for name, find in _BY_HARNESS.items() if find is not None}


def session_origin(session: Any) -> Origin:
    """The origin of a loaded :class:`~txcodec.model.native.NativeSession`."""
    find = _BY_HARNESS.get(session.harness)
    path = Path(session.path) if session.path is not None else None
    if find is None:
        return Origin(session.harness, None, None, None, path)
    source = session._source
    if find is claude_origin and source is not None:
        raws = list(map(attrgetter("_raw"), session.lines))
        if all(map(isinstance, raws, repeat(memoryview))) and all(map(is_, map(attrgetter("obj"), raws), repeat(source))):
            return claude_origin(session.lines, path, source)  # every line still a view into the file
    return find(session.lines, path)


def lines_origin(harness: str, lines: Any, path: Path | None, maybe_fork: bool | None = None) -> Origin:
    """:func:`session_origin` of lines no NativeSession holds (a streamed session:
    ``lines`` as ``native.RawLines`` of the file; ``maybe_fork`` whether any line holds
    the key that names a fork, found while it was streamed)."""
    find = _BY_HARNESS.get(harness)
    if find is None:
        return Origin(harness, None, None, None, path)
    return find(lines, path, maybe_fork=maybe_fork) if find is claude_origin else find(lines, path)


def origin(path: str | os.PathLike[str], harness: str | None = None) -> Origin:
    """How the session in ``path`` began and what it was forked from: the function a
    session listing calls per row (it reads the file's lines, not its conversation)."""
    from . import api

    return session_origin(api.load(path, harness))


# --- the graph across a store ------------------------------------------------------------


def store_files(harness: str, root: Path) -> list[Path]:
    """The main session files under a store root."""
    if harness == "claude_code":
        return sorted(p for p in root.glob("*/*.jsonl") if _UUID.fullmatch(p.stem))
    if harness == "codex":
        return sorted(p for p in root.rglob("rollout-*.jsonl"))
    if harness == "pi":
        return sorted(root.glob("*/*.jsonl"))
    return []


def default_root(harness: str, path: Path) -> Path:
    """The store a session file sits in: Claude Code's and pi's project folders are one
    level down, Codex's rollouts under ``sessions/YYYY/MM/DD``."""
    path = path.resolve()
    if harness == "codex":
        for parent in path.parents:
            if parent.name in ("sessions", "archived_sessions"):
                return parent
        return path.parent
    return path.parent.parent


def store_origins(harness: str, root: Path) -> list[Origin]:
    """The origin of every main session under ``root``; a file that cannot be read is
    left out (its own command reports it)."""
    out = []
    for path in store_files(harness, root):
        try:
            out.append(origin(path, harness))
        except (OSError, ValueError):
            continue
    return out


@dataclass
class Lineage:
    """One session's place in its store's fork graph: what it came from, what came from it."""

    session: Origin
    ancestors: list[Origin | ForkedFrom]  # nearest first; a ForkedFrom names one not in the store
    descendants: list[tuple[int, Origin]]  # (depth, origin), depth-first


def lineage(session: Origin, origins: list[Origin]) -> Lineage:
    by_id = {o.session_id: o for o in origins if o.session_id}
    ancestors: list[Origin | ForkedFrom] = []
    seen = {session.session_id}
    link = session.forked_from
    while link is not None and link.session_id not in seen:
        seen.add(link.session_id)
        parent = by_id.get(link.session_id)
        if parent is None:
            ancestors.append(link)
            break
        ancestors.append(parent)
        link = parent.forked_from
    children: dict[str, list[Origin]] = {}
    for o in origins:
        if o.forked_from is not None:
            children.setdefault(o.forked_from.session_id, []).append(o)
    descendants: list[tuple[int, Origin]] = []

    def walk(sid: str | None, depth: int, visited: set) -> None:
        for child in children.get(sid or "", ()):
            if child.session_id in visited:
                continue
            visited.add(child.session_id)
            descendants.append((depth, child))
            walk(child.session_id, depth + 1, visited)

    walk(session.session_id, 1, {session.session_id})
    return Lineage(session, ancestors, descendants)
