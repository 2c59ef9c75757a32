"""The session index: every harness's store seen through one row type, and one way to name
a session (a path, an id, an id prefix, ``latest`` or ``latest:<harness>``).

``list``, ``convert --all`` and every command that takes a session call :func:`discover`
and :func:`resolve` here, so they all find the same sessions."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from itertools import compress
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from .core.dates import parse_timestamp
from .core.dates import within
from .core.errors import InputError
from .core.errors import StoreError
from .kit import registry
from .kit.store import shown_path
from .kit.store import utf8_name
from .model.common import ForkedFrom


class SessionRow(msgspec.Struct, kw_only=True, gc=False):
    """One session in a store, the same fields for every harness (``None`` when the
    harness does not record it). Rows come by the ten thousand and hold only strings,
    numbers and a list of strings, never a cycle: the cycle collector does not track them
    (``gc=False``).

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
    """The rows :func:`discover` found (a list), ``errors``: one line per store or file
    that could not be read, and ``ids``: the id of every session the stores listed,
    before any filter (what an id prefix must tell apart)."""

    errors: list[str]
    ids: list[str]

    def __init__(
        self,
        rows: Iterable[SessionRow] = (),
        errors: list[str] | None = None,
        ids: list[str] | None = None,
        describe: Any = None,
    ):
        super().__init__(rows)
        self.errors = errors or []
        self.ids = ids or []
        self._describe = describe

    def described(self, order: Iterable[SessionRow] | None = None) -> Iterator[SessionRow]:
        """The rows (in ``order``, some or all of them) with their details, each handed on as
        soon as it and those before it are read: for :func:`discover` with ``stream=True``,
        whose rows are listed undescribed (a long listing prints its first rows at once).
        Otherwise the rows as they are. Use it once."""
        rows = self if order is None else order
        if self._describe is None:
            return iter(rows)
        describe, self._describe = self._describe, None
        return describe(list(rows))


def stores(harness: str | None = None) -> dict[str, registry.Store]:
    """The store of each harness that has one (only ``harness`` when given). Listing every
    store does not import the built-in harnesses that keep none (``registry.STORELESS``)."""
    if harness is not None:
        found = registry.get(harness)
        if found.store is None:
            raise InputError(f"{found.title} has no session store")
        return {found.name: found.store}
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
    index: bool = True,
    stream: bool = False,
) -> Index:
    """Every session in the stores (one harness's with ``harness``; ``root`` instead of the
    default store folder), newest first, filtered: ``project`` matches the project name or
    a part of the cwd, ``since``/``until`` the last update, ``grep`` the file's content
    (case-insensitive). ``details`` reads each kept file once more for its first prompt and
    models. ``describe=False`` is for a caller that wants only the sessions' files (the
    Parquet export): a store that can list them without reading each (``discover_files``)
    does, and its rows say no more than the files do (no title, cwd or count; ``updated``
    is the file's time). One store's trouble is reported in ``errors`` and does not hide
    the others. ``index``: the rows and details of a session whose file has not changed since
    an earlier run are taken from the session index (:mod:`txcodec.session_index`) instead of
    reading it again, with or without ``details`` (so that a session named by its id is found
    without reading the stores). ``stream``: the rows come undescribed, and :meth:`Index.described`
    reads their details as they are asked for."""
    rows: list[SessionRow] = []
    errors: list[str] = []
    describe = describe or details or any(value is not None for value in (project, since, until))
    # with a limit, a store that can describe one listed file at a time has only the files
    # that can be among the newest read (_newest_first)
    # and with the session index, its rows of files not changed since are taken from the index
    cache = None
    if describe and index:  # details or not: naming a session by id (resolve_row) reads kept listings too
        from .session_index import SessionIndex

        cache = SessionIndex()
    lazy = {
        name
        for name, store in (stores(harness).items() if (limit is not None or cache is not None) and describe else ())
        if store.describe_item is not None and store.discover_files is not None
    }
    pending: list[tuple[str, Any]] = []
    filtered = limit is not None or grep is not None or any(v is not None for v in (project, since, until))
    # a lazy store whose whole listing the index keeps, every folder and file as it was then:
    # its rows as they were (none of its files listed or read); the others' folders noted
    # before they are listed, so that the listing made now can be kept (_Listings)
    listings = (
        _Listings(cache, {n: s for n, s in stores(harness).items() if n in lazy}, root, errors, whole=not filtered)
        if lazy and cache is not None
        else None
    )

    def lister(store: registry.Store) -> Any:
        if lazy and store.describe_item is not None and store.discover_files is not None:
            return _names(store.discover_files)
        if describe or store.discover_files is None:
            return store.discover
        return _names(store.discover_files)

    skip = set(listings.kept) if listings is not None else set()
    needle = _needles(grep) if grep else None
    # a cold --grep: the stores' files asked of grep while they are listed (each holds a CPU)
    early = None
    if needle is not None and _greppable(needle) and limit is None and listings is not None and listings.cold:
        from . import grep_index

        if not (index and grep_index.exists()):  # the text index answers instead
            early = _EarlyGrep(needle, listings.main_files())
    try:
        for name, item in _listed(harness, root, lister, errors, skip):
            if name in lazy:
                pending.append((name, item))
                continue
            row = _row(name, item)
            if row is not None:
                rows.append(row)
    except BaseException:
        if early is not None:
            early.cancel()
        raise
    # rows as the index kept them, details and all (those of a kept listing's unchanged files too)
    done: set[int] = listings.done if listings is not None else set()
    if listings is not None:
        for kept_rows in listings.kept.values():
            rows.extend(kept_rows)
    every_id = [r.session_id for r in rows]
    listed = {r.path for r in rows if r.path is not None}
    for _, item in pending:
        session_id, path = _get(item, "session_id", "id"), _get(item, "path")
        if isinstance(session_id, str):
            every_id.append(session_id)
            if path is not None:
                listed.add(str(path))
    if project is not None or since is not None or until is not None:
        rows = [r for r in rows if _keep(r, project, since, until)]
    ordered: Iterable[SessionRow]
    when = listings.when if listings is not None else _when
    closing = listed if harness is None and root is None else None  # a whole home: rows of files gone forgotten
    # every row from a kept listing: no file of them is gone, and no row of the index need be forgotten
    forget = None if done and len(done) == len(every_id) else closing
    kept: list[SessionRow] = []
    sessions = 0  # subagent chats ride along with their session, not counted by ``limit``
    known = listings.file_stamps if listings is not None else dict
    search = _Search(needle, listed, forget, index, known, early) if needle is not None else None
    try:
        if lazy and limit is None and search is not None:
            # only the files holding the text are described: a cold ``--grep`` reads the others once, by grep
            holding = search.holding([_get(item, "path") for _, item in pending])
            pending = [(name, item) for name, item in pending if str(_get(item, "path")) in holding]
        if lazy and limit is None:  # every file described: those the index does not hold, in forked workers
            rank = {name: n for n, name in enumerate(stores())}
            described, detailed = _described_items(pending, cache, errors, listings, details)
            done = done | detailed  # their details were read with them
            rows = [*rows, *(r for r in described if _keep(r, project, since, until))]
            # the stores' own order, then the newest first (a stable sort: equal times keep that order)
            rows.sort(key=lambda r: rank.get(r.harness, 0))
            rows.sort(key=when, reverse=True)
            ordered = rows
        elif lazy:
            ordered = _newest_first(
                rows, pending, lambda row: _keep(row, project, since, until), errors, cache, when, listings
            )
        else:
            rows.sort(key=when, reverse=True)
            ordered = rows
        for row in ordered if search is None else search.rows(ordered):
            if limit is not None and sessions >= limit:
                break
            kept.append(row)
            sessions += row.parent is None
        # a store's listing is kept when it was listed whole, unfiltered, and said no trouble
        keep_listings = listings if not filtered and listings is not None else None
        if details and stream:
            every = {id(r) for r in kept}

            def described(order: list[SessionRow]) -> Iterator[SessionRow]:
                # a listing is kept only from every row of the run
                whole = len(order) == len(every) and every.issuperset(map(id, order))
                return _described(order, cache, forget, done, keep_listings if whole else None)

            return Index(kept, errors, every_id, described)
        if details:
            describe_rows([r for r in kept if id(r) not in done], cache)
            if keep_listings is not None:
                keep_listings.keep(kept, errors)
    except BaseException:
        if cache is not None:
            cache.close(forget)
        raise
    finally:
        if search is not None:
            search.close()
    if cache is not None:
        cache.close(forget)
    return Index(kept, errors, every_id)


def _described(
    rows: list[SessionRow], cache: Any, closing: set[str] | None, done: set[int], listings: _Listings | None
) -> Iterator[SessionRow]:
    try:
        if (listings is None or not listings.folders) and all(id(row) in done for row in rows):  # every row as kept
            yield from rows
            return
        every: list[SessionRow] = []
        for row in describe_stream(rows, cache, done):
            every.append(row)
            if listings is not None and len(every) == len(rows):  # kept before the last is handed on:
                listings.keep(every, listings.errors)  # a caller need not ask past it
            yield row
    finally:
        if cache is not None:
            cache.close(closing)


def _when(row: SessionRow) -> datetime:
    """Where a row sorts: its last update (newest first), a row without one last."""
    return parse_timestamp(row.updated) or _OLDEST


class _KeptRow(msgspec.Struct, array_like=True, gc=False):
    """A row of a kept listing: the file's size, mtime (ns), inode and mode, where it sorts,
    and the row as ``list`` showed it."""

    stamp: tuple[int, int, int, int]
    when: datetime
    row: SessionRow


class _KeptListing(msgspec.Struct, array_like=True, gc=False):
    """A store's whole listing (``session_index.listings``): each folder under its root with its
    mtime (ns; -1: missing) as they were before the store was listed, and its rows."""

    folders: list[tuple[str, int]]
    rows: list[_KeptRow]


_encode_listing = msgspec.msgpack.Encoder().encode
_decode_listing = msgspec.msgpack.Decoder(_KeptListing).decode
_RACY_NS = 2_000_000_000  # a folder changed this close to its listing may change again unseen (a clock tick)


class _Listings:
    """The whole listings of the lazy ``stores`` (those with ``discover_files`` and
    ``describe_item``) the session index keeps. ``kept``: the rows of each store whose kept
    listing holds (every folder under its root and every file as it was then); of the others,
    the folders are noted now, before they are listed, so that :meth:`keep` can keep what
    this run lists. A store's listing is a function of the names under its root and of its
    files (``discover_files`` reads no file's content, docs/speed.md): a folder's mtime changes
    with its names, a file's stamp with its content or mode."""

    def __init__(
        self,
        index: Any,
        stores: dict[str, registry.Store],
        root: str | os.PathLike[str] | None,
        errors: list[str],
        whole: bool = True,
    ) -> None:
        from . import session_index
        from .core.gcpause import no_cycle_collection

        self.index = index
        self.stores = stores
        self.kept: dict[str, list[SessionRow]] = {}
        self.done: set[int] = set()  # the rows handed on as kept
        self.stamps: dict[int, tuple[int, int, int, int]] = {}  # of the rows reused: the stamp each was made for
        # a store whose folders hold but some of whose files changed: its unchanged files' rows by path
        self.reusable: dict[str, dict[str, _KeptRow]] = {}
        self.whens: dict[int, datetime] = {}
        self.roots: dict[str, str] = {}
        self.folders: dict[str, list[tuple[str, int]] | None] = {}
        self.checked: list[tuple[_KeptListing, list[bool]]] = []  # each kept listing, and which files are as kept
        self.errors = errors  # the run's: a store that said trouble is listed again next run
        for name, store in stores.items():
            try:
                self.roots[name] = os.path.abspath(os.fspath(root if root is not None else store.default_root()))
            except (OSError, ValueError):
                continue
            found = session_index.get_listing(index, name, self.roots[name])
            with no_cycle_collection():  # rows by the ten thousand, no cycle among them
                held = _holding(found) if found is not None else None
                if held is not None:
                    self.whens.update((id(kept.row), kept.when) for kept in held[0].rows)
            if held is not None:
                self.checked.append(held)
            if held is not None and all(held[1]):
                self.kept[name] = [kept.row for kept in held[0].rows]
                self.done.update(map(id, self.kept[name]))
                continue
            if held is not None:  # the folders hold, some files changed: listed again, the others' rows reused
                rows = zip(held[0].rows, held[1])
                self.reusable[name] = {kept.row.path: kept for kept, same in rows if same and kept.row.path}
                self.folders[name] = held[0].folders  # as they were before this listing, too
                continue
            if found is not None:
                session_index.put_listing(index, name, self.roots[name], None)  # no longer holds
            if whole:  # a run that lists a store whole (unfiltered) keeps its listing
                self.folders[name] = _folders(self.roots[name])

    @property
    def cold(self) -> bool:
        """No store's listing kept, not even in part: every file of every store is to be read."""
        return not self.kept and not self.reusable

    def main_files(self) -> list[str]:
        """Every store's main files, as ``Store.main_files`` finds them (quickest: no file read)."""
        files: list[str] = []
        for name, root in self.roots.items():
            found = self.stores[name].main_files
            if found is not None:
                files.extend(map(str, found(Path(root))))
        return files

    def reuse(self, name: str, path: str, session_id: Any) -> SessionRow | None:
        """The kept row of an unchanged file of a store listed again (its folders as they were:
        the same items), noted as made from the file as it is (:func:`_listing_stamp`)."""
        kept = self.reusable.get(name, {}).get(path)
        if kept is None or kept.row.session_id != session_id:
            return None
        stamp = kept.stamp[:3]
        self.index.used[("listed", path, name)] = self.index.used[("sessions", path, session_id)] = stamp
        self.done.add(id(kept.row))
        self.stamps[id(kept.row)] = kept.stamp
        return kept.row

    def file_stamps(self) -> dict[str, tuple[int, int, int, int]]:
        """The size, mtime, inode and mode of each kept row's file found as it was kept, as this
        run statted it (``--grep`` asks the text index with them instead of statting each again)."""
        found: dict[str, tuple[int, int, int, int]] = {}
        for listing, same in self.checked:
            found.update((kept.row.path, kept.stamp) for kept in compress(listing.rows, same))
        return found

    def when(self, row: SessionRow) -> datetime:
        found = self.whens.get(id(row))
        return found if found is not None else _when(row)

    def keep(self, rows: list[SessionRow], errors: list[str]) -> None:
        """Keep the listing of each store listed this run from ``rows`` (every row of the run,
        described), unless the store or one of its files said trouble (``errors``: said again
        next run), or a row was made of parts read at different states of its file."""
        from . import session_index

        for name, folders in self.folders.items():
            root = self.roots[name]
            mine = [r for r in rows if r.harness == name]
            if folders is None or any(e.startswith(f"{name}: ") for e in errors):
                continue
            kept: list[_KeptRow] = []
            for row in mine:
                # a reused row keeps the stamp it was made for (a file changed since shows next run)
                stamp = self.stamps.get(id(row)) or _listing_stamp(self.index, row, root)
                if stamp is None:
                    break
                kept.append(_KeptRow(stamp, _when(row), row))
            else:
                try:
                    listing = _encode_listing(_KeptListing(folders, kept))
                except (ValueError, UnicodeEncodeError):  # a name that is not UTF-8: listed afresh each run
                    continue
                session_index.put_listing(self.index, name, root, listing)


def _holding(found: bytes) -> tuple[_KeptListing, list[bool]] | None:
    """The kept listing, when every folder is as it was then, with whether each row's file is."""
    try:
        listing = _decode_listing(found)
    except (msgspec.MsgspecError, ValueError):
        return None
    for folder, mtime in listing.folders:
        try:
            now = os.stat(folder).st_mtime_ns
        except OSError:
            now = -1
        if now != mtime:
            return None
    take = os.stat
    same = []
    for kept in listing.rows:
        try:
            st = take(kept.row.path)
        except (OSError, TypeError, ValueError):
            same.append(False)
            continue
        same.append((st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode) == kept.stamp)
    return listing, same


def _folders(root: str) -> list[tuple[str, int]] | None:
    """Every folder under ``root`` (``root`` first, followed if a symlink; symlinked folders
    below it not entered, as the stores do not enter them) with its mtime (ns; -1: missing),
    each taken before the folder is listed; None when one cannot be listed, or changed so
    recently that a change in the same clock tick would not show."""
    import time

    now = time.time_ns()
    try:
        top = os.stat(root)
    except OSError:
        return [(root, -1)]
    found = [(root, top.st_mtime_ns)]
    if not stat.S_ISDIR(top.st_mode):
        return found
    todo = [root]
    try:
        while todo:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        found.append((entry.path, entry.stat(follow_symlinks=False).st_mtime_ns))
                        todo.append(entry.path)
    except OSError:
        return None
    if any(mtime > now - _RACY_NS for _, mtime in found):
        return None
    return found


def _listing_stamp(index: Any, row: SessionRow, root: str) -> tuple[int, int, int, int] | None:
    """The file's stamp (size, mtime, inode, mode) when its row's listing part and its details
    were both made from the file as it is now, inside ``root``; else None."""
    path = row.path
    if path is None or not path.startswith(root + os.sep):
        return None
    used = index.used
    listed = used.get(("listed", path, row.harness))
    if listed is None or used.get(("sessions", path, row.session_id)) != listed:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if (st.st_size, st.st_mtime_ns, st.st_ino) != listed:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode


_decode_row = msgspec.json.Decoder(SessionRow).decode
_OLDEST = datetime.min.replace(tzinfo=UTC)  # times come in several spellings (Z, offsets): compared parsed


class _Later:
    """A value that sorts before another when it is greater (a heap of the newest first)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Later) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Later) and self.value == other.value


def _newest_first(
    rows: list[SessionRow],
    pending: list[tuple[str, Any]],
    keep: Any,
    errors: list[str],
    cache: Any = None,
    when: Any = None,
    listings: _Listings | None = None,
) -> Iterator[SessionRow]:
    """The rows in :func:`discover`'s order (newest first; equal times in the stores' own
    order), describing the ``pending`` items (``Store.describe_item``) only as the order
    needs them: newest file first, and only while a file's modification time is no older
    than the newest row not yet handed on. A session's last record is no newer than the
    last write of its file, so a file older than that row cannot come before it. (A file
    whose records are dated after its modification time, once found, has every file read.)"""
    import heapq

    rank = {name: n for n, name in enumerate(stores())}
    heap: list[tuple[Any, ...]] = []
    when = when or _when
    for n, row in enumerate(rows):  # described already: in their stores' own order
        heap.append((_Later(when(row)), rank.get(row.harness, 0), n, n, row))
    heapq.heapify(heap)
    bounded: list[tuple[datetime, int, str, Any]] = []
    for n, (name, item) in enumerate(pending):
        path = _get(item, "path")
        try:
            bound = datetime.fromtimestamp(os.stat(path).st_mtime, UTC) if path is not None else datetime.max
        except OSError:
            bound = datetime.max.replace(tzinfo=UTC)
        bounded.append((bound if bound.tzinfo else bound.replace(tzinfo=UTC), n, name, item))
    bounded.sort(key=lambda b: b[:2])  # the newest file last: popped first
    seq = len(rows)
    trusted = True
    while True:
        while bounded and (not heap or not trusted or bounded[-1][0] >= heap[0][0].value):
            bound, n, name, item = bounded.pop()
            try:
                row = _described_item(name, item, cache, errors, listings)
            except (OSError, ValueError, RecursionError) as exc:  # as the store's own listing passes it over
                errors.append(f"{name}: {_get(item, 'path')}: {exc}")
                continue
            if row is None:
                continue
            when = parse_timestamp(row.updated) or _OLDEST
            trusted = trusted and when <= bound
            if keep(row):
                # equal times keep the store's order (its files listed in discover's order)
                heapq.heappush(heap, (_Later(when), rank.get(name, 0), n, seq, row))
                seq += 1
        if not heap:
            return
        yield heapq.heappop(heap)[-1]


_encode_row = msgspec.json.Encoder().encode


def _described_item(
    name: str, item: Any, cache: Any, errors: list[str], listings: _Listings | None = None
) -> SessionRow | None:
    """``Store.describe_item`` of a listed file, as a row; with the session index (``cache``),
    taken from it while the file is as it was when described, and kept for the next run."""
    found = _cached_item(name, item, cache, listings)
    if found is not None:
        return found
    before = _stamp_of(item) if cache is not None else None
    row, found_errors, _ = _describe_item((name, item, False))
    errors.extend(found_errors)
    _keep_item(name, item, row, found_errors, cache, before)
    return row


def _described_items(
    pending: list[tuple[str, Any]], cache: Any, errors: list[str], listings: _Listings | None, details: bool
) -> tuple[list[SessionRow], set[int]]:
    """:func:`_described_item` of each of ``pending`` (in their order, those that give a row):
    the index looked up for all first, the files it does not hold described in forked
    workers when there are enough of them (as :func:`describe_rows` reads details). With
    ``details``, a file described here has its details read in the same worker, right after
    (one pass of workers, each file read while it is hot): the ids of those rows come second."""
    from .core.gcpause import frozen

    rows: list[SessionRow | None] = [None] * len(pending)
    todo: list[int] = []
    for n, (name, item) in enumerate(pending):
        rows[n] = _cached_item(name, item, cache, listings)
        if rows[n] is None:
            todo.append(n)
    with frozen():  # the listing's items, alive to the end (the workers forked now inherit them)
        stamps = [_stamp_of(pending[n][1]) if cache is not None else None for n in todo]
        jobs = [(*pending[n], details) for n in todo]
        described = _forked(_describe_item, jobs, [s[0] if s else 0 for s in stamps])
    detailed: set[int] = set()
    for n, before, (row, found_errors, entry) in zip(todo, stamps, described):
        errors.extend(found_errors)
        _keep_item(*pending[n], row, found_errors, cache, before)
        rows[n] = row
        if row is not None and entry is not None:
            _apply(row, entry)
            detailed.add(id(row))
            if cache is not None:
                cache.put(row.path, row.session_id, entry, before)
    return [row for row in rows if row is not None], detailed


def _stamp_of(item: Any) -> Any:
    from .session_index import stamp

    path = _get(item, "path")
    return stamp(str(path)) if path is not None else None


def _cached_item(name: str, item: Any, cache: Any, listings: _Listings | None = None) -> SessionRow | None:
    """The row the index keeps for a listed file still as it was: from the store's kept listing
    when its folders are as they were (the row whole, details and all: ``listings.done``),
    else from the ``listed`` table, the subagents counted being the listing's (the side
    folder is listed afresh each run)."""
    path = _get(item, "path")
    if cache is None or path is None:
        return None
    if listings is not None:
        kept = listings.reuse(name, str(path), _get(item, "session_id", "id"))
        if kept is not None:
            return kept
    found = cache.get_listed(name, str(path))
    if found is None:
        return None
    try:
        row = _decode_row(found)
    except msgspec.MsgspecError:
        return None
    if row.session_id != _get(item, "session_id", "id"):
        return None
    row.subagents = _subagents(item)
    return row


def _subagents(item: Any) -> int:
    """The subagent and workflow chats a store item counts (its side folders)."""
    counts = getattr(item, "counts", None)
    return (counts.get("subagents", 0) + counts.get("workflow_agents", 0)) if isinstance(counts, dict) else 0


def _describe_item(job: tuple[str, Any, bool]) -> tuple[SessionRow | None, list[str], Any]:
    """One listed file described by its store (in a worker or not): its row, the errors it met,
    and with ``details`` (the job's third part) its entry (:func:`_read_entry`), from the
    same read of the file where the store can (``Store.describe_lean``)."""
    name, item, details = job
    store = registry.get(name).store
    known = len(getattr(item, "errors", None) or ())
    lean: Any = None
    try:
        if details and store.describe_lean is not None:
            item, lean = store.describe_lean(item)
        else:
            item = store.describe_item(item)
        row = _row(name, item)
    except (OSError, ValueError, RecursionError) as exc:  # as the store's own listing passes it over
        return None, [f"{name}: {_get(item, 'path')}: {exc}"], None
    entry = None
    if details and row is not None and row.path is not None:
        entry = _entry(lean) if lean is not None else _read_entry(row)
    return row, [f"{name}: {e}" for e in (getattr(item, "errors", None) or [])[known:]], entry


def _keep_item(name: str, item: Any, row: SessionRow | None, found_errors: list[str], cache: Any, before: Any) -> None:
    """Keep a described row in the index, for the file as it was before it was read; a file
    with trouble is read (and said) again next run."""
    path = _get(item, "path")
    if row is None or cache is None or path is None or found_errors:
        return
    try:
        encoded = _encode_row(row)
    except ValueError:  # a name that is not UTF-8 (os.fsdecode's surrogates): read afresh each run
        return
    cache.put_listed(name, str(path), encoded, before)


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
        if not sides and store.discover_mains is not None:
            return _names(store.discover_mains)
        return _names(store.discover_files) if store.discover_files is not None else store.discover

    for name, item in _listed(harness, root, lister, errors):
        session_id = _get(item, "session_id", "id")
        path = _get(item, "path")
        if isinstance(session_id, str) and path is not None and _get(item, "parent_id") is None:
            rows.append(SessionRow(harness=name, session_id=session_id, path=str(path)))
    return Index(rows, errors)


def _listed(
    harness: str | None,
    root: str | os.PathLike[str] | None,
    lister: Any,
    errors: list[str],
    skip: set[str] | frozenset[str] = frozenset(),
) -> Iterator[tuple[str, Any]]:
    """Each store's listing (but ``skip``'s), item by item with its store's name (``lister(store)``
    is the listing asked of it). What a store or an item could not list goes to ``errors``; one
    store's trouble does not hide the others."""
    for name, store in stores(harness).items():
        if name in skip:
            continue
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
            if isinstance(path, str) and not utf8_name(path):
                errors.append(f"{name}: {shown_path(path)}: its name is not UTF-8 (kept as os.fsdecode reads it)")
            yield name, item


def _names(listing: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A store's listing of names (``discover_files``, ``discover_mains``: no file read), made
    with the cycle collector paused: items by the ten thousand, a few objects each and no
    cycle, which it would walk again and again as they are made (half the listing's time)."""
    from .core.gcpause import no_cycle_collection

    def listed(root: Any) -> Any:
        with no_cycle_collection():
            return listing(root)

    return listed


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
        subagents=_subagents(item),
    )
    if row.updated is None and row.path is not None:
        try:
            row.updated = datetime.fromtimestamp(os.stat(row.path).st_mtime, UTC).isoformat().replace("+00:00", "Z")
        except OSError:
            pass
    return row


# -- title, first prompt, count and models: the session read as Common ---------------------------
# One definition for every harness (txcodec.model.summary), the same the HTML index and the
# Parquet rows use; the lineage from the lines the loaded session holds.


def describe_row(row: SessionRow, index: Any = None) -> None:
    """Fill ``row`` (in place) with what the session says of itself: title, first prompt,
    message count and models by :mod:`txcodec.model.summary`, and its lineage. A session
    that cannot be read keeps what its store said. ``index`` (a
    :class:`~txcodec.session_index.SessionIndex`): taken from it when the file has not
    changed since, and kept in it otherwise."""
    describe_rows([row], index)


# below this much to read, forking workers costs more than it saves
_PARALLEL_ROWS, _PARALLEL_BYTES = 64, 4 << 20


def describe_rows(rows: list[SessionRow], index: Any = None) -> None:
    """:func:`describe_row` for each of ``rows``; the sessions the index does not hold are
    read in forked processes (one per CPU) when there are enough of them."""
    from .session_index import stamp

    pending: list[SessionRow] = []
    for row in rows:
        if row.path is None:
            continue
        entry = index.get(row.path, row.session_id) if index is not None else None
        if entry is None:
            pending.append(row)
        else:
            _apply(row, entry)
    stamps = [stamp(r.path) for r in pending]  # the files as they were read (size, time, inode)
    for n, entry in enumerate(_read_entries(pending, [s[0] if s else 0 for s in stamps])):
        _apply(pending[n], entry)
        if index is not None:
            index.put(pending[n].path, pending[n].session_id, entry, stamps[n])


_BLOCK_ROWS = 512  # rows looked up and read at a time by describe_stream


def describe_stream(rows: list[SessionRow], index: Any = None, done: set[int] = frozenset()) -> Iterator[SessionRow]:  # type: ignore[assignment]
    """:func:`describe_rows`, each row handed on, in order, once it and those before it are
    described: a block of rows at a time, those the index does not hold read in forked
    processes (one pool for every block) when a block has enough of them. Rows in ``done``
    (their ids) are described already."""
    from .session_index import stamp

    pools: list[Any] = []  # the one pool every block shares, once a block needs it
    try:
        for start in range(0, len(rows), _BLOCK_ROWS):
            block = rows[start : start + _BLOCK_ROWS]
            pending: list[SessionRow] = []
            for row in block:
                if done and id(row) in done:
                    continue
                entry = index.get(row.path, row.session_id) if index is not None and row.path is not None else None
                if entry is not None:
                    _apply(row, entry)
                elif row.path is not None:
                    pending.append(row)
            stamps = [stamp(r.path) for r in pending]
            entries = _read_entries(pending, [s[0] if s else 0 for s in stamps], pools)
            for n, entry in enumerate(entries):
                _apply(pending[n], entry)
                if index is not None:
                    index.put(pending[n].path, pending[n].session_id, entry, stamps[n])
            yield from block
    finally:
        from .core.forking import shut

        shut(pools)


def _read_entries(rows: list[SessionRow], sizes: list[int], pools: list[Any] | None = None) -> list[Any]:
    """Each row's entry (:func:`_forked`)."""
    return _forked(_read_entry, rows, sizes, pools)


def _forked(work: Any, jobs: list[Any], sizes: list[int], pools: list[Any] | None = None) -> list[Any]:
    """``work`` of each job, in forked workers (one per CPU) when there are enough to read
    (``sizes``: the bytes each reads); ``pools`` holds a pool kept for later calls (made here
    when it is empty), else one is made for this call alone."""
    cpus = os.cpu_count() or 1
    if cpus < 2 or len(jobs) < _PARALLEL_ROWS or sum(sizes) < _PARALLEL_BYTES:
        return [work(job) for job in jobs]
    from .core.forking import forked_map

    return forked_map(work, jobs, min(cpus, len(jobs)), max(1, len(jobs) // (cpus * 8)), pools)


def _apply(row: SessionRow, entry: Any) -> None:
    if not entry.read:
        return
    row.title = entry.title or row.title
    row.first_prompt = entry.first_prompt or row.first_prompt
    row.messages = entry.messages
    row.models = entry.models or row.models
    if entry.started_by is not None or entry.forked_from is not None:
        row.started_by, row.forked_from = entry.started_by, entry.forked_from


def _read_entry(row: SessionRow) -> Any:
    """The row's entry: read lean by its store (``Store.summarize``) where it can be, else
    from the session read whole to Common."""
    lean = _lean_entry(row)
    return lean if lean is not None else _full_entry(row)


def _lean_entry(row: SessionRow) -> Any:
    store = registry.get(row.harness).store if row.harness else None
    if store is None or store.summarize is None or row.path is None:
        return None
    found = store.summarize(row.path)  # the row's details without building Common; None: read whole
    return _entry(found) if found is not None else None


def _entry(found: Any) -> Any:
    """The entry of a row's details read lean (:class:`txcodec.model.summary.Details`)."""
    from .session_index import Entry

    return Entry(
        read=True,
        title=found.title,
        first_prompt=found.first_prompt,
        messages=found.messages,
        models=found.models or None,
        started_by=found.started_by,
        forked_from=found.forked_from,
    )


def _full_entry(row: SessionRow) -> Any:
    from .api import to_common
    from .model.summary import summarize
    from .session_index import Entry

    try:
        conv = to_common(load_row(row.harness, row.session_id, row.path))
    except (OSError, ValueError, RecursionError, msgspec.MsgspecError):
        return Entry(read=False)  # unreadable now: the row keeps what the store said
    found = summarize(conv)
    started_by, forked = conv.meta.started_by, conv.meta.forked_from  # the file's lineage (api.to_common)
    return Entry(
        read=True,
        title=found.title,
        first_prompt=found.first_prompt,
        messages=found.messages,
        models=found.models or None,
        started_by=started_by if isinstance(started_by, str) else None,
        forked_from=forked.session_id if isinstance(forked, ForkedFrom) else None,
    )


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


class _Search:
    """``--grep``: which files hold one of ``needles``. With the text index (made by
    ``txcodec index --fts``, :mod:`txcodec.grep_index`) and ``index``, of a file it holds as it
    is now only the blocks it names are read; any other file is read, and a file read whole is added to it
    (``closing``: a whole home's files, the texts of the others forgotten)."""

    def __init__(
        self,
        needles: tuple[bytes, ...],
        listed: set[str],
        closing: set[str] | None,
        index: bool,
        known: Callable[[], dict[str, tuple[int, int, int, int]]] = dict,
        early: _EarlyGrep | None = None,
    ) -> None:
        from . import grep_index

        self.needles = needles
        self.early = early
        self.texts = grep_index.GrepIndex() if index and grep_index.exists() else None
        self.held: set[str] = set()
        self.answers: dict[str, bool] = {}  # a file's answer, once asked
        self.matching: grep_index.Found | None = None
        if self.texts is not None:
            if closing is not None:
                self.texts.forget(closing)
            self.matching = self.texts.matching(needles)
            if self.matching is not None:
                self.held = self.texts.held(listed, known())

    def rows(self, rows: Iterable[SessionRow]) -> Iterator[SessionRow]:
        """The rows whose file holds a needle, in their order: a block of rows at a time (the
        first small, for ``--limit``), the files the text index cannot answer asked of
        ``grep`` in one process a block when there is one (:func:`_grep`), else read here."""
        source = iter(rows)
        size = 64
        while block := list(islice(source, size)):
            size = min(size * 4, _GREP_BLOCK)
            found = self.holding([r.path for r in block])
            yield from (row for row in block if row.path in found)

    def holding(self, paths: list[Any]) -> set[str]:
        """Which of ``paths`` hold a needle; a file asked of before is not read again."""
        if self.early is not None:  # the answers of the greps started before the listing
            self.answers.update(self.early.answers())
            self.early = None
        asking = [str(p) for p in dict.fromkeys(paths) if p is not None and str(p) not in self.answers]
        blocks = [asking[start : start + _GREP_BLOCK] for start in range(0, len(asking), _GREP_BLOCK)]
        if len(blocks) > 1 and self.texts is None and _greppable(self.needles):
            # a grep process per CPU at once: each reads and compares a block of files on its own
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(len(blocks), os.cpu_count() or 1)) as pool:
                answers = list(pool.map(self._grepped, blocks))
        else:
            answers = [self._grepped(block) for block in blocks]
        for block, found in zip(blocks, answers):
            for path in block:
                self.answers[path] = path in found if found is not None else self.holds(path)
        return {str(p) for p in paths if p is not None and self.answers.get(str(p))}

    def _grepped(self, paths: list[str | None]) -> set[str] | None:
        """Which of ``paths`` hold a needle, by ``grep`` (None: read each here instead)."""
        if self.texts is not None or not _greppable(self.needles):
            return None
        files = [p for p in paths if p is not None and not p.endswith(".zst")]
        found = _grep(self.needles, files) if files else set()
        if found is None:
            return None
        for path in paths:  # a compressed file is read here
            if path is not None and path.endswith(".zst") and self.holds(path):
                found.add(path)
        return found

    def holds(self, path: str | None) -> bool:
        if path is None:
            return False
        if path in self.held and self.matching is not None:
            answer = self.matching.holds(path)  # the blocks that may hold a needle read
            return _contains(path, self.needles) if answer is None else answer
        if self.texts is not None:
            found = read_text(path, self.texts)
            if found is not None:
                return any(n in found for n in self.needles)
        return _contains(path, self.needles)

    def close(self) -> None:
        if self.early is not None:  # never asked (the run stopped before): not waited for
            self.early.cancel()
        if self.texts is not None:
            self.texts.close()


class _EarlyGrep:
    """``grep`` over ``paths`` in blocks, a process per CPU at once, started now in threads and
    answered when :meth:`answers` is asked: a cold ``--grep`` asks it of the stores' files
    while the stores are listed, which holds one CPU. A compressed file is left to be read."""

    def __init__(self, needles: tuple[bytes, ...], paths: list[str]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        files = [p for p in paths if not p.endswith(".zst")]
        self.blocks = [files[start : start + _GREP_BLOCK] for start in range(0, len(files), _GREP_BLOCK)]
        self.pool = ThreadPoolExecutor(os.cpu_count() or 1)
        self.futures = [self.pool.submit(_grep, needles, block) for block in self.blocks]

    def cancel(self) -> None:
        """The blocks not started yet are not; those started end on their own."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    def answers(self) -> dict[str, bool]:
        """Each grepped file, and whether it holds a needle (a block grep could not answer: none)."""
        found: dict[str, bool] = {}
        try:
            for block, future in zip(self.blocks, self.futures):
                holding = future.result()
                if holding is not None:
                    found.update((path, path in holding) for path in block)
        finally:
            self.pool.shutdown(cancel_futures=True)
        return found


_GREP_BLOCK = 2048  # files a grep process is given at most (their names: well under the argument limit)


def _greppable(needles: tuple[bytes, ...]) -> bool:
    """Whether ``grep -F`` can take the needles as they are: no empty one (it matches even a
    file of one empty line), no newline (two patterns), no NUL (no argument holds one)."""
    return all(needle and b"\n" not in needle and b"\0" not in needle for needle in needles)


def _grep(needles: tuple[bytes, ...], paths: list[str]) -> set[str] | None:
    """The files of ``paths`` holding one of ``needles``, ASCII letters in any case, as
    :func:`_contains` says (``grep -F -i`` in the C locale folds ASCII letters only, as
    ``bytes.lower`` does; ``-a``: NUL bytes are text; ``-D skip``: no FIFO or device is
    opened; a file that cannot be read holds none). None when there is no ``grep``, or it
    failed for another reason than a file it could not read (the files are read here then).
    ``grep`` reads at about twice the speed of Python's ``bytes.lower`` (docs/speed.md)."""
    import shutil
    import subprocess

    program = shutil.which("grep")
    if program is None:
        return None
    patterns = [arg for needle in needles for arg in (b"-e", needle)]
    try:
        done = subprocess.run(
            [program, "-l", "-i", "-F", "-a", "-s", "-D", "skip", "--null", *patterns, "--", *map(os.fsencode, paths)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "LC_ALL": "C"},
            check=False,
        )
    except OSError:
        return None
    if done.returncode == 2:  # an unreadable file, or a grep without these options: read here to be sure
        return None
    if done.returncode not in (0, 1):
        return None
    return {os.fsdecode(name) for name in done.stdout.split(b"\0") if name}


def read_text(path: str, texts: Any) -> bytes | None:
    """The file's bytes, ASCII lower-cased (as ``--grep`` compares them), added to the text
    index ``texts``; None when it cannot be read whole (too large, unreadable)."""
    from .core.zst import open_regular
    from .core.zst import open_stream
    from .grep_index import MAX_BYTES
    from .session_index import stamp

    before = stamp(path)
    try:
        with open_stream(path) if path.endswith(".zst") else open_regular(path) as stream:
            data = stream.read(MAX_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_BYTES:
        return None
    data = data.lower()
    texts.add(path, data, before)
    return data


def index_texts() -> tuple[int, int]:
    """``txcodec index --fts``: the text of every session file of the stores not held as it
    is now read into the text index (made here); the files held, and how many were read."""
    from .grep_index import GrepIndex

    paths = {r.path for r in session_files() if r.path is not None}
    texts = GrepIndex(compact=True)
    try:
        if not texts.writable:
            raise StoreError(
                "cannot be written now (another txcodec run is writing it, or its folder is read-only or full);"
                " nothing was read",
                path=texts.path,
            )
        texts.forget(paths)
        held = texts.held(paths)
        read = 0
        for path in sorted(paths - held):
            read += read_text(path, texts) is not None
        return texts.count(), read
    finally:
        texts.close()


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
