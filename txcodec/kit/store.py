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

from ..core.errors import TxcodecError
from ..core.jsonl import split_lines
from ..core.zst import read_bytes
from ..model.native import json_source

T = TypeVar("T")


class Listing(list):  # type: ignore[type-arg]
    """A store's sessions, and ``errors``: one line for each file it passed over because
    it could not be read (``txcodec list`` prints each as a warning)."""

    def __init__(self, items: Iterable[Any] = (), errors: list[str] | None = None) -> None:
        super().__init__(items)
        self.errors: list[str] = errors if errors is not None else []

    def extend_listing(self, other: Iterable[Any]) -> None:
        self.extend(other)
        self.errors.extend(getattr(other, "errors", ()))


# what reading one file of a store may raise: the file system's errors (a FIFO or device
# is a StoreError: core.zst.open_regular), input past a format's limits, nesting too deep
UNREADABLE = (OSError, ValueError, RecursionError)


def skipped(path: Any, exc: BaseException) -> str | None:
    """The warning for a file a listing passes over (docs/guarantees.md#limits); None for
    one that is gone since it was found (a session removed while listing)."""
    if isinstance(exc, FileNotFoundError):
        return None
    if isinstance(exc, RecursionError):
        why = "nested too deeply to read"
    elif isinstance(exc, OSError) and not isinstance(exc, TxcodecError):
        why = exc.strerror or " ".join(str(exc).split())
    else:
        why = " ".join(str(exc).split())
    # the file that failed, when it is one inside the session (an event of a folder session)
    filename = getattr(exc, "filename", None)
    where = shown_path(filename if isinstance(exc, OSError) and filename else path)
    return why if why.startswith(where) else f"{where}: {why}"


def shown_path(path: Any) -> str:
    """A path as a line may show it: a name that is not UTF-8 as ``os.fsdecode`` reads it,
    its undecodable bytes as ``\\xNN`` escapes (never a lone surrogate, which no UTF-8
    output can print)."""
    text = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else str(path)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def utf8_name(text: str) -> bool:
    """Whether a name read with ``os.fsdecode`` is valid UTF-8 (no surrogate escapes), so
    that it can be kept in an index or printed as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def described(paths: Iterable[Path], describe: Callable[[Path], T | None]) -> Listing:
    """Each of ``paths`` described, in order; a path that is no session of the store
    (None) is left out, and one that cannot be read is left out with a line in
    ``errors`` saying why."""
    out = Listing()
    for path in paths:
        try:
            info = describe(path)
        except UNREADABLE as exc:
            line = skipped(path, exc)
            if line is not None:
                out.errors.append(line)
            continue
        if info is not None:
            out.append(info)
    return out


def listed(
    root: str | os.PathLike[str] | None,
    default_root: Callable[[], Path],
    files: Callable[[Path], list[Path]],
    describe: Callable[[Path], T | None],
) -> Listing:
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
    """The lines of a JSON Lines file, or None when it is gone (listed, then removed). A
    file that cannot be read raises (:func:`described` reports it), a FIFO or a device
    among them (:func:`txcodec.core.zst.read_bytes` reads a regular file only)."""
    try:
        return split_lines(read_bytes(path))[0]
    except FileNotFoundError:
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
