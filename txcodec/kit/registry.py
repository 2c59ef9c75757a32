"""The harness registry: built-in harnesses plus those installed under the
``txcodec.harnesses`` entry-point group. One id names a harness everywhere: the package,
``--from``/``--to``, the golden folder and the docs page."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from importlib import import_module
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

import msgspec

from ..core.errors import InputError

if TYPE_CHECKING:
    from ..model.native import Codec

BUILTIN = (
    "claude_code",
    "codex",
    "stream_json",
    "gemini_cli",
    "qwen_code",
    "pi",
    "copilot_cli",
    "continue_cli",
    "opencode",
    "kilo",
    "kimi_cli",
    "mistral_vibe",
    "cline",
    "openhands",
    "aider",
    "droid",
    "jsonl",
)
# The built-in harnesses that keep no store (a stream-json capture lives wherever its host
# kept it, a plain JSONL file anywhere): listing every store skips them without importing
# them (tests/features/test_sessions.py checks that their ``store`` is None).
STORELESS = ("stream_json", "jsonl")


# How a session file opens, byte for byte, when its own client wrote it: these first-line
# signatures are each one harness's alone (each client's serializer writes its first record
# compactly, keys in this order), so a file opening so is that harness's without decoding a
# line or importing another harness (detection.detect). Every other file is decoded and scored by
# every built-in harness's ``detect``, and by the plugins' when none claims it.
# tests/features/test_detection_sniff.py checks each signature against those detectors on every
# corpus file, golden and sample.
_STRING = rb'"[^"\\]*"'
SIGNATURES: tuple[tuple[bytes, str], ...] = (  # (pattern, harness), in the order tried
    # Claude Code: a conversation record's envelope, or a record only it writes, by its tag
    # and first key
    (rb'\{"parentUuid":(?:null|' + _STRING + rb'),"isSidechain":(?:true|false),', "claude_code"),
    (
        rb'\{"type":"(?:queue-operation","operation|file-history-snapshot","messageId|custom-title","customTitle'
        rb'|summary","summary|mode","mode)":',
        "claude_code",
    ),
    # Codex: the rollout's session_meta line (``ordinal`` since 2026)
    (rb'\{"timestamp":' + _STRING + rb',(?:"ordinal":\d+,)?"type":"session_meta","payload":\{', "codex"),
    (rb'\{"type":"session_meta","timestamp":' + _STRING + rb',"ordinal":\d+,"payload":\{', "codex"),
    # Gemini CLI: the metadata line (its detector's decisive line); pi: the session header
    (rb'\{"sessionId":' + _STRING + rb',"projectHash":"', "gemini_cli"),
    (rb'\{"type":"session","version":\d+,"id":"', "pi"),
)


def sniff(first_line: bytes | memoryview) -> str | None:
    """The harness whose signature the first line of a file opens with, or None."""
    head = bytes(first_line[:256])
    for pattern, name in SIGNATURES:
        if re.match(pattern, head):  # compiled when first tried (re caches it): start-up pays for no other
            return name
    return None


# The classes below are msgspec structs, not dataclasses: every harness package builds a
# Harness when imported (so every command does), and a dataclass compiles its methods from
# source when defined (a frozen Harness about 2 ms of start-up), where a struct's are
# ready-made. A copy with one field changed is ``msgspec.structs.replace``.


class Written(msgspec.Struct):
    """What a writer produced: files by path relative to the client's store root
    (POSIX separators), the first being the main session file."""

    session_id: str
    files: dict[str, bytes] = msgspec.field(default_factory=dict)
    # the project folder the session is filed under and the client should run in (set by
    # api.convert; None when neither the caller nor the session names one)
    cwd: str | None = None

    @property
    def main(self) -> str:
        return next(iter(self.files))


class WriteOptions(msgspec.Struct):
    """How a writer names and places the session it writes."""

    session_id: str | None = None  # keep the source id when None, else derive one
    cwd: str | None = None  # the project folder the client will resume from
    stdin_side: bool = False  # a harness that writes_stdin_side: the lines a host sends, not what the CLI prints


class Later:
    """An object a harness registers without importing it: ``module``'s ``name``, or the
    module itself when ``name`` is None. A :class:`Harness` field given one is imported on
    first use, so a command using one part of a harness (usage reads a Claude Code file
    without its codec) does not pay for the others."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str | None = None) -> None:
        self.module, self.name = module, name

    def __repr__(self) -> str:
        return f"Later({self.module!r}, {self.name!r})"

    def resolve(self) -> Any:
        module = import_module(self.module)
        return module if self.name is None else getattr(module, self.name)


class Store(msgspec.Struct, frozen=True):
    """A harness's session store, declared: what the cross-harness features (listing,
    loading, installing, inspecting) may ask of it. A msgspec struct of functions rather
    than a ``typing.Protocol``: most stores are modules of plain functions, and a struct
    each builds once (``STORE = Store(...)`` at the end of its ``store.py``) says in one
    place which hooks it has, where a protocol would need a class per module. Every
    optional hook defaults to None (or empty): a feature tests ``store.hook is not None``
    and never probes with ``getattr``. :mod:`txcodec.kit.store` helps write the functions."""

    # the folder the client keeps its sessions in: default_root() -> Path
    default_root: Callable[[], Any]
    # every session under ``root`` (default_root() when None), each described:
    # discover(root) -> items with session_id or id, path, and what else the store knows
    discover: Callable[..., Any]
    # the same sessions from their files alone, not reading each (the Parquet export)
    discover_files: Callable[..., Any] | None = None
    # as discover_files, without the sessions' side folders
    discover_mains: Callable[..., Any] | None = None
    # an item of discover_files described as discover describes it: describe_item(item) ->
    # item (a listing that stops early, ``list --limit``, reads only the newest files)
    describe_item: Callable[[Any], Any] | None = None
    # a listed session file's row details read lean, without building Common (``list`` cold):
    # summarize(path) -> model.summary.Details, equal to what the full read gives, or None where
    # the lean read cannot be sure (the caller then reads the file whole)
    summarize: Callable[[Any], Any] | None = None
    # both of the above from one read of the file (``list`` cold, every line decoded once):
    # describe_lean(item) -> (describe_item(item), summarize(its path))
    describe_lean: Callable[[Any], tuple[Any, Any]] | None = None
    # the main session files under a root, quickest (usage over a store): main_files(root) -> list[Path]
    main_files: Callable[[Any], list[Any]] | None = None
    # file names that alone say a file is this harness's, whatever its bytes
    file_names: tuple[str, ...] = ()
    # the session file of a folder that is one session: session_file(folder) -> Path | None
    session_file: Callable[[Any], Any] | None = None
    # a session kept as a folder of files: session_folder(path) -> folder | None, and the
    # folder read whole: load_folder(folder) -> NativeSession
    session_folder: Callable[[Any], Any] | None = None
    load_folder: Callable[[Any], Any] | None = None
    # a session file's side files by kind: side_files(path) -> {kind: [Path]}
    side_files: Callable[[Any], dict[str, list[Any]]] | None = None
    # a file found under a folder the user named that is no session of its own (a side
    # file, or a subagent's transcript read with its session there): not_a_session(path, folder)
    not_a_session: Callable[[Any, Any], bool] | None = None
    # a store inside the project folder: root_for(cwd) -> its root
    root_for: Callable[[Any], Any] | None = None
    # installing what plain file copying cannot: install(files, root) -> list[Path]
    install: Callable[..., list[Any]] | None = None
    # a store that is one database: a session of any database file, open(db, wanted id) ->
    # NativeSession; one of its own database, load(session_id, root) -> NativeSession; and
    # how well a database file fits it, database_fit(db) -> a sortable key, highest best
    open: Callable[..., Any] | None = None
    load: Callable[..., Any] | None = None
    database_fit: Callable[[Any], Any] | None = None


class CarryOn(Protocol):
    """A reader fed a file's whole lines as they are appended (``Harness.carry_on``). It
    keeps what it decoded (the calls whose results or fragments may still come, the
    messages so far), so each :meth:`feed` costs what its lines cost, never a read of the
    whole session again. What it gives equals what the harness's ``read`` gives for the
    lines fed so far (``tests/features/test_live_carry_on.py``)."""

    def feed(self, lines: list[Any]) -> None:
        """Read these lines (:class:`~txcodec.model.native.Line`), the next ones of the file."""
        ...

    def conversation(self) -> tuple[Any, list[int]]:
        """The conversation as read so far (Common, held to its schema) and the indices of
        its messages built or changed since the last call (all of them on the first). Its
        messages are those still held: the first comes after every message :meth:`hand_on`
        gave (its epochs count from the start of the session)."""
        ...

    def hand_on(self) -> list[tuple[Any, bool]]:
        """The messages that became final since the last call, oldest first, each held to
        the Common schema and with whether a compaction starts at it: they are taken out of
        what the reader holds, so a follow that prints them once may forget them. Always
        empty for a reader made without a window (``carry_on(path, window=None)``), or one
        whose format lets a later line change any earlier message."""
        ...


class Harness(msgspec.Struct, frozen=True):
    """What a harness package registers. Only ``codec`` and ``detect`` are required;
    ``codec``, ``store`` and the features' hooks may be given as :class:`Later`."""

    def __getattribute__(self, attr: str) -> Any:
        value = object.__getattribute__(self, attr)
        if type(value) is Later:  # imported once, on first use
            value = value.resolve()
            msgspec.structs.force_setattr(self, attr, value)
        return value

    name: str
    title: str
    codec: Codec
    # How sure we are that these decoded leading lines (dicts, or None for non-JSON)
    # come from this harness: 0 = not at all.
    detect: Callable[[list[Any]], int]
    # read(session: NativeSession, loss: LossReport) -> Conversation
    read: Callable[..., Any] | None = None
    # write(conversation: Conversation, loss: LossReport, options: WriteOptions) -> Written
    write: Callable[..., Any] | None = None
    # where the client keeps its sessions (:class:`Store`); None for a harness without one
    store: Store | None = None
    # the store and api's hooks
    # its read takes a NativeSession whose lines are still undecoded (``pending``) and
    # decodes them as it reads: a session read once is then never all held
    read_streams: bool = False
    # its read builds every block, list and tool input anew for the one place it goes, so
    # conform may keep the messages that already fit (conform's ``checked``)
    read_unshared: bool = False
    # where a session written as this harness records what it was forked from (the loss
    # report names a parent that no such slot can keep; docs/lineage.md)
    fork_slot: str | None = None
    # conversions into this harness quicker than through Common, by source harness:
    # fast(session, cwd, default_cwd) -> (Written, LossReport), or None for a session it
    # does not know (the reference path then runs); give them as :func:`lazy`
    fast_paths: dict[str, Callable[..., Any]] = {}
    # a capture that does not record what the user typed: ``prompts`` and an input side
    # complete it (api.convert hands them to its reader)
    reads_prompts: bool = False
    # its writer can write the lines a host sends on stdin (WriteOptions.stdin_side)
    writes_stdin_side: bool = False
    # read_messages(session, loss) -> kit.read.StreamedConversation, or None for a session it
    # does not read that way: the conversation a message at a time, each once final (``show``
    # of a huge file prints its first message at once); None: every session is read whole
    read_messages: Callable[..., Any] | None = None
    # its sessions are JSON Lines files its client only ever appends to: following one
    # (``txcodec.live``) reads the bytes appended since the last look from an offset, where
    # any other store is re-read when it changes and compared message by message
    append_only: bool = False
    # carry_on(path, window=None) -> CarryOn: a reader of an append-only file that carries on
    # from where it stopped, so a look after an append costs what the appended lines cost
    # (txcodec.live); with a window (a number of messages), it holds no more than about that
    # many and hands on the rest once final, where its format allows (CarryOn.hand_on);
    # None: a followed file's conversation is read again from all its lines
    carry_on: Callable[..., CarryOn] | None = None
    # the OpenTelemetry metric its client itself sends token usage as (metrics.py sends
    # the same name for it); None: txcodec's own
    token_metric: str | None = None
    # its tool results carry ``is_error`` when a call failed and leave it out when it did
    # not (the Messages API's default): an unflagged result is a success. False: an
    # unflagged result's outcome is unknown (the tables' ``error_unknown``)
    flags_failed_results: bool = False
    # its writer gives another client's context (a Common ``Context`` block with text) to its
    # model the way its own client gives context, as an item of its own apart from what the
    # user typed; False: ``kit.write.carry_context`` turns it into user text in place
    writes_context: bool = False
    # its writer writes back a tool output the source client saved whole beside the session
    # (Common ``ToolResult.persisted_output``: Claude Code's tool-results/); False: the preview
    # the model saw stays and ``api.convert`` names the rest (``write:persisted-output``)
    writes_persisted_output: bool = False
    # check_resume(path: Path, **options) -> ResumeReport: what the real client sends
    check_resume: Callable[..., Any] | None = None
    # the client's command that continues a session of its store, "{id}" standing for the
    # session id (run in the session's project folder); None when there is none
    resume: tuple[str, ...] | None = None

    # the cross-harness features' hooks: what lineage, usage and changes need of one client,
    # declared here so those features name no harness (each may be given as a Later)
    # how a session began, read from its file's lines (lineage.py); None: its files record none
    origin: OriginReader | None = None
    # the lean usage pass over its files (usage.py); None: usage reads them through Common
    usage: UsageReader | None = None
    # which files each tool call changed (model/changes.py); None: only shell calls are named
    changes: ChangesReader | None = None
    # tool name -> normalized kind (model/tools.py), for the names whose kind is this client's
    # own (its ``edit`` is not another's); the readers pass it to ``tool_kind``
    tool_kinds: dict[str, str] = msgspec.field(default_factory=dict)
    # the JSON keys whose string values are structure, never a secret nor personal data (ids,
    # hashes, signatures, opaque encrypted state): ``txcodec redact`` leaves them alone
    redact_keep: tuple[str, ...] = ()
    # the fixture checklist's shapes in its files and how to cut a minimal session around one
    # (``txcodec fixtures``); None: it has none declared
    fixtures: Fixtures | None = None

    def resume_argv(self, session_id: str) -> list[str] | None:
        """The command line continuing ``session_id`` in the client, or None."""
        if self.resume is None:
            return None
        return [session_id if arg == "{id}" else arg for arg in self.resume]


def lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name`` as a function that imports ``module`` only when first called, so
    registering a harness does not import its reader, writer or client runner."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = module
    return call


def package_harness(package: str, *, title: str, detect: Callable[[list[Any]], int], **fields: Any) -> Harness:
    """The :class:`Harness` of a package laid out the standard way, ``package`` being its
    ``__name__``: its id is the package's last name, its ``CODEC`` in ``.codec``, ``read``
    and ``write`` in modules of those names, its ``STORE`` in ``.store`` and its resume
    check in ``txcodec.resume_check.<id>``. Each is registered lazily (registering imports
    none of them); ``fields`` gives what differs and any other Harness field."""
    name = package.rpartition(".")[2]
    standard: dict[str, Any] = {
        "codec": Later(f"{package}.codec", "CODEC"),
        "read": lazy(f"{package}.read", "read"),
        "write": lazy(f"{package}.write", "write"),
        "store": Later(f"{package}.store", "STORE"),
        "check_resume": lazy(f"txcodec.resume_check.{name}", "check_resume"),
    }
    return Harness(name=name, title=title, detect=detect, **{**standard, **fields})


# The cross-harness features' hooks a Harness declares (Harness.origin, .usage, .changes):
# each feature asks the registry for them, so it names no harness.
class OriginReader(msgspec.Struct, frozen=True):
    """How lineage (``txcodec.lineage``) reads a harness whose files record how a session
    began, and finds the other sessions of its store (the graph of forks)."""

    # read(lines, path=None, source=None, maybe_fork=None) -> lineage.Origin. ``lines`` are the
    # file's lines as loaded (or bytes); ``source`` the file they were loaded from and
    # ``maybe_fork`` whether a line can name a fork, for a reader that can skip work knowing it
    read: Callable[..., Any]
    # main_files(root) -> sorted paths: the main session files of a store root
    main_files: Callable[[Any], list[Any]]
    # store_root(path) -> Path: the store root a session file sits in (None: two levels up)
    store_root: Callable[[Any], Any] | None = None


class UsageReader(msgspec.Struct, frozen=True):
    """How ``txcodec usage`` reads a harness's files. ``usage.py`` reads the bytes (in
    blocks, or a huge file in parts by several processes); the harness decodes only the
    fields a call's usage needs."""

    # file_calls(bytes, or blocks of whole lines) -> (session id, cwd, calls), or None when
    # the file needs the full reader; None: every file goes through Common
    file_calls: Callable[[Any], Any] | None = None
    # wanted_lines(blocks) -> a part's lines, calls_of_parts(each part's lines, in order) ->
    # what file_calls gives: a huge file is cut at line ends and its parts read in parallel
    wanted_lines: Callable[[Any], Any] | None = None
    calls_of_parts: Callable[[Any], Any] | None = None
    # subagent_files(path) -> the transcripts whose calls count with the session at ``path``
    subagent_files: Callable[[Any], list[Any]] | None = None


class FixtureShape(msgspec.Struct, frozen=True):
    """A shape worth a fixture: its name, its predicate as the checklist writes it, and the
    predicate over one decoded line (a dict)."""

    name: str
    predicate: str
    test: Callable[[dict], bool]
    private: bool = False  # holds private data by design: redacted with the rest, and marked


class Fixtures(msgspec.Struct, frozen=True):
    """What ``txcodec fixtures`` needs of a harness: its shapes, and ``cut(records, index)``
    -> the sorted line indices of a minimal session holding line ``index`` (``records``: each
    line decoded, None for a line that is not JSON)."""

    shapes: tuple[FixtureShape, ...]
    cut: Callable[[list[Any], int], list[int]]


def parent_chain_cut(
    id_key: str, parent_key: str, header: Callable[[dict], bool]
) -> Callable[[list[Any], int], list[int]]:
    """A ``Fixtures.cut`` for a harness whose records link to their parent by id (pi's
    ``id``/``parentId``, Qwen Code's ``uuid``/``parentUuid``): the header lines
    (``header(record)``), the record and its chain of parents."""

    def cut(records: list[Any], index: int) -> list[int]:
        by_id = {r[id_key]: i for i, r in enumerate(records) if isinstance(r, dict) and isinstance(r.get(id_key), str)}
        keep = {i for i, r in enumerate(records) if isinstance(r, dict) and header(r)}
        i: int | None = index
        while i is not None and i not in keep:
            keep.add(i)
            record = records[i]
            parent = record.get(parent_key) if isinstance(record, dict) else None
            i = by_id.get(parent) if isinstance(parent, str) else None
        return sorted(keep)

    return cut


def linked_cut(
    header: Callable[[dict], bool], links: Callable[[dict], Iterable[str]]
) -> Callable[[list[Any], int], list[int]]:
    """A ``Fixtures.cut`` for a harness whose records pair by an id they share rather than by a
    parent (a tool call and its result by the call's id: Kimi CLI, Mistral Vibe, Copilot CLI,
    stream-json): the header lines (``header(record)``), the record, and every record sharing
    one of its ``links(record)``."""

    def linked(record: Any) -> set[str]:
        if not isinstance(record, dict):
            return set()
        try:
            return {link for link in links(record) if isinstance(link, str)}
        except (KeyError, TypeError, AttributeError):
            return set()

    def cut(records: list[Any], index: int) -> list[int]:
        keep = {i for i, r in enumerate(records) if isinstance(r, dict) and header(r)} | {index}
        wanted = linked(records[index])
        if wanted:
            keep |= {i for i, r in enumerate(records) if linked(r) & wanted}
        return sorted(keep)

    return cut


class ChangesReader(msgspec.Struct, frozen=True):
    """How ``kit.changes`` finds which files a harness's tool calls changed."""

    # extract(call, cwd, harness) -> the Changes of one tool call (model.changes.Call: the
    # use, its result, the message holding the result)
    extract: Callable[..., Any]
    # from_session(session, conversation, changes) -> changes: the runtime's own account
    # in native lines Common does not carry, where the harness has one
    from_session: Callable[..., Any] | None = None


class UnknownHarness(InputError):
    """No harness has that name (the message suggests the closest one)."""


_cache: dict[str, Harness] = {}
_all_loaded = False


def _builtin(name: str) -> Harness | None:
    """Import one built-in harness package; ``None`` when it does not exist (yet)."""
    if name in _cache:
        return _cache[name]
    try:
        module = import_module(f"txcodec.harnesses.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"txcodec.harnesses.{name}":
            raise
        return None
    harness = getattr(module, "HARNESS", None)
    if harness is not None:  # a package still being built registers nothing yet
        _cache[name] = harness
    return harness


_plugins: dict[str, Harness] | None = None


def plugins() -> dict[str, Harness]:
    """The harnesses installed under the ``txcodec.harnesses`` entry-point group."""
    global _plugins
    if _plugins is None:
        _plugins = {}
        for name, value in _entry_points():
            _plugins.setdefault(name, _with_declared_store(_load(value)))
    return _plugins


def _with_declared_store(harness: Harness) -> Harness:
    """A plugin written before stores were declared (0.1) gave its store module itself:
    its functions become a :class:`Store` here, once, with a DeprecationWarning, so that no
    feature has to ask a module which hooks it has."""
    store = object.__getattribute__(harness, "store")
    if store is None or isinstance(store, (Store, Later)):
        return harness
    import warnings

    warnings.warn(
        f"plugin harness {harness.name!r} gives a store module: build a txcodec.kit.registry.Store "
        "(a module goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    names = vars(store)  # the module's own functions, read once
    hooks = {name: names.get(name) for name in Store.__struct_fields__ if name != "file_names"}
    declared = Store(**hooks, file_names=tuple(names.get("FILE_NAMES", ())))
    return msgspec.structs.replace(harness, store=declared)


ENTRY_POINTS = "txcodec.harnesses"
CACHED_SETS = 4  # installed sets whose entry points the cache file keeps


def _entry_points() -> list[tuple[str, str]]:
    """The group's entry points as (name, value), in importlib.metadata's order. Looking
    them up imports importlib.metadata and reads every installed distribution (a tenth of
    a daily ``export --all``), so the answer is kept in the user's cache folder with what
    it depends on (:func:`_installed`): while that is the same, so are the entry points."""
    import sys

    key = _installed(sys.path, sys.meta_path)
    cache = _cache_file()
    kept: list[Any] = []
    if key is not None:
        try:
            kept = list(msgspec.json.decode(cache.read_bytes())["kept"])
            for entry in kept:
                if entry["key"] == key:
                    return [(name, value) for name, value in entry["entry_points"]]
        except (OSError, ValueError, KeyError, TypeError):  # none yet, or not ours: looked up anew
            kept = []
    from importlib import metadata  # slow to import: only when the installed set changed

    found = [(ep.name, ep.value) for ep in metadata.entry_points(group=ENTRY_POINTS)]
    if key is not None:
        # the last few sets are kept, newest first: runs that take turns with two paths (two
        # checkouts, ``python -m`` from two folders) would otherwise each undo the other's
        kept = [{"key": key, "entry_points": found}, *kept][:CACHED_SETS]
        try:
            from ..core.atomic import write_atomic

            write_atomic(cache, msgspec.json.encode({"kept": kept}), overwrite=True)
        except OSError:
            pass  # a read-only home: looked up every time, as without the cache
    return found


def _cache_file() -> Any:
    import os
    from pathlib import Path

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "txcodec" / "entry-points.json"


def _installed(path: list[str], finders: list[Any]) -> list[Any] | None:
    """What importlib.metadata's entry points depend on: for each folder on ``path``, the
    distributions it holds (its ``*.dist-info`` and ``*.egg-info`` entries, an egg's
    ``EGG-INFO``) and each one's ``entry_points.txt`` (time and size), for a zip its time
    and size. Installing, removing or upgrading a package changes it; a new file of some
    other kind beside them does not. None when a finder other than the standard path
    finder can give distributions (its own are not known so)."""
    import os
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in finders):
        return None

    def stamp(file: str) -> list[int] | None:
        try:
            stat = os.stat(file)
        except OSError:
            return None
        return [stat.st_mtime_ns, stat.st_size]

    key: list[Any] = []
    for entry in path:
        folder = entry or "."
        try:
            children = os.listdir(folder)
        except NotADirectoryError:
            key.append([entry, stamp(folder)])  # a zip on the path
            continue
        except OSError:
            key.append([entry, None])
            continue
        infos = sorted(c for c in children if c.lower().endswith((".dist-info", ".egg-info")))
        if os.path.basename(folder).lower().endswith(".egg"):
            infos += [c for c in children if c.lower() == "egg-info"]
        key.append([entry, [[c, stamp(os.path.join(folder, c, "entry_points.txt"))] for c in infos]])
    return key


def _load(value: str) -> Any:
    """The object an entry point's value names (``module:attr.attr``), as
    ``EntryPoint.load`` finds it (without importing importlib.metadata)."""
    module, _, attrs = value.partition("[")[0].partition(":")
    found = import_module(module.strip())
    for attr in filter(None, attrs.strip().split(".")):
        found = getattr(found, attr)
    return found


def _load_all() -> dict[str, Harness]:
    global _all_loaded
    if not _all_loaded:
        for name in BUILTIN:
            _builtin(name)
        for name, harness in plugins().items():
            _cache.setdefault(name, harness)
        _all_loaded = True
    return _cache


# File names that alone say whose a file is, whatever its bytes (a store's ``file_names``),
# of the built-in harnesses: known without importing them (a test checks the stores agree).
FILE_NAMES = {".aider.chat.history.md": "aider"}


def named(file_name: str) -> str | None:
    """The built-in harness whose store names its files ``file_name``, or None (no
    entry point is looked up: see :func:`plugin_named`)."""
    return FILE_NAMES.get(file_name)


def plugin_named(file_name: str) -> str | None:
    """The plugin harness whose store names its files ``file_name``, or None. Asked only
    of a file no built-in harness claims, by name or by content: the entry-point lookup
    costs more than reading a small session."""
    for name, harness in plugins().items():
        if name not in BUILTIN and harness.store is not None and file_name in harness.store.file_names:
            return name
    return None


# the short names people use for the clients (and their commands), mapped to the harness ids;
# case and ``-``/``_`` do not matter (:func:`canonical`)
ALIASES = {
    "claude": "claude_code",
    "gemini": "gemini_cli",
    "qwen": "qwen_code",
    "copilot": "copilot_cli",
    "continue": "continue_cli",
    "cn": "continue_cli",
    "kimi": "kimi_cli",
    "vibe": "mistral_vibe",
    "mistral": "mistral_vibe",
    "streamjson": "stream_json",
}


def canonical(name: str) -> str:
    """The harness id a name means: the id itself, any case, ``-`` for ``_``, or a short
    name (``claude``, ``gemini``, ``vibe``: :data:`ALIASES`). A name that means none is
    returned as it is (a plugin's own, or unknown: :func:`get` says which)."""
    if name in BUILTIN:
        return name
    key = name.strip().lower().replace("-", "_")
    if key in BUILTIN:
        return key
    found = ALIASES.get(key) or ALIASES.get(key.replace("_", ""))
    if found is not None:
        return found
    return name


def find(name: str) -> Harness | None:
    """The harness named ``name`` (any spelling :func:`canonical` takes), or None: a
    built-in is imported alone, any other name is asked of the plugins only (never every
    built-in, as :func:`get`'s error message does)."""
    name = canonical(name)
    return _builtin(name) if name in BUILTIN else plugins().get(name)


def harnesses() -> dict[str, Harness]:
    return dict(_load_all())


def builtins() -> dict[str, Harness]:
    """The built-in harnesses, in :data:`BUILTIN` order, without looking up a plugin."""
    return {name: found for name in BUILTIN if (found := _builtin(name)) is not None}


def get(name: str) -> Harness:
    # a built-in is imported alone: using one harness never imports the others
    name = canonical(name)
    found = (_builtin(name) if name in BUILTIN else None) or _load_all().get(name)
    if found is None:
        import difflib  # only for the error message

        close = difflib.get_close_matches(name, list(_load_all()), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownHarness(f"unknown harness {name!r}{hint}; known: {', '.join(sorted(_load_all()))}")
    return found


def session_in_folder(folder: Any) -> Any:
    """The session file of a folder that is one session (a Kimi CLI folder holding
    ``context.jsonl``, a Mistral Vibe folder holding ``messages.jsonl`` or ``CURRENT``,
    cline's ``<id>/<id>.messages.json``): asked of each store with a ``session_file``
    hook. ``None`` for any other folder."""
    for harness in _load_all().values():
        store = harness.store
        found = store.session_file(folder) if store is not None and store.session_file is not None else None
        if found is not None:
            return found
    return None
