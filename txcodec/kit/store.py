"""The store-authoring kit: what the harnesses' ``store.py`` modules do alike to list their
sessions (find the files, read each one's lines, describe it). A store declares what it
offers as a :class:`~txcodec.kit.registry.Store`; these helpers write its functions."""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import TypeVar

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ..core.jsonl import split_lines
from ..model.native import json_source

T = TypeVar("T")


def described(paths: Iterable[Path], describe: Callable[[Path], T | None]) -> list[T]:
    """Each of ``paths`` described, in order; a path ``describe`` cannot read (None) is left out."""
    found = (describe(p) for p in paths)
    return [info for info in found if info is not None]


def listed(
    root: str | os.PathLike[str] | None,
    default_root: Callable[[], Path],
    files: Callable[[Path], list[Path]],
    describe: Callable[[Path], T | None],
) -> list[T]:
    """A store's ``discover`` when a session is one file: every file ``files`` finds under
    ``root`` (the store's default root when None), described."""
    folder = Path(root) if root is not None else default_root()
    return described(files(folder), describe)


def files_under(folder: Path, pattern: str, keep: Callable[[Path], Any] | None = None) -> list[Path]:
    """The paths ``pattern`` matches in ``folder`` that ``keep`` accepts, sorted; none when
    there is no such folder (a client never run here)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(pattern) if keep is None or keep(p))


def file_lines(path: Path) -> list[bytes] | None:
    """The lines of a JSON Lines file, or None when it cannot be read (listed, then gone)."""
    try:
        return split_lines(path.read_bytes())[0]
    except OSError:
        return None


def peeks(lines: Iterable[bytes], decoder: msgspec.json.Decoder) -> Iterator[Any]:
    """Each line decoded by ``decoder`` (a struct of the few fields a listing reads); a
    line that does not decode is passed over, as the reader reports it, not the listing."""
    for line in lines:
        try:
            yield decoder.decode(json_source(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue


def stamp(info: Any, timestamp: str | None) -> None:
    """``info.first_timestamp`` and ``info.last_timestamp`` moved on by a record's time."""
    if timestamp:
        if info.first_timestamp is UNSET:
            info.first_timestamp = timestamp
        info.last_timestamp = timestamp


class LineSessionInfo(msgspec.Struct, omit_defaults=True):
    """What a listing says of a session kept as one JSON Lines event log (GitHub Copilot
    CLI, Qwen Code): its id and file, where and with which version it ran, its first and
    last record's times, its lines and its user and assistant messages."""

    id: str
    path: str
    cwd: str | UnsetType = UNSET
    version: str | UnsetType = UNSET
    first_timestamp: str | UnsetType = UNSET
    last_timestamp: str | UnsetType = UNSET
    lines: int = 0
    messages: int = 0
