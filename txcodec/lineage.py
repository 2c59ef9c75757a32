"""Session lineage: how a session began, what it was forked from, and the graph those
links make across a store (docs/lineage.md).

Only what a file records is used (docs/lineage.md#what-is-measured: no heuristic over
cwd, branch, title or time is sound). A harness whose files record it declares how to
read it (``Harness.origin``, in its own package's ``origin.py``): Claude Code's
``/clear`` head and ``forkedFrom``, Codex's ``forked_from_id``, pi's ``parentSession``.

``started_by`` is ``new`` when the file records none of these. ``resume`` is part of
the vocabulary, but no pinned client records a resume as a session of its own: each
appends the resumed run to the same file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model.common import ForkedFrom
from .model.origin import Origin as Origin  # re-exported: what lineage answers with


def _reader(harness: str) -> Any:
    """The harness's declared :class:`~txcodec.kit.registry.OriginReader`, or None when its
    files record no origin (or no harness has the name)."""
    from .kit import registry

    found = registry.find(harness)
    return found.origin if found is not None else None


def session_origin(session: Any) -> Origin:
    """The origin of a loaded :class:`~txcodec.model.native.NativeSession`."""
    reader = _reader(session.harness)
    path = Path(session.path) if session.path is not None else None
    if reader is None:
        return Origin(session.harness, None, None, None, path)
    # the file the lines were loaded from: a reader may scan it once instead of every line
    return reader.read(session.lines, path, session._source)


def lines_origin(
    harness: str, lines: Any, path: Path | None, maybe_fork: bool | None = None, source: bytes | None = None
) -> Origin:
    """:func:`session_origin` of lines no NativeSession holds (a streamed session:
    ``lines`` as ``native.RawLines`` of the file, ``maybe_fork`` whether any line holds
    the key that names a fork, found while it was streamed; a listing: the lines as
    bytes, ``source`` the file they were split from)."""
    reader = _reader(harness)
    if reader is None:
        return Origin(harness, None, None, None, path)
    return reader.read(lines, path, source, maybe_fork)


def records_origin(harness: str) -> bool:
    """Whether the files of ``harness`` record how a session began."""
    return _reader(harness) is not None


def origin(path: str | os.PathLike[str], harness: str | None = None) -> Origin:
    """How the session in ``path`` began and what it was forked from: the function a
    session listing calls per row (it reads the file's lines, not its conversation)."""
    from .kit.load import load

    return session_origin(load(path, harness))


# --- the graph across a store ------------------------------------------------------------


def store_files(harness: str, root: Path) -> list[Path]:
    """The main session files under a store root."""
    reader = _reader(harness)
    return reader.main_files(root) if reader is not None else []


def default_root(harness: str, path: Path) -> Path:
    """The store a session file sits in: two levels up (a project folder, then the file)
    unless the harness says otherwise."""
    reader = _reader(harness)
    if reader is not None and reader.store_root is not None:
        return reader.store_root(path)
    return path.resolve().parent.parent


def file_origin(path: Path, harness: str) -> Origin:
    """:func:`origin` of a main session file from its bytes, split into lines, without
    loading it: the origin readers read a line as bytes as they read a loaded one
    (``tests/features/test_lineage.py`` holds them equal on every golden and corpus file)."""
    from .core.zst import read_bytes

    reader = _reader(harness)
    if reader is None:
        return Origin(harness, None, None, None, path)
    data = read_bytes(path)
    return reader.read(data.split(b"\n"), path, data)


def store_origins(harness: str, root: Path, index: bool = True) -> list[Origin]:
    """The origin of every main session under ``root``; a file that cannot be read is
    left out (its own command reports it). With ``index``, each origin is kept in the
    session index while its file keeps its size, time and inode, and read from there."""
    from .session_index import SessionIndex
    from .session_index import stamp

    kept = SessionIndex() if index else None
    out = []
    try:
        for path in store_files(harness, root):
            name = str(path)
            found = kept.get_origin(harness, name) if kept is not None else None
            if found is not None:
                out.append(found)
                continue
            before = stamp(name)
            try:
                found = file_origin(path, harness)
            except (OSError, ValueError):
                continue
            out.append(found)
            if kept is not None:
                kept.put_origin(found, name, before)
    finally:
        if kept is not None:
            kept.close()
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
