"""Where Codex keeps rollouts, and a shallow listing of them.

``$CODEX_HOME`` (default ``~/.codex``) holds ``sessions/YYYY/MM/DD/rollout-<ts>-<uuid>
.jsonl`` and ``archived_sessions/`` (docs/codex.md#format-facts). Newer builds may keep a ``.jsonl.zst``
instead: it is read through :func:`txcodec.core.zst.read_bytes` and :func:`save` writes it
back compressed. The SQLite files next to them are an index Codex rebuilds; a lone rollout
resumes by id (docs/codex.md#how-the-real-client-is-driven), so they are neither read nor written here.

The listing reads each rollout shallow (:mod:`.scan`). Unreadable files are skipped, a
missing root lists nothing, and a file without a meta id falls back to the id in its name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from ...core.atomic import write_atomic
from ...core.jsonl import split_lines
from ...core.zst import open_regular
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import UNREADABLE
from ...kit.store import Listing
from ...kit.store import skipped
from ...model.native import json_source
from .scan import SessionInfo
from .scan import id_from_name
from .scan import scan

SUFFIXES = (".jsonl", ".jsonl.zst", ".json")  # .json: a 0.1.x rollout, one document


def default_root() -> Path:
    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


def rollout_files(root: Path) -> list[tuple[Path, bool]]:
    """``(path, archived)`` for every rollout under ``sessions/`` and ``archived_sessions/``."""
    return [(Path(path), archived) for path, archived in _rollout_paths(root)]


def _rollout_paths(root: Path) -> list[tuple[str, bool]]:
    """:func:`rollout_files` with each path as the string pathlib writes (the listing's own),
    in the same order: by their components, as paths compare, which is not the order of the
    strings ("a-b" sorts before "a/b")."""
    found = []
    for sub, archived in (("sessions", False), ("archived_sessions", True)):
        base = root / sub
        if not base.is_dir():
            continue
        paths: list[str] = []
        _rollouts_under(str(base), paths)
        found.extend((path, archived) for path in paths)
    found.sort(key=lambda item: (item[0].split(os.sep), item[1]))
    return found


def _rollouts_under(folder: str, out: list[str]) -> None:
    """What ``rglob("rollout-*")`` and ``is_file()`` find, from the entries' own types (a
    store of thousands of rollouts is listed for every ``usage``): folders are entered,
    symlinked ones are not; a symlink to a rollout counts; a folder that cannot be read
    is passed over."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    _rollouts_under(entry.path, out)
                elif (
                    entry.name.startswith("rollout-")
                    and entry.name.endswith(SUFFIXES)
                    and (entry.is_file() or os.path.exists(entry.path))
                ):
                    # a FIFO or a device so named is listed too, and passed over with a warning by
                    # the read (core.zst.open_regular); a dangling link is passed over in silence
                    out.append(entry.path)
    except OSError:
        pass


def discover(root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    root = Path(root) if root is not None else default_root()
    sessions = Listing()
    for path, archived in rollout_files(root):
        try:
            info = scan(path)
        except UNREADABLE as exc:  # unreadable, a broken or bombed compressed file: one warning each
            line = skipped(path, exc)
            if line is not None:
                sessions.errors.append(line)
            continue
        info.archived = archived
        sessions.append(info)
    return sessions


def discover_files(root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """The rollouts :func:`discover` lists, for a caller that wants only the files (the
    Parquet export): an uncompressed one is known by its name (its id the name's) and is
    only opened, so that one that cannot be read is left out as :func:`discover` leaves it
    out; a compressed one is still read whole, since a broken one is left out too."""
    root = Path(root) if root is not None else default_root()
    sessions = Listing()
    for path, archived in _rollout_paths(root):
        try:
            if path.endswith(".zst"):
                info = scan(Path(path))
            else:
                open_regular(path).close()  # opened only to know it can be read (a FIFO is refused, unblocked)
                info = SessionInfo(id=id_from_name(os.path.basename(path)) or os.path.basename(path), path=path)
        except UNREADABLE as exc:
            line = skipped(path, exc)
            if line is not None:
                sessions.errors.append(line)
            continue
        info.archived = archived
        sessions.append(info)
    return sessions


def describe_item(info: SessionInfo) -> SessionInfo:
    """A rollout :func:`discover_files` listed, described as :func:`discover` describes it
    (``list --limit`` reads only the rollouts that can be among the newest); raises what
    :func:`scan` raises for one that cannot be read."""
    if info.compressed or info.lines:  # discover_files read it already
        return info
    return described(scan(Path(info.path)), info)


def described(found: SessionInfo, listed: SessionInfo) -> SessionInfo:
    """The rollout ``listed`` as its read ``found`` it."""
    found.archived = listed.archived
    return found


def describe_lean(info: SessionInfo) -> tuple[SessionInfo, Any]:
    """:func:`describe_item` and :func:`summarize` from one read of the rollout, each line
    decoded once: the scan is taken from the records the details are read from
    (:func:`.details.summarize_scanning`). A rollout read already, or a 0.1.x document, is
    described as before."""
    from .details import summarize_scanning

    path = Path(info.path)
    if info.compressed or info.lines or not path.name.endswith(".jsonl"):
        return describe_item(info), None
    data = read_bytes(path)  # raises as scan raises
    found = SessionInfo(id="", path=info.path)
    details, whole = summarize_scanning(path, data, found)
    if not whole:
        return described(scan(path, data), info), details
    found.id = found.id or id_from_name(path.name) or path.name
    return described(found, info), details


def session_id_of(data: bytes) -> str | None:
    """The id in the first ``session_meta`` (or 2025 bare meta) line."""
    for raw in split_lines(data[: 1 << 22])[0][:50]:
        try:
            value = msgspec.json.decode(json_source(raw))
        except msgspec.DecodeError:
            continue
        if not isinstance(value, dict):
            continue
        payload = value.get("payload")
        if value.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
            return payload["id"]
        if "type" not in value and isinstance(value.get("id"), str):
            return value["id"]
    return None


def rollout_relpath(timestamp: str, session_id: str) -> str:
    """``sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`` for an RFC 3339
    timestamp. 0.171 refuses to resume a file with ``ordinal`` lines under any other
    name ("does not have a canonical rollout filename")."""
    date, _, clock = timestamp.partition("T")
    y, m, d = date.split("-")[:3]
    hms = clock[:8].replace(":", "-")
    return f"sessions/{y}/{m}/{d}/rollout-{y}-{m}-{d}T{hms}-{session_id}.jsonl"


def save(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False) -> Path:
    """Write a rollout atomically; a ``.zst`` path is written zstandard-compressed."""
    path = Path(path)
    if path.name.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    return write_atomic(path, data, overwrite=overwrite)


def main_files(root: Path) -> list[Path]:
    """Every rollout under ``root``, not reading any."""
    return [p for p, _ in rollout_files(root)]


def summarize(path: str | os.PathLike[str]) -> Any:
    """``list``'s details of the rollout at ``path`` read lean (:mod:`.details`), or None
    where only the full read can tell. The reader's modules are imported on first use."""
    from .details import summarize as lean

    return lean(path)


STORE = Store(
    default_root=default_root,
    discover=discover,
    discover_files=discover_files,
    describe_item=describe_item,
    main_files=main_files,
    summarize=summarize,
    describe_lean=describe_lean,
)
