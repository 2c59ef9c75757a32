"""Loading a native session: from a path, bytes, a session database, a folder that is one
session, or a file to be read once as it is decoded. The one way in for every feature
(``txcodec.load`` is :func:`load`); it reaches each harness through the registry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import InputError
from ..core.errors import guarded
from ..core.zst import open_regular
from ..core.zst import read_bytes
from ..model.common import Conversation
from ..model.native import NativeSession
from ..model.native import decode_document
from ..model.native import decode_session
from ..model.native import json_source
from . import registry
from .detect import _best_harness
from .detect import detect
from .detect import is_document
from .detect import spread_document

# the first bytes of every SQLite database file (its file format's header string)
SQLITE_MAGIC = b"SQLite format 3\x00"
_decoder = msgspec.json.Decoder()


def load_document(data: bytes, harness: str | None, path: Path | None) -> NativeSession | None:
    try:
        value = _decoder.decode(json_source(data))
    except (msgspec.DecodeError, RecursionError):
        return None  # not one document after all (or nested too deeply): read it as lines
    name = harness or _best_harness([value])
    return decode_document(data, registry.get(name).codec, name, path)


def split_database(path: Path) -> tuple[Path, str | None] | None:
    """``(database, session id or None)`` when ``path`` names a session database (a store
    with an ``open`` hook reads it): the file itself, or ``<database>#<id>`` for one of
    its sessions."""
    db, mark, wanted = str(path).rpartition("#")
    if mark and not path.exists() and Path(db).is_file():
        path, session = Path(db), wanted
    else:
        session = None
    try:
        with open_regular(path) as file:
            head = file.read(16)
    except OSError:
        return None
    if not head.startswith(b"SQLite"):  # no database: no database store (sqlite3, subprocess) is imported
        return None
    return (path, session) if head == SQLITE_MAGIC else None


def _load_database(db: Path, session: str | None, harness: str | None) -> NativeSession:
    """A session of a database file, read by a store that opens databases. Without
    ``harness``, the store the database fits best (``database_fit``: opencode and Kilo
    tell theirs by their tables), else the one ``harness`` names."""
    dialects = [h for h in registry.harnesses().values() if h.store is not None and h.store.open is not None]
    if harness is None:
        dialects.sort(key=lambda h: h.store.database_fit(db), reverse=True)
    else:
        dialects = [h for h in dialects if h.name == harness]
        if not dialects:
            raise InputError(f"{db}: a SQLite database, not a {harness} session file")
    return dialects[0].store.open(db, session)


@guarded
def load(source: bytes | str | os.PathLike[str], harness: str | None = None) -> NativeSession:
    """Load a native session from bytes or a path; the harness is detected when ``None``.
    An opencode or Kilo database is read (read-only) as its only session, or the one
    ``<database>#<id>`` names.

    ``load(b).dump() == b`` for every input (a database: the session's export document).
    ``harness`` may be any spelling :func:`registry.canonical` takes (``claude``, ``Codex``).
    """
    harness = registry.canonical(harness) if harness else harness
    path = None
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        path = Path(source)
        database = split_database(path)
        if database is not None:
            return _load_database(*database, harness)
        folder = _folder_session(path, harness)
        if folder is not None:
            return folder
        if path.is_dir():  # a folder that is one session: its session file
            path = registry.session_in_folder(path) or path
        harness = harness or named_by_store(path)
        data = read_bytes(path)
        if is_document(path):
            session = load_document(data, harness, path)
            if session is not None:
                return session
    if spread_document(data):
        # named or not, bytes of a pretty-printed document (a Continue, cline or opencode
        # session piped in) are that document: read as lines, each would be a fragment
        session = load_document(data, harness, path)
        if session is not None and session.harness != "jsonl":
            return session
    name = harness or detect(data)
    if name == "jsonl" and harness is None and data.lstrip()[:1] == b"{":
        # no line matched a harness: bytes (or a file not named .json) may still be one
        # pretty-printed document, such as a legacy Gemini CLI session
        session = load_document(data, None, path)
        if session is not None and session.harness != "jsonl":
            return session
    return decode_session(data, registry.get(name).codec, name, path)


def _folder_session(path: Path, harness: str | None) -> NativeSession | None:
    """A session kept as a folder of files (OpenHands) is loaded whole, from the folder
    or any file in it, by the store that knows it (its ``session_folder`` and
    ``load_folder`` hooks)."""
    if not (path.is_dir() or path.suffix == ".json"):
        return None
    candidates = [registry.get(harness)] if harness else registry.harnesses().values()
    for found in candidates:
        store = found.store
        folder = store.session_folder(path) if store is not None and store.session_folder is not None else None
        if folder is not None:
            return store.load_folder(folder)
    return None


def named_by_store(path: Path, data: Any = None) -> str | None:
    """The harness whose store names its files so (aider's ``.aider.chat.history.md``:
    Markdown that no content sniffing could tell from any other text). The plugins' names
    are looked up (their entry points cost more than reading a small session) only for a
    file whose first line no built-in client's signature claims (``data``: the file's
    bytes when already read or mapped, else its head is read)."""
    found = registry.named(path.name)
    if found is None and not _signed(path, data):
        found = registry.plugin_named(path.name)
    return found


def _signed(path: Path, data: Any = None) -> bool:
    """Whether the file (or its bytes ``data``) opens with a built-in client's own
    first-line signature (:data:`registry.SIGNATURES`)."""
    if data is not None:
        head = data[:256]
    else:
        try:
            with open_regular(path) as file:
                head = file.read(256)
        except OSError:
            return False
    return registry.sniff(head.split(b"\n", 1)[0]) is not None


def load_once(source: Any, harness: str | None = None) -> NativeSession:
    """:func:`load` for a session that is read once, into Common (``convert``, a page, the
    tables): streamed, as :func:`streamed` says, where its harness can be."""
    harness = registry.canonical(harness) if harness else harness
    session = streamed(source, harness)
    return session if session is not None else load(source, harness)


def streamed(source: Any, harness: str | None) -> NativeSession | None:
    """``load(source)`` for a session that is read once: JSON Lines whose reader reads
    lines as they are decoded (``read_streams``) are left undecoded (a file is mapped in
    memory, not read), so that neither the file's bytes nor its typed records are ever
    all held next to the conversation built from them. ``None`` for anything else (a
    compressed file, a document, a database, a folder), which :func:`load` reads."""
    if isinstance(source, Conversation) or (harness is not None and not registry.get(harness).read_streams):
        return None
    path: Path | None = None
    if isinstance(source, (bytes, bytearray, memoryview)):
        data: Any = bytes(source)
    else:
        path = Path(source)
        if path.suffix != ".jsonl" or not path.is_file() or split_database(path) is not None:
            return None
        import mmap

        harness = harness or named_by_store(path)
        try:
            with open_regular(path) as file:
                data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file cannot be mapped; load() says what is wrong with the others
            return None
    session = streamed_data(data, path, harness)
    if session is None and path is not None:
        data.close()
    return session


def streamed_data(data: Any, path: Path | None, harness: str | None) -> NativeSession | None:
    """:func:`streamed`'s session of ``data``, the bytes of the JSON Lines file ``path``
    (read, or mapped in memory) or of no file: ``None`` when its harness does not read
    lines as they are decoded. (The Parquet export maps the file itself, to hash the very
    bytes it decodes: ``dataset._load_mapped``.)"""
    name = harness or detect(data)
    found = registry.get(name)
    if not data or not found.read_streams:
        return None
    return NativeSession(name, found.codec, [], True, path, pending=data)  # its reader sets its origin
