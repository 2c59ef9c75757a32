"""The session index: every harness's store seen through one row type, and one way to name
a session (a path, an id, an id prefix, ``latest`` or ``latest:<harness>``).

``list``, ``convert --all`` and every command that takes a session call :func:`discover`
and :func:`resolve` here, so they all find the same sessions."""

from __future__ import annotations

import os
from collections.abc import Iterable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from .core.dates import parse_timestamp
from .core.dates import within
from .core.errors import InputError
from .kit import registry
from .kit.store import shown_path


class SessionRow(msgspec.Struct, kw_only=True):
    """One session in a store, the same fields for every harness (``None`` when the
    harness does not record it).

    ``path`` is the main transcript; ``project`` the last component of ``cwd`` (Gemini CLI:
    its project folder); ``title`` the harness's own title or summary; ``first_prompt`` the
    first thing the user typed; ``started``/``updated`` ISO 8601 timestamps (``updated``
    falls back to the file's modification time); ``messages`` user + assistant messages;
    ``models`` every model that answered; ``parent`` the id of the session a subagent chat
    belongs to; ``status`` is ``ok`` or what is odd about it (``pruned``, ``metadata-only``,
    ``archived``); ``subagents`` the subagent transcripts stored with it.
    """

    harness: str
    session_id: str
    path: str | None = None
    cwd: str | None = None
    project: str | None = None
    title: str | None = None
    first_prompt: str | None = None
    started: str | None = None
    updated: str | None = None
    messages: int | None = None
    models: list[str] | None = None
    parent: str | None = None
    status: str = "ok"
    subagents: int = 0
    started_by: str | None = None  # new, clear or fork (docs/lineage.md); None where unrecorded
    forked_from: str | None = None  # the session id it was forked from

    @property
    def label(self) -> str:
        """The title, else the first prompt, on one line."""
        text = self.title or self.first_prompt or ""
        return text.replace("\r", "\\r").replace("\n", "\\n")


class Index(list):
    """The rows :func:`discover` found (a list) and ``errors``: one line per store or file
    that could not be read."""

    errors: list[str]

    def __init__(self, rows: Iterable[SessionRow] = (), errors: list[str] | None = None):
        super().__init__(rows)
        self.errors = errors or []


def stores(harness: str | None = None) -> dict[str, registry.Store]:
    """The store of each harness that has one (only ``harness`` when given). Listing every
    store does not import the built-in harnesses that keep none (``registry.STORELESS``)."""
    if harness is not None:
        found = registry.get(harness)
        if found.store is None:
            raise InputError(f"{found.title} has no session store")
        return {harness: found.store}
    every = {name: registry.get(name) for name in registry.BUILTIN if name not in registry.STORELESS}
    for name, plugin in registry.plugins().items():
        if name not in registry.BUILTIN:  # a plugin never stands in for a built-in (registry.harnesses)
            every[name] = plugin
    return {name: h.store for name, h in sorted(every.items()) if h.store is not None}


def discover(
    harness: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    grep: str | None = None,
    limit: int | None = None,
    details: bool = True,
    describe: bool = True,
) -> Index:
    """Every session in the stores (one harness's with ``harness``; ``root`` instead of the
    default store folder), newest first, filtered: ``project`` matches the project name or
    a part of the cwd, ``since``/``until`` the last update, ``grep`` the file's content
    (case-insensitive). ``details`` reads each kept file once more for its first prompt and
    models. ``describe=False`` is for a caller that wants only the sessions' files (the
    Parquet export): a store that can list them without reading each (``discover_files``)
    does, and its rows say no more than the files do (no title, cwd or count; ``updated``
    is the file's time). One store's trouble is reported in ``errors`` and does not hide
    the others."""
    rows: list[SessionRow] = []
    errors: list[str] = []
    describe = describe or details or any(value is not None for value in (project, since, until))

    def lister(store: registry.Store) -> Any:
        return store.discover if describe else store.discover_files or store.discover

    for name, item in _listed(harness, root, lister, errors):
        row = _row(name, item)
        if row is not None:
            rows.append(row)
    rows = [r for r in rows if _keep(r, project, since, until)]
    oldest = datetime.min.replace(tzinfo=UTC)  # times come in several spellings (Z, offsets): compared parsed
    rows.sort(key=lambda r: parse_timestamp(r.updated) or oldest, reverse=True)
    kept: list[SessionRow] = []
    sessions = 0  # subagent chats ride along with their session, not counted by ``limit``
    needle = _needles(grep) if grep else None
    for row in rows:
        if limit is not None and sessions >= limit:
            break
        if needle is not None and not _contains(row.path, needle):
            continue
        if details:
            _fill_details(row)
        kept.append(row)
        sessions += row.parent is None
    return Index(kept, errors)


def session_files(
    harness: str | None = None, *, root: str | os.PathLike[str] | None = None, sides: bool = True
) -> Index:
    """The sessions :func:`discover` lists with ``describe=False``, for a caller that wants
    only their main files (the Parquet export): a row per session that has one (no
    subagent chat, no pruned session), with only ``harness``, ``session_id`` and ``path``,
    in the stores' own order. Nothing is asked of a file beyond what the store's listing
    asks (not even its time, which only the newest-first order needed). ``sides=False``:
    a store that can (``discover_mains``) does not list its sessions' side folders either,
    nor say what it could not list in them (the export stamps those folders itself)."""
    rows: list[SessionRow] = []
    errors: list[str] = []

    def lister(store: registry.Store) -> Any:
        files = store.discover_files or store.discover
        return files if sides else store.discover_mains or files

    for name, item in _listed(harness, root, lister, errors):
        session_id = _get(item, "session_id", "id")
        path = _get(item, "path")
        if isinstance(session_id, str) and path is not None and _get(item, "parent_id") is None:
            rows.append(SessionRow(harness=name, session_id=session_id, path=str(path)))
    return Index(rows, errors)


def _listed(
    harness: str | None, root: str | os.PathLike[str] | None, lister: Any, errors: list[str]
) -> Iterator[tuple[str, Any]]:
    """Each store's listing, item by item with its store's name (``lister(store)`` is the
    listing asked of it). What a store or an item could not list goes to ``errors``; one
    store's trouble does not hide the others."""
    for name, store in stores(harness).items():
        try:
            found = lister(store)(Path(root) if root is not None else None)
        except (OSError, ValueError, RecursionError) as exc:
            errors.append(f"{name}: {exc}")
            continue
        errors.extend(f"{name}: {e}" for e in getattr(found, "errors", []))
        for item in found:
            errors.extend(f"{name}: {e}" for e in getattr(item, "errors", None) or [])
            path = getattr(item, "path", None)
            path = os.fspath(path) if isinstance(path, os.PathLike) else path
            if isinstance(path, str) and not _utf8(path):
                errors.append(f"{name}: {shown_path(path)}: its name is not UTF-8 (kept as os.fsdecode reads it)")
            yield name, item


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _keep(row: SessionRow, project: str | None, since: datetime | None, until: datetime | None) -> bool:
    if project is not None:
        wanted = project.lower()
        if wanted != (row.project or "").lower() and wanted not in (row.cwd or "").lower():
            return False
    return within(row.updated or row.started, since, until)


# -- one row from each store's own description ---------------------------------------------------


def _get(item: Any, *names: str) -> Any:
    for name in names:
        value = getattr(item, name, None)
        if value is not None and value is not msgspec.UNSET and value != "":
            return value
    return None


def _row(harness: str, item: Any) -> SessionRow | None:
    session_id = _get(item, "session_id", "id")
    if not isinstance(session_id, str):
        return None
    path = _get(item, "path")
    cwd = _get(item, "cwd")
    counts = getattr(item, "counts", None) or {}
    messages = counts.get("messages") if isinstance(counts, dict) else None
    if messages is None:
        messages = _get(item, "messages")
    if messages is None and isinstance(getattr(item, "user_messages", None), int):
        messages = item.user_messages + item.assistant_messages
    status = _get(item, "status") or ("archived" if getattr(item, "archived", False) else "ok")
    model = _get(item, "model")
    row = SessionRow(
        harness=harness,
        session_id=session_id,
        path=str(path) if path is not None else None,
        cwd=cwd,
        project=os.path.basename(cwd.rstrip("/\\")) if cwd else _get(item, "project"),
        title=_get(item, "title", "summary", "name"),
        first_prompt=_get(item, "first_prompt"),  # a store whose files the line scan cannot read gives it
        started=_get(item, "started", "first_timestamp", "start_time"),
        updated=_get(item, "updated", "last_timestamp", "last_updated"),
        messages=messages if isinstance(messages, int) else None,
        models=[model] if isinstance(model, str) else None,
        parent=_get(item, "parent_id"),
        status=status,
        subagents=(counts.get("subagents", 0) + counts.get("workflow_agents", 0)) if isinstance(counts, dict) else 0,
    )
    if row.updated is None and row.path is not None:
        try:
            row.updated = datetime.fromtimestamp(os.stat(row.path).st_mtime, UTC).isoformat().replace("+00:00", "Z")
        except OSError:
            pass
    return row


# -- first prompt and models: one pass over the file ---------------------------------------------
# Each line is decoded into a Struct naming only the few keys that can hold a role, a model or
# a prompt: msgspec skips everything else without building it, so a 100 MB session costs little
# more than reading it. Content is kept raw and decoded only for the first user turns.

_PROMPT_MAX = 300
# What the harnesses put in a user turn that the user did not type (command echoes, context
# preludes, reminders): skipped when looking for the first prompt.
_NOT_TYPED = ("<", "# AGENTS.md", "Caveat:")
_NULL = msgspec.Raw(b"null")


class _Inner(msgspec.Struct):
    role: Any = None
    type: Any = None
    model: Any = None
    modelId: Any = None  # pi's key
    message: msgspec.Raw = _NULL  # codex user_message: the text
    content: msgspec.Raw = _NULL
    parts: msgspec.Raw = _NULL


class _Line(msgspec.Struct):
    type: Any = None
    role: Any = None
    isMeta: Any = None  # Claude Code's keys
    isSidechain: Any = None
    model: Any = None
    modelId: Any = None
    message: msgspec.Raw = _NULL
    payload: msgspec.Raw = _NULL
    content: msgspec.Raw = _NULL
    parts: msgspec.Raw = _NULL


_line = msgspec.json.Decoder(_Line)
_inner = msgspec.json.Decoder(_Inner | None)
_any = msgspec.json.Decoder()


def _records(data: bytes, path: Path) -> Iterator[_Line]:
    from .kit.detect import is_document

    if is_document(path):  # a legacy Gemini CLI session: one object holding "messages"
        try:
            doc = _any.decode(data)
        except msgspec.DecodeError:
            return
        for message in doc.get("messages") or [] if isinstance(doc, dict) else []:
            try:
                yield _line.decode(msgspec.json.encode(message))
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
        return
    for raw in data.split(b"\n"):
        if raw.lstrip()[:1] != b"{":
            continue
        try:
            yield _line.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue


def _inner_of(raw: msgspec.Raw) -> _Inner | None:
    if bytes(memoryview(raw)[:1]) != b"{":
        return None
    try:
        return _inner.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _first_text(raw: msgspec.Raw | Any) -> str | None:
    content = _any.decode(raw) if isinstance(raw, msgspec.Raw) else raw
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return _first_text(content.get("parts") or content.get("content"))
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                return part
            if (
                isinstance(part, dict)
                and part.get("type") in (None, "text", "input_text")
                and isinstance(part.get("text"), str)
            ):
                return part["text"]
    return None


def _user_text(line: _Line, message: _Inner | None, payload: _Inner | None) -> str | None:
    if line.isMeta or line.isSidechain:
        return None
    if payload is not None:  # codex: the user_message event is what the user typed, preludes apart
        return _first_text(payload.message) if payload.type == "user_message" else None
    if message is not None:
        if message.role == "user" or line.type == "user":
            return _first_text(message.content if message.content is not _NULL else message.parts)
        return None
    if line.type == "user" or line.role == "user":  # Gemini CLI / Qwen Code: content or parts on the line
        return _first_text(line.content if line.content is not _NULL else line.parts)
    return None


def _fill_details(row: SessionRow) -> None:
    if row.path is None:
        return
    from .core.zst import read_bytes

    path = Path(row.path)  # made once: it is asked for its name and suffixes three times
    models: dict[str, None] = dict.fromkeys(row.models or [])
    prompt = None
    try:
        data = read_bytes(path)
        for line in _records(data, path):
            message, payload = _inner_of(line.message), _inner_of(line.payload)
            for holder in (line, message, payload):
                if holder is None:
                    continue
                for value in (holder.model, holder.modelId):
                    if isinstance(value, str) and value and not value.startswith("<"):
                        models[value] = None
            if prompt is None:
                text = _user_text(line, message, payload)
                if text and text.strip() and not text.lstrip().startswith(_NOT_TYPED):
                    prompt = text.strip()[:_PROMPT_MAX]
    except (OSError, ValueError, msgspec.MsgspecError):
        return  # unreadable now: the row keeps what the store said
    row.first_prompt = prompt or row.first_prompt
    row.models = list(models) or None
    found = _origin(row.harness, path, data)
    if found is not None:
        row.started_by = found.started_by
        row.forked_from = found.forked_from.session_id if found.forked_from is not None else None


def _origin(harness: str, path: Path, data: bytes) -> Any:
    """The row's lineage (:func:`txcodec.lineage.origin`), found in the bytes already read.
    Only Claude Code, Codex and pi record one, each in its lines as they lie in the file,
    so their lines are handed over as they are instead of loading the session once more;
    the other harnesses have none to find."""
    from . import lineage
    from .kit.detect import is_document

    if not lineage.records_origin(harness):
        return None
    try:
        if is_document(path):  # not lines as they lie: read the way a loaded session is
            return lineage.origin(path, harness)
        lines = data.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the final newline ends the last line; it does not start another
        return lineage.lines_origin(harness, lines, path, source=data)
    except (OSError, ValueError):
        return None


# -- content search ------------------------------------------------------------------------------


def _needles(text: str) -> tuple[bytes, ...]:
    """The text as it appears in a JSON file: raw, and JSON-escaped (quotes, newlines,
    non-ASCII as \\u escapes), lower-cased."""
    raw = text.lower().encode("utf-8")
    escaped = msgspec.json.encode(text.lower())[1:-1]
    ascii_escaped = text.lower().encode("ascii", "backslashreplace").replace(b"\\x", b"\\u00")
    return tuple(dict.fromkeys((raw, escaped, ascii_escaped)))


def _contains(path: str | None, needles: tuple[bytes, ...], chunk: int = 1 << 20) -> bool:
    """Whether the file (decompressed when ``.zst``) holds one of ``needles``, read in
    chunks (each overlapping the last by a needle's length), so memory stays flat."""
    if path is None:
        return False
    overlap = max(len(n) for n in needles) - 1
    try:
        from .core.zst import open_regular
        from .core.zst import open_stream

        # a regular file only, and a .zst within the decompression limits (docs/guarantees.md#limits)
        with open_stream(path) if path.endswith(".zst") else open_regular(path) as stream:
            tail = b""
            while block := stream.read(chunk):
                window = tail + block.lower()
                if any(n in window for n in needles):
                    return True
                tail = window[-overlap:] if overlap else b""
    except (OSError, ValueError):  # zstandard.ZstdError is a ValueError
        return False
    return False


# -- naming a session ----------------------------------------------------------------------------


def resolve(name: str | os.PathLike[str], harness: str | None = None) -> Path:
    """The file a session name means: an existing path as it is; otherwise ``latest``,
    ``latest:<harness>``, a session id or a unique id prefix, looked up in every store
    (or ``harness``'s) by :func:`discover`. No match, or several, is an
    :class:`~txcodec.core.errors.InputError` that says so and lists the candidates. A session
    kept in a database (opencode, Kilo) is named ``<database>#<id>``."""
    if Path(name).exists():
        return Path(name)
    row = resolve_row(name, harness)
    if row.session_id and Path(row.path).suffix == ".db":
        return Path(f"{row.path}#{row.session_id}")  # one session of a database (opencode, Kilo)
    return Path(row.path)


def resolve_row(name: str | os.PathLike[str], harness: str | None = None) -> SessionRow:
    """Like :func:`resolve`, the :class:`SessionRow` (for a path: a row with only
    ``path`` and the harness, when given, known)."""
    text = os.fspath(name)
    if Path(text).exists():
        return SessionRow(harness=harness or "", session_id="", path=text)
    from .kit.load import split_database

    database = split_database(Path(text)) if "#" in text else None
    if database is not None:  # <database>#<id>: the id is checked when the session is loaded
        return SessionRow(harness=harness or "", session_id=database[1] or "", path=text)
    if text == "latest" or text.startswith("latest:"):
        wanted = text.partition(":")[2] or harness
        rows = [r for r in discover(wanted or None, details=False) if r.parent is None and r.path]
        if not rows:
            raise InputError(f"{text}: no session found in {'the ' + wanted if wanted else 'any'} store")
        return rows[0]
    if not text or "/" in text or os.sep in text or text.startswith("."):
        raise InputError(f"{text}: no such file")
    rows = [r for r in discover(harness, details=False) if r.path]
    exact = [r for r in rows if r.session_id == text]
    matches = exact or [r for r in rows if r.session_id.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(f"{text}: no such file, and no session id starting with it in the stores (see txcodec list)")
    listed = "\n".join(f"  {r.harness:12} {r.session_id}  {(r.updated or '')[:16]}  {r.path}" for r in matches[:20])
    more = f"\n  ... and {len(matches) - 20} more" if len(matches) > 20 else ""
    raise InputError(f"{text}: {len(matches)} sessions match; name one by a longer id or by its path:\n{listed}{more}")


def load_row(harness: str | None, session_id: str | None, path: str | os.PathLike[str]) -> Any:
    """The native session a listed row names: its file, or, for a store that keeps its
    sessions in one database (opencode, Kilo: ``path`` is the database), that session
    exported from it, read-only."""
    from .kit import registry
    from .kit.load import load

    store = registry.get(harness).store if harness else None
    if store is not None and store.load is not None and session_id and Path(path).suffix == ".db":
        return store.load(session_id, Path(path).parent)
    return load(path, harness)
