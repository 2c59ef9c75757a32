"""The library API that the CLI calls. No click here."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from .core.errors import InputError, guarded
from .core.gcpause import no_cycle_collection
from .core.zst import read_bytes as read_bytes  # re-exported: part of the API (harnesses use core's)
from .kit import registry
from .kit.detect import _best_harness, detect
from .kit.detect import detect_lines as detect_lines  # re-exported: part of the API
from .kit.detect import is_document as is_document  # re-exported: part of the API
from .kit.detect import spread_document as _spread_document
from .model.common import Child, Conversation, Message, ToolResult, ToolUse
from .model.loss import LossReport
from .model.native import NativeSession, decode_document, decode_session, json_source

# the first bytes of every SQLite database file (its file format's header string)
SQLITE_MAGIC = b"SQLite format 3\x00"
_decoder = msgspec.json.Decoder()


def _load_document(data: bytes, harness: str | None, path: Path | None) -> NativeSession | None:
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
        with path.open("rb") as file:
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
    """
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
        harness = harness or _named(path)
        data = read_bytes(path)
        if is_document(path):
            session = _load_document(data, harness, path)
            if session is not None:
                return session
    if _spread_document(data):
        # named or not, bytes of a pretty-printed document (a Continue, cline or opencode
        # session piped in) are that document: read as lines, each would be a fragment
        session = _load_document(data, harness, path)
        if session is not None and session.harness != "jsonl":
            return session
    name = harness or detect(data)
    if name == "jsonl" and harness is None and data.lstrip()[:1] == b"{":
        # no line matched a harness: bytes (or a file not named .json) may still be one
        # pretty-printed document, such as a legacy Gemini CLI session
        session = _load_document(data, None, path)
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


def _named(path: Path, data: Any = None) -> str | None:
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
            with path.open("rb") as file:
                head = file.read(256)
        except OSError:
            return False
    return registry.sniff(head.split(b"\n", 1)[0]) is not None


def sample(harness: str = "claude_code") -> Path:
    """The path of the small synthetic session bundled for ``harness`` (every harness's
    is the Claude Code one, converted)."""
    from importlib import resources

    folder = resources.files("txcodec") / "samples" / harness
    found = sorted(p for p in folder.iterdir() if p.name.endswith((".jsonl", ".json", ".md")) or p.is_dir()) if folder.is_dir() else []
    if not found:
        raise InputError(f"no sample session for {harness!r}")
    return Path(str(found[0]))


class NotSupported(InputError):
    """The harness cannot do that (no reader, no writer, no store)."""


@guarded
def to_common(session: NativeSession, loss: LossReport | None = None) -> Conversation:
    """The session as a Common conversation (with subagents, when side files exist).

    What Common cannot carry is added to ``loss`` when one is given.
    """
    harness = registry.get(session.harness)
    if harness.read is None:
        where = f"{session.path}: " if session.path is not None else ""
        if session.harness == "jsonl":  # the fallback: nothing recognised the lines
            raise NotSupported(f"{where}not a session of any known harness (name one with --from)")
        raise NotSupported(f"{where}reading {harness.title} into Common is not supported yet")
    from .kit.conform import conform
    from .kit.read import report_lone_surrogates

    loss = loss if loss is not None else LossReport()
    # a reader builds objects by the hundred thousand, and conform decodes them all again:
    # no cycle among them yet, so the collector would only scan them over and over
    with no_cycle_collection():
        conversation = harness.read(session, loss)
        report_lone_surrogates(session, loss, str(session.path) if session.path is not None else None)
        # a reader that builds every message of objects of its own (``read_unshared``) may
        # have the messages that already fit kept as they are
        conversation = conform(conversation, loss, checked=harness.read_unshared)
    _add_origin(conversation, session)
    return conversation


def _add_origin(conversation: Conversation, session: NativeSession) -> None:
    """``meta.started_by`` / ``meta.forked_from`` from what the file records (docs/lineage.md)."""
    from .lineage import session_origin

    if conversation.meta.started_by is not msgspec.UNSET:
        return
    found = session.origin if session.origin is not None else session_origin(session)
    if found.started_by is not None:
        conversation.meta.started_by = found.started_by
    if found.forked_from is not None:
        conversation.meta.forked_from = found.forked_from


@guarded
def convert(
    source: bytes | str | os.PathLike[str] | Conversation,
    to: str,
    *,
    from_: str | None = None,
    session_id: str | None = None,
    cwd: str | None = None,
    prompts: list[str] | None = None,
    input_side: bytes | str | os.PathLike[str] | None = None,
    stdin_side: bool = False,
    default_cwd: str | None = None,
) -> tuple[registry.Written, LossReport]:
    """Read ``source`` (a native session: path or bytes, harness detected unless
    ``from_`` names it; ``from_="common"`` for Common JSON; or a :class:`Conversation`)
    and write it as harness ``to``. Returns the files and everything that was not carried.

    ``prompts`` and ``input_side`` are for sources that do not record what the user
    typed (stream-json output: a harness that ``reads_prompts``): the prompts one per run,
    or the stdin side kept in a file of its own. They are handed to the reader as
    ``session.prompts`` and ``session.input_session``; a source of another harness
    refuses them. ``stdin_side`` (a target that ``writes_stdin_side``: stream_json)
    writes the lines a host sends on stdin.

    The project folder the session is filed under is ``cwd``, else the one the session
    records (an absolute path), else ``default_cwd`` (else the writer's own default); it
    comes back as ``written.cwd``, the folder to resume it from.
    """
    # Millions of objects (the typed records, the conversation, the written lines) are
    # made and freed in here, none in a cycle: with the cycle collector paused for the
    # whole of it, it never scans them (between reading and writing it would, in full).
    with no_cycle_collection():
        return _convert(source, to, from_=from_, session_id=session_id, cwd=cwd, prompts=prompts, input_side=input_side,
                        stdin_side=stdin_side, default_cwd=default_cwd)


def _convert(
    source: bytes | str | os.PathLike[str] | Conversation,
    to: str,
    *,
    from_: str | None,
    session_id: str | None,
    cwd: str | None,
    prompts: list[str] | None,
    input_side: bytes | str | os.PathLike[str] | None,
    stdin_side: bool,
    default_cwd: str | None,
) -> tuple[registry.Written, LossReport]:
    wanted = _harness_or_none(to)  # an unknown name is reported once the source is read, as before
    if stdin_side and not (wanted is not None and wanted.writes_stdin_side):
        name = _declaring(lambda h: h.writes_stdin_side)
        raise NotSupported(f"the stdin side is a {name} output only (--to {name})")
    from .model.common_json import from_json

    loss = LossReport()
    if isinstance(source, Conversation):
        conversation = source
    elif from_ == "common":
        data = bytes(source) if isinstance(source, (bytes, bytearray, memoryview)) else read_bytes(source)
        conversation = from_json(data)
    else:
        session = load_once(source, from_)
        fast = wanted.fast_paths.get(session.harness) if wanted is not None else None
        if fast is not None and session_id is None and prompts is None and input_side is None and not stdin_side:
            done = fast(session, cwd, default_cwd)
            if done is not None:
                return done
        if (prompts is not None or input_side is not None) and not registry.get(session.harness).reads_prompts:
            name = _declaring(lambda h: h.reads_prompts)
            raise NotSupported(f"{_name(source)} is {session.harness}, not a {name} capture: prompts and "
                               f"an input side only complete {name} captures")
        if prompts is not None:
            session.prompts = list(prompts)  # type: ignore[attr-defined]
        if input_side is not None:
            session.input_session = load(input_side, session.harness)  # type: ignore[attr-defined]
        conversation = to_common(session, loss)
        del session  # the typed records are no longer needed: the writer's memory is theirs
    target = registry.get(to)
    if target.write is None:
        raise NotSupported(f"writing {target.title} is not supported yet")
    recorded = _recorded_cwd(conversation)
    if cwd is None and recorded is None:
        cwd = default_cwd
    options = registry.WriteOptions(session_id=session_id, cwd=cwd, stdin_side=stdin_side)
    written = target.write(conversation, loss, options)
    written.cwd = cwd or recorded
    if conversation.meta.forked_from is not msgspec.UNSET and target.fork_slot is None:
        loss.add("lineage:forked-from", f"forked from {conversation.meta.forked_from.session_id}: "
                 f"{target.title} has no slot for a session's parent")
    from .core.ids import safe_relpath  # here, not at start-up: its regexes and SHA-1 serve only a run that writes

    for rel in written.files:  # a writer's names are checked once more: a caller may write them out as they are
        safe_relpath(rel)
    if not conversation.messages and not conversation.children and "write:no-conversation" not in loss.counts():
        loss.add("write:no-conversation", f"{_name(source)} holds no message: {target.title} will find nothing to resume")
    return written, loss


def _harness_or_none(name: str) -> registry.Harness | None:
    try:
        return registry.get(name)
    except registry.UnknownHarness:
        return None


def _declaring(flag: Callable[[registry.Harness], bool]) -> str:
    """The built-in harness for which ``flag`` holds, to name in a message refusing an
    option that only it takes."""
    return next(name for name, harness in registry.builtins().items() if flag(harness))


def load_once(source: Any, harness: str | None = None) -> NativeSession:
    """:func:`load` for a session that is read once, into Common (``convert``, a page, the
    tables): streamed, as :func:`_streamed` says, where its harness can be."""
    session = _streamed(source, harness)
    return session if session is not None else load(source, harness)



def _streamed(source: Any, harness: str | None) -> NativeSession | None:
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

        harness = harness or _named(path)
        try:
            with path.open("rb") as file:
                data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file cannot be mapped; load() says what is wrong with the others
            return None
    session = _streamed_data(data, path, harness)
    if session is None and path is not None:
        data.close()
    return session


def _streamed_data(data: Any, path: Path | None, harness: str | None) -> NativeSession | None:
    """:func:`_streamed`'s session of ``data``, the bytes of the JSON Lines file ``path``
    (read, or mapped in memory) or of no file: ``None`` when its harness does not read
    lines as they are decoded. (The Parquet export maps the file itself, to hash the very
    bytes it decodes: ``dataset._load_mapped``.)"""
    name = harness or detect(data)
    found = registry.get(name)
    if not data or not found.read_streams:
        return None
    return NativeSession(name, found.codec, [], True, path, pending=data)  # its reader sets its origin


def _recorded_cwd(conversation: Conversation) -> str | None:
    """The session's own project folder, when it can name one here (writers fall back to
    their default for anything else, and report an unusable one)."""
    from .core.ids import is_safe_cwd

    cwd = conversation.meta.cwd
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) and is_safe_cwd(cwd) else None


def _name(source: Any) -> str:
    if isinstance(source, Conversation):
        return "the conversation"
    return "the input" if isinstance(source, (bytes, bytearray, memoryview)) else str(source)


@guarded
def install(written: registry.Written, harness: str, root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Put ``written`` into the harness's store (its default root unless ``root``),
    atomically, refusing before writing anything when a file already exists.

    A store may have an ``install(files, root)`` hook for what plain file copying cannot
    do (Gemini CLI: merge ``projects.json``, reuse a project's existing folder), and a
    ``root_for(cwd)`` hook when it lives in the project folder (aider)."""
    from .core.atomic import install_files

    target = registry.get(harness)
    store = target.store
    root_for = store.root_for if store is not None else None
    if root is None and root_for is not None and written.cwd is not None:
        # a store inside the project itself (aider's history): never make up that folder
        if not os.path.isdir(written.cwd):
            raise InputError(f"{written.cwd}: the session's project folder does not exist here "
                             "(create it, or choose another with --cwd)")
        root = root_for(written.cwd)
    if store is not None and store.install is not None:
        return store.install(written.files, root)
    if root is None:
        if store is None:
            raise NotSupported(f"{target.title} has no store to install into")
        root = store.default_root()
    return install_files(root, written.files)


# -- walking a conversation ----------------------------------------------------------------------


def messages(conversation: Conversation, *, subagents: bool = True) -> Iterator[tuple[int, Message]]:
    """Every message with its depth (0 = the main conversation), each subagent's messages
    right after the message holding the tool call that started it (or at the end when the
    call is not found), depth first."""
    by_call: dict[str, list[Child]] = {}
    unplaced: list[Child] = []
    for child in conversation.children if subagents else []:
        tool_use_id = child.link.tool_use_id
        (by_call.setdefault(tool_use_id, []) if isinstance(tool_use_id, str) else unplaced).append(child)
    for message in conversation.messages:
        yield 0, message
        for block in message.content:
            for child in by_call.pop(getattr(block, "id", None), []) if isinstance(block, ToolUse) else []:
                yield from ((d + 1, m) for d, m in messages(child.conversation))
    for child in [*unplaced, *(c for cs in by_call.values() for c in cs)]:
        yield from ((d + 1, m) for d, m in messages(child.conversation))


class ToolCall(msgspec.Struct):
    """A tool call and its result (``None`` when the conversation holds none), with the
    messages they are in and the subagent depth (0 = main conversation)."""

    use: ToolUse
    result: ToolResult | None
    call_message: Message
    result_message: Message | None = None
    depth: int = 0


def tool_calls(conversation: Conversation, *, subagents: bool = True) -> list[ToolCall]:
    """Every tool call paired with its result, in conversation order."""
    calls: list[ToolCall] = []
    pending: dict[str, ToolCall] = {}
    for depth, message in messages(conversation, subagents=subagents):
        for block in message.content:
            if isinstance(block, ToolUse):
                call = ToolCall(block, None, message, depth=depth)
                calls.append(call)
                pending[block.id] = call
            elif isinstance(block, ToolResult) and block.tool_use_id in pending:
                call = pending.pop(block.tool_use_id)
                call.result, call.result_message = block, message
    return calls

