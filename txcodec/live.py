"""Following a session while its client writes it (docs/live.md).

:func:`follow` yields what changed in a session, as Common, each time the client writes:
first the conversation so far, then an :class:`Update` naming the messages that are new
and those already seen that changed (a reply streamed as several records grows its
message; a compaction or a rewrite changes earlier ones), and a :class:`Notice` for what
happened to the file itself (cut off, replaced, deleted, a line that is not JSON).

How a store is watched is declared by its harness (``Harness.append_only``, never by
name): a JSON Lines file its client only appends to is read from a byte offset, so a look
decodes only the bytes appended since the last one, and a last line without its LF waits
for it. Any other store (a JSON document, a folder, a database) is re-read when its files'
size or time change and compared with what was seen, message by message. A database is
opened read-only, as every read of one is (no lock is held, no WAL is created).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from . import api
from .core.errors import TxcodecError
from .kit import registry
from .kit.detect import detect
from .kit.detect import is_document
from .kit.load import named_by_store
from .kit.load import split_database
from .model.common import Conversation
from .model.common import Message
from .model.common import ToolUse
from .model.loss import LossReport
from .model.native import Line
from .model.native import NativeSession
from .model.native import Opaque
from .model.native import decode_session

# the bytes read at once from a followed file: a 500 MB file is taken a block at a time,
# and a block's decoded lines are what a follow's memory peaks at (a line longer than a
# block is read whole); 1 MB: 8 MB peaked 50 MB higher, and read no faster (docs/live.md#cost)
BLOCK = 1 << 20
# a look compares the messages from this far back: a reply streamed in fragments, or a
# tool's result, changes the last few messages, never one further back (a re-read of the
# whole file compares them all)
RECENT = 8
# the bytes before the offset read again at each look, to tell a file written over in place
MARK = 64
# the messages ``show --follow`` holds where the harness's reader hands on the others (the
# window ``show`` itself reads a Claude Code session with: the same late fragments shown apart)
WINDOW = 64


class Notice(msgspec.Struct, frozen=True):
    """Something that happened to the followed file, in one line."""

    text: str


class Update(msgspec.Struct):
    """The conversation as it now stands, and which of its messages (indices) are new
    since the last update and which, seen before, changed. ``first``: the conversation so
    far, when the follow starts (or starts again after a re-read).

    A follow with a window (``Follower(window=N)``) holds only the last messages: then
    ``conversation.messages[0]`` is message ``base`` of the session, and ``passed`` are the
    messages (each with whether a compaction starts at it) that became final and left the
    window since the last update, messages ``base - len(passed)`` to ``base - 1``: shown
    once more if they changed, then forgotten. Without a window ``base`` is 0 and
    ``passed`` empty."""

    conversation: Conversation
    added: list[int]
    changed: list[int]
    first: bool = False
    base: int = 0
    passed: list[tuple[Message, bool]] = []


Event = Update | Notice


def _message_key(conv: Conversation, i: int, child_sizes: dict[str, int]) -> bytes:
    """What a message looks like, to tell whether it changed: its JSON, and how many
    messages each subagent started by one of its calls has (a subagent grows its parent's
    call)."""
    m = conv.messages[i]
    key = msgspec.json.encode(m)
    grown = [child_sizes[b.id] for b in m.content if type(b) is ToolUse and b.id in child_sizes]
    return key + repr(grown).encode() if grown else key


def _child_sizes(conv: Conversation) -> dict[str, int]:
    out: dict[str, int] = {}
    for child in conv.children:
        call = child.link.tool_use_id if isinstance(child.link.tool_use_id, str) else None
        if call is not None:
            out[call] = out.get(call, 0) + _size(child.conversation)
    return out


def _size(conv: Conversation) -> int:
    return len(conv.messages) + sum(_size(c.conversation) for c in conv.children)


class _Differ:
    """The message-level difference between one reading of a session and the next."""

    def __init__(self) -> None:
        self.keys: list[bytes] = []
        self.rest: tuple[int, ...] = ()
        self.started = False

    def update(
        self, conv: Conversation, *, everything: bool = False, touched: list[int] | None = None, passed: int = 0
    ) -> Update | None:
        """``touched``: the only messages that can have changed (a reader that carries on
        knows them); else the last few are compared, or all of them (``everything``).
        ``passed``: the messages that left the front of the window since the last update."""
        if passed:
            del self.keys[:passed]
        sizes = _child_sizes(conv)
        old, n = self.keys, len(conv.messages)
        before, first = len(old), not self.started
        if touched is not None and not first and not everything and n >= before:
            keys = old  # kept, and only the messages touched keyed again
            keys.extend([b""] * (n - before))
            changed = []
            for i in touched:
                key = _message_key(conv, i, sizes)
                if i < before and keys[i] != key:
                    changed.append(i)
                keys[i] = key
        else:
            start = 0 if everything or first else max(0, min(before, n) - RECENT)
            keys = old[:start] + [_message_key(conv, i, sizes) for i in range(start, n)]
            changed = [i for i in range(start, min(before, n)) if old[i] != keys[i]]
        added = list(range(before, n))
        self.started = True
        self.keys = keys
        # subagents with no recorded call are shown after the conversation: one that starts
        # or grows is a change too
        calls = {b.id for m in conv.messages for b in m.content if type(b) is ToolUse} if conv.children else set()
        rest = tuple(
            _size(c.conversation)
            for c in conv.children
            if not isinstance(c.link.tool_use_id, str) or c.link.tool_use_id not in calls
        )
        grew, self.rest = rest != self.rest, rest
        if first or added or changed or n < before or grew:
            return Update(conv, added, changed, first)
        return None


def _stamp(path: Path) -> tuple[Any, ...] | None:
    """What changes when a store's files are written: size, time and inode of the file
    (and of a database's WAL), or of every file in a folder."""
    try:
        if path.is_dir():
            return tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")))
        out: list[Any] = []
        for p in (path, path.with_name(path.name + "-wal")):
            try:
                st = p.stat()
            except FileNotFoundError:
                if p is path:
                    raise
                continue
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(out)
    except FileNotFoundError:
        return None


class Follower:
    """One followed session: :meth:`poll` looks once and returns what changed."""

    def __init__(
        self, path: str | os.PathLike[str], harness: str | None = None, *, stream: Any = None, window: int | None = None
    ) -> None:
        self.path = Path(path)
        self.harness = harness
        self.differ = _Differ()
        # with a window, a reader that can hands on the messages that became final, and the
        # follow forgets them (Update.base, Update.passed): its memory is that window's
        self.window = window
        self.base = 0  # the messages handed on before the conversation's first
        # a pipe (``show --follow -``: a stream-json capture as the CLI prints it): read as
        # it comes, a whole line at a time; ``closed`` once its writer is gone
        self.stream, self.pending, self.closed = stream, b"", False
        database = split_database(self.path)
        self.watched = database[0] if database is not None else self.path
        # JSON Lines a client appends to are read from an offset; the rest re-read whole
        self.tails: bool | None = None
        if database is not None or self.path.is_dir() or is_document(self.path) or self.path.suffix == ".zst":
            self.tails = False
        elif harness is not None:
            self.tails = registry.get(harness).append_only
        self.stamp: tuple[Any, ...] | None = None
        self.sides: tuple[Any, ...] | None = None
        self.missing = False
        # the tail: the file read, up to the end of its last whole line
        self.inode: int | None = None
        self.offset = 0
        self.lines: list[Line] = []
        self.mark = b""  # the last bytes read, checked each look
        self.codec: Any = None
        self.count = 0  # the lines decoded
        # the harness's reader that carries on (Harness.carry_on), fed the lines decoded and
        # holding none of them; None: the lines are held and read again at each look
        self.carry: registry.CarryOn | None = None
        self.origin: Any = None  # how the session began, read from its first lines
        self.touched: list[int] | None = None  # the messages the last look built or changed

    # --- one look ------------------------------------------------------------------
    def poll(self) -> list[Event]:
        return list(self.looks())

    def looks(self) -> Iterator[Event]:
        """One look, its events as they come: with a window, a long read (the first look at
        a large file) hands on the messages that became final a block at a time."""
        if self.stream is not None:
            yield from self._poll_stream()
            return
        events: list[Event] = []
        stamp = _stamp(self.watched)
        if stamp is None:
            if not self.missing:
                self.missing = True
                yield Notice(f"{self.path}: deleted; waiting for it to come back")
            return
        if self.missing:
            self.missing = False
            events.append(Notice(f"{self.path}: back; reading it again"))
            self.inode = -1  # whatever comes back is read from the start
        if self.tails is None:
            self._choose()
            if self.tails is None:  # no whole line yet: whose it is cannot be told
                yield from events
                return
        sides = self._side_stamp() if self.tails else None
        if stamp == self.stamp and sides == self.sides:
            yield from events
            return
        self.stamp = stamp
        side_changed, self.sides = sides != self.sides, sides
        self.touched = None
        if self.tails:
            conv, everything = yield from self._tail(events, side_changed)
        else:
            conv, everything = self._reread(events), True
        yield from events
        if conv is not None:
            update = self._update(conv, everything, [])
            if update is not None:
                yield update

    def _update(self, conv: Conversation, everything: bool, passed: list[tuple[Message, bool]]) -> Update | None:
        update = self.differ.update(conv, everything=everything, touched=self.touched, passed=len(passed))
        if not passed:
            if update is not None:
                update.base = self.base
            return update
        self.base += len(passed)
        if update is None:
            return Update(conv, [], [], base=self.base, passed=passed)
        update.base, update.passed = self.base, passed
        return update

    def _poll_stream(self) -> list[Event]:
        """What arrived on the pipe since the last look, without waiting for more."""
        import select

        fd, got, was_closed = self.stream.fileno(), [], self.closed
        while not self.closed and select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, BLOCK)
            if not chunk:
                self.closed = True
                break
            got.append(chunk)
        events = self._from_pipe(got)
        if self.closed and not was_closed:  # said after what it brought
            events.append(Notice(f"{self.path}: the input was closed"))
        return events

    def _from_pipe(self, got: list[bytes]) -> list[Event]:
        events: list[Event] = []
        if not got:
            return events
        data = self.pending + b"".join(got)
        cut = data.rfind(b"\n") + 1
        self.pending = data[cut:]  # a last line still coming waits for its LF
        if not cut:
            return events
        whole = data[:cut]
        if self.harness is None:
            self.harness = detect(whole)
        lines = self._decode(whole, events)
        self.offset += len(whole)
        if self.carry is None and not self.lines and self._carries_on():
            # its reader carries on (a stream-json capture's): fed what came, never read again
            self.carry = registry.get(self.harness).carry_on(None)  # type: ignore[arg-type,misc]
        if self.carry is not None:
            self.carry.feed(lines)
            conv, self.touched = self._carried()
        else:
            self.lines.extend(lines)
            session = NativeSession(self.harness, self.codec, list(self.lines), True, None)
            try:
                conv = api.to_common(session, LossReport())
            except (TxcodecError, ValueError) as exc:
                events.append(Notice(f"{self.path}: cannot read it into Common ({exc})"))
                return events
        if not self.closed and conv.messages and conv.messages[-1].interrupted:
            # a reply still streaming (a capture with partial messages) reads as interrupted
            # until its last event: it is shown when it ends, or when the pipe closes
            conv = msgspec.structs.replace(conv, messages=conv.messages[:-1])
        touched = None if self.touched is None else [i for i in self.touched if i < len(conv.messages)]
        update = self.differ.update(conv, touched=touched)
        if update is not None:
            events.append(update)
        return events

    def _choose(self) -> None:
        """Whether to read the file from an offset: the harness it is (named, or detected
        from its first whole lines) declares whether its client only appends."""
        name = named_by_store(self.path)
        if name is None:
            with self.path.open("rb") as file:
                head = file.read(1 << 20)
            cut = head.rfind(b"\n")
            if cut < 0:
                return
            name = detect(head[: cut + 1])
        self.harness = name
        self.tails = registry.get(name).append_only

    def _reread(self, events: list[Event]) -> Conversation | None:
        try:
            return api.to_common(api.load(self.path, self.harness), LossReport())
        except (TxcodecError, OSError, ValueError) as exc:  # half written: the next change is read again
            events.append(Notice(f"{self.path}: cannot read it now ({exc}); waiting for the next change"))
            return None

    def _side_stamp(self) -> tuple[Any, ...] | None:
        """The stamps of the session's side files (its store's ``side_files``: Claude Code's
        subagent transcripts): a subagent writes there while its parent's file is still."""
        store = registry.get(self.harness).store if self.harness else None
        if store is None or store.side_files is None:
            return None
        try:
            files = sorted(f for found in store.side_files(self.path).values() for f in found)
        except OSError:
            return None
        return tuple((str(f), _stamp(Path(f))) for f in files)

    def _restart(self) -> None:
        """Read the file again from its start."""
        self.offset, self.lines, self.count, self.carry = 0, [], 0, None
        if self.window is not None:  # what was handed on is gone: every message read again is new
            self.base, self.differ.keys = 0, []

    def _carries_on(self) -> bool:
        """Whether the harness's reader carries on here: it reads a main file alone, so not
        a session with side files (a subagent's transcript, a tool's output kept aside)."""
        return self.harness is not None and registry.get(self.harness).carry_on is not None and not self.sides

    def _tail(
        self, events: list[Event], side_changed: bool = False
    ) -> Iterator[Event]:  # and returns (the conversation or None, whether it was read again)
        everything = False
        if self.count and (self.carry is not None) != self._carries_on():
            self._restart()  # side files came (or went): the session is read the other way
            everything = True
        try:
            file = self.path.open("rb")
        except FileNotFoundError:
            return None, False
        with file:
            st = os.fstat(file.fileno())
            if self.inode is not None and (st.st_ino != self.inode or st.st_size < self.offset):
                why = "replaced" if st.st_ino != self.inode and self.inode != -1 else "cut shorter"
                if self.inode != -1:
                    events.append(Notice(f"{self.path}: {why}; reading it again from the start"))
                self._restart()
                everything = True
            if self.offset and not everything:
                # the last bytes read are still there: else the file was written over in place
                file.seek(self.offset - len(self.mark))
                if file.read(len(self.mark)) != self.mark:
                    events.append(Notice(f"{self.path}: written over; reading it again from the start"))
                    self._restart()
                    everything = True
            if not self.count and self._carries_on():
                self.carry = registry.get(self.harness).carry_on(self.path, window=self.window)  # type: ignore[union-attr]
            self.inode = st.st_ino
            grew = False
            file.seek(self.offset)
            while True:
                block = file.read(BLOCK)
                if not block:
                    break
                cut = block.rfind(b"\n")
                if cut < 0:
                    if len(block) < BLOCK:
                        break  # a last line still being written waits for its LF
                    # one line longer than a block: read on until its LF
                    more = self._long_line(file, block)
                    if more is None:
                        break
                    block, cut = more, len(more) - 1
                whole = block[: cut + 1]
                lines = self._decode(whole, events)
                if self.carry is None:
                    self.lines.extend(lines)
                else:
                    if self.origin is None:  # how the session began: its first lines say
                        self.origin = self._origin(lines)
                    self.carry.feed(lines)  # and not held: the reader keeps what it needs
                self.offset += len(whole)
                self.mark = whole[-MARK:]
                grew = True
                file.seek(self.offset)
                passed = self.carry.hand_on() if self.carry is not None else []
                if passed:  # shown now and forgotten, before the rest of the file is read
                    yield from events
                    events.clear()
                    conv, self.touched = self._carried()
                    update = self._update(conv, everything, passed)
                    everything = False
                    if update is not None:
                        yield update
        if not grew and not everything and not side_changed:
            return None, False
        if self.carry is not None:
            conv, self.touched = self._carried()
            return conv, everything
        name = self.harness or "jsonl"
        session = NativeSession(name, self.codec, list(self.lines), True, self.path)
        try:
            return api.to_common(session, LossReport()), everything
        except (TxcodecError, ValueError) as exc:
            events.append(Notice(f"{self.path}: cannot read it into Common ({exc})"))
            return None, everything

    def _carried(self) -> tuple[Conversation, list[int]]:
        conv, touched = self.carry.conversation()  # type: ignore[union-attr]
        meta = conv.meta
        if self.origin is not None and meta.started_by is msgspec.UNSET:  # as api.to_common adds it
            if self.origin.started_by is not None:
                meta.started_by = self.origin.started_by
            if self.origin.forked_from is not None:
                meta.forked_from = self.origin.forked_from
        return conv, touched

    @staticmethod
    def _long_line(file: Any, block: bytes) -> bytes | None:
        parts = [block]
        while True:
            more = file.read(BLOCK)
            if not more:
                return None
            parts.append(more)
            if b"\n" in more:
                data = b"".join(parts)
                return data[: data.rfind(b"\n") + 1]

    def _decode(self, data: bytes, events: list[Event]) -> list[Line]:
        """Decode the whole lines appended (and only those)."""
        if self.codec is None:
            self.codec = registry.get(self.harness or "jsonl").codec
        part = decode_session(data, self.codec, self.harness or "jsonl", self.path)
        first = self.count + 1
        for n, line in enumerate(part.lines, first):
            record = line.peek
            if type(record) is Opaque and record.type is None:
                raw = record.raw
                why = "a run of NUL bytes" if b"\x00" in raw else record.diagnostic
                events.append(Notice(f"{self.path}: line {n}: {why}; skipped"))
        self.count += len(part.lines)
        return part.lines

    def _origin(self, lines: list[Line]) -> Any:
        from .lineage import session_origin

        name = self.harness or "jsonl"
        return session_origin(NativeSession(name, self.codec, lines, True, self.path))


# --- waiting for a change ----------------------------------------------------------------

# the longest watchfiles waits at once: the caller then looks again (an idle timer, a
# deleted file coming back in a folder not yet there) as a poll would
WAKE = 0.5


def watched_folder(path: Path) -> Path:
    """The folder to watch for a followed path: its own folder (a file is replaced, and
    its side files and a database's WAL sit beside it), the nearest that exists."""
    folder = path if path.is_dir() else path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


class Changes:
    """Waiting for files to change: with ``watchfiles`` installed (the serve extra), the
    operating system's notifications wake the wait as soon as a file under ``folders``
    changes; without it, the wait is a sleep and the caller polls (``stat`` at each look).
    ``use``: force one way (None: watchfiles when it can be imported)."""

    def __init__(self, folders: list[Path], *, use: bool | None = None) -> None:
        self.stop: Any = None
        self.events: Iterator[Any] | None = None
        if use is False or not folders:
            return
        try:
            import threading

            import watchfiles
        except ImportError:
            if use:
                raise TxcodecError("watching files needs watchfiles: pip install 'txcodec[serve]'") from None
            return
        self.stop = threading.Event()
        self.events = watchfiles.watch(
            *folders,
            watch_filter=None,  # a session file under .git or named like a backup still counts
            debounce=100,  # what one write brings comes at once; a file written on and on is seen every 0.1 s
            step=20,
            stop_event=self.stop,
            rust_timeout=int(WAKE * 1000),
            yield_on_timeout=True,
            raise_interrupt=True,  # Ctrl-C ends the wait as it ends a sleep
        )

    @property
    def notified(self) -> bool:
        """Whether the wait is woken by notifications (watchfiles), not a sleep."""
        return self.events is not None

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` (at most about a second with notifications) for a change;
        whether one was seen (always False when polling: the caller looks anyway)."""
        if self.events is None:
            time.sleep(seconds)
            return False
        deadline = time.monotonic() + seconds
        while True:
            got = next(self.events, None)
            if got:
                return True
            if got is None or time.monotonic() >= deadline:
                return False

    def close(self) -> None:
        if self.events is not None:
            self.stop.set()
            self.events.close()  # type: ignore[attr-defined]
            self.events = None


def follow(
    path: str | os.PathLike[str],
    harness: str | None = None,
    *,
    idle: float | None = None,
    interval: float = 0.2,
    sleep: Callable[[float], None] = time.sleep,
    stream: Any = None,
    notify: bool | None = None,
    window: int | None = None,
) -> Iterator[Event]:
    """The session at ``path`` as it is written: the conversation so far, then each
    change, until it has been idle (nothing written) for ``idle`` seconds (never when
    None). With ``watchfiles`` installed (``notify`` None or True) a look follows each
    change the operating system reports in the session's folder; without it (or
    ``notify=False``) a look every ``interval`` seconds costs a ``stat`` when nothing
    changed. ``stream``: a pipe to read instead of a file (``path`` then only names it),
    followed until it is closed. ``window``: hold only about that many messages where the
    harness's reader can hand on the others (:class:`Update`: ``base`` and ``passed``)."""
    follower = Follower(path, harness, stream=stream, window=window)
    changes = Changes([] if stream is not None else [watched_folder(follower.watched)], use=notify)
    last = time.monotonic()
    try:
        while True:
            spent, started = 0.0, time.process_time()
            for event in follower.looks():
                spent += time.process_time() - started  # the look's own cost, not its printing
                if type(event) is Update:
                    last = time.monotonic()
                yield event
                started = time.process_time()
            spent += time.process_time() - started
            if follower.closed or (idle is not None and time.monotonic() - last >= idle):
                return
            # a look that cost more than the interval (a session read again whole) is followed
            # by a wait of twice its cost, so that the follow never takes more than a third of a
            # CPU; a reader that carries on costs what was appended, and is not held back (the
            # first look at a large file does not delay the next)
            pause = 2 * spent if follower.carry is None else 0.0
            if not changes.notified:
                sleep(max(interval, pause))
                continue
            if pause > 0.01:
                sleep(pause)
            left = None if idle is None else idle - (time.monotonic() - last)
            changes.wait(WAKE if left is None else max(0.0, min(WAKE, left)))
    finally:
        changes.close()


# --- the sessions being written now (``txcodec watch``) ---------------------------------


class Active(msgspec.Struct):
    """A session written to lately: what ``txcodec watch`` shows of it."""

    harness: str
    session_id: str
    path: str
    project: str
    title: str
    last_activity: float  # when its files last changed (seconds since the epoch)
    running: str | None  # the tool called last that has no result yet
    tokens: int
    cost: float | None  # dollars, where the price table knows every model


def _running(conv: Conversation) -> str | None:
    from .model.common import ToolResult

    answered = {b.tool_use_id for m in conv.messages for b in m.content if type(b) is ToolResult}
    for m in reversed(conv.messages):
        for b in reversed(m.content):
            if type(b) is ToolUse:
                return None if b.id in answered else b.name
    return None


class Watcher:
    """The sessions of every store (one harness's, one root) whose files changed in the
    last ``within`` seconds, each followed as :class:`Follower` does while it stays so."""

    def __init__(self, harness: str | None = None, root: Any = None, within: float = 600.0) -> None:
        self.harness, self.root, self.within = harness, root, within
        self.followed: dict[str, tuple[Follower, Active | None]] = {}

    def folders(self) -> list[Path]:
        """The store folders that exist, to watch for changes (:class:`Changes`)."""
        if self.root is not None:
            roots = [Path(self.root)]
        else:
            names = [self.harness] if self.harness else list(registry.harnesses())
            roots = []
            for name in names:
                store = registry.get(name).store
                if store is not None:
                    try:
                        roots.append(Path(store.default_root()))
                    except (OSError, TxcodecError, TypeError):
                        continue
        return sorted({r for r in roots if r.is_dir()})

    def look(self) -> list[Active]:
        from . import sessions
        from .usage import model_cost
        from .usage import session_usage

        now = time.time()
        out = []
        seen = set()
        for row in sessions.discover(self.harness, root=self.root, details=False):
            if not row.path or row.parent is not None:
                continue
            try:
                changed = os.stat(row.path).st_mtime
            except OSError:
                continue
            if now - changed > self.within:
                continue
            path = f"{row.path}#{row.session_id}" if row.path.endswith(".db") else row.path
            seen.add(path)
            follower, last = self.followed.get(path) or (Follower(path, row.harness), None)
            conv = None
            for event in follower.poll():
                if type(event) is Update:
                    conv = event.conversation
            if conv is not None:
                usage = session_usage(conv)
                costs = [model_cost(u) for u in usage]
                last = Active(
                    harness=row.harness,
                    session_id=row.session_id,
                    path=row.path,
                    project=row.project or "",
                    title=row.label or (conv.meta.title if isinstance(conv.meta.title, str) else ""),
                    last_activity=changed,
                    running=_running(conv),
                    tokens=sum(u.total_tokens + u.unverified_total_tokens for u in usage),
                    cost=sum(c for c in costs if c is not None) if costs and None not in costs else None,
                )
            elif last is not None:
                last.last_activity = changed
            self.followed[path] = (follower, last)
            if last is not None:
                out.append(last)
        for gone in set(self.followed) - seen:
            del self.followed[gone]
        out.sort(key=lambda a: a.last_activity, reverse=True)
        return out
