"""A Claude Code session read a message at a time (``Harness.read_messages``): the whole-file
reader (:mod:`.read`) run over the lines as they are decoded, handing on each message once
no line that usually follows can change it (docs/claude_code_reader.md#streamed-reading).

:class:`MessageStream` takes numbered lines from anywhere (a file decoded a batch at a time
here; the lines appended to a followed file in :mod:`txcodec.live`) and gives back the
messages that became final. It holds a window of the last :data:`WINDOW` messages: a
call's fragments and its tool results, and a command and its output, arrive within a few
messages of each other. A fragment or result arriving later than that starts a message of
its own and is named in the loss report (``stream:late``); the whole-file reader would have
joined it to the earlier one.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from ...kit.read import SeenIds
from ...kit.read import StreamedConversation
from ...kit.read import report_lone_surrogate_lines
from ...model.common import Command
from ...model.common import Conversation
from ...model.common import Message
from ...model.common import ToolUse
from ...model.loss import LossReport
from ...model.loss import UnreadLoss
from ...model.native import Line
from ...model.native import NativeSession
from .codec import CODEC
from .read import HARNESS
from .read import _FileReader
from .read import _keep_nothing
from .read import _sidechain_in_main
from .records import AssistantRecord

WINDOW = 64  # messages held back before they are handed on


class MessageStream(_FileReader):
    """The reader of one file, fed numbered lines; hands on messages as they become final."""

    def __init__(
        self, session: NativeSession, loss: LossReport, file: str, tool_results: dict[str, Path], window: int = WINDOW
    ):
        super().__init__(session, loss, file, tool_results)
        self.window = max(1, window)
        self.sealed: set[str] = set()  # message ids of calls handed on
        # rule 1 reaches any distance back (a client copies records again: see the docs), so
        # every uuid is kept, packed: about 16 bytes each, not a string's hundred
        self.seen = SeenIds()
        self.epoch_starts: set[int] = set()
        self.handlers = {**self.handlers, AssistantRecord: MessageStream.assistant}

    def feed(self, lines: Iterable[tuple[int, Line]]) -> list[tuple[Message, bool]]:
        """Read ``lines``; the messages now final, each with whether a compaction starts at it."""
        super().feed(lines)
        return self._hand_on(len(self.messages) - self.window)

    def close(self) -> list[tuple[Message, bool]]:
        """The end of the lines: every message still held, and the conversation's tail."""
        self.final = self.finish()  # its epochs counted before the last messages are handed on
        self.last_call = None
        return self._hand_on(len(self.messages))

    def assistant(self, rec: Any, n: int) -> None:
        key = rec.message.id
        if key in self.sealed:
            self.lose("stream:late", f"a fragment of message {key} after it was handed on: shown apart", n)
            self.sealed.discard(key)
        super().assistant(rec, n)

    def _hand_on(self, count: int) -> list[tuple[Message, bool]]:
        messages = self.messages
        held = (self.last_call.message, self.last_call.results) if self.last_call is not None else ()
        out: list[tuple[Message, bool]] = []
        for i, msg in enumerate(messages[: max(count, 0)]):
            # the current call can still grow: it and what follows wait, up to a bound counted
            # from the call (a first look at a long file hands on many messages at once)
            if any(msg is h for h in held) and len(messages) - i <= 4 * self.window:
                break
            out.append((msg, self.base + len(out) in self._starts()))
            if msg.role == "assistant":
                self._seal_call(msg)
            elif any(type(b) is Command for b in msg.content):  # its output, if later, is shown apart
                done = {id(b) for b in msg.content if type(b) is Command}
                self.commands = {k: c for k, c in self.commands.items() if id(c) not in done}
        if out:
            del messages[: len(out)]
            self.base += len(out)
        return out

    def _starts(self) -> set[int]:
        if len(self.epoch_starts) != len(self.epochs):
            self.epoch_starts = {e.start for e in self.epochs}
        return self.epoch_starts

    def _seal_call(self, msg: Message) -> None:
        """Forget the call behind ``msg``: its usage is settled now (rule 4), and its tool ids
        no longer take results into it."""
        key = next((k for k, c in self.calls.items() if c.message is msg), None)
        if key is None:
            return
        call = self.calls.pop(key)
        if isinstance(msg.id, str) and self.add_loss is not _keep_nothing:  # only the loss report names a late one
            self.sealed.add(msg.id)
        self.settle([call])
        for block in msg.content:
            if type(block) is ToolUse:
                self.owner.pop(block.id, None)


_TITLE = re.compile(rb'"type"\s*:\s*"(custom-title|agent-name|summary)"')
_TITLE_KEYS = {b"custom-title": "customTitle", b"agent-name": "agentName", b"summary": "summary"}


def _title(data: Any) -> Any:
    """The title the whole-file reader settles on (docs/claude_code_reader.md#titles), found
    before reading: the lines holding a title record's tag, decoded alone."""
    found: dict[bytes, str] = {}
    for match in _title_tags(data):
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.end())
        try:
            value = msgspec.json.decode(data[start : end if end >= 0 else len(data)])
        except msgspec.DecodeError:
            continue
        tag = match.group(1)
        if not isinstance(value, dict) or value.get("type") != tag.decode():
            continue
        text = value.get(_TITLE_KEYS[tag])
        if isinstance(text, str) and not (tag == b"summary" and tag in found):  # the first summary, the last rename
            found[tag] = text
    for tag in (b"custom-title", b"agent-name", b"summary"):
        if tag in found:
            return found[tag]
    return UNSET


def title_of_file(path: Path) -> Any:
    """:func:`_title` of the file at ``path`` as it is now (UNSET when it cannot be read):
    the heading of a follow that hands on messages before it has read the whole file."""
    try:
        with path.open("rb") as file:
            if not path.stat().st_size:
                return UNSET
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _title(data)
    except (OSError, ValueError):
        return UNSET


def _title_tags(data: Any) -> Iterator[re.Match]:
    return _tags(data, _TITLE)


def _tags(data: Any, pattern: re.Pattern) -> Iterator[re.Match]:
    """The matches of ``pattern`` in ``data``, searched a block at a time; the pages of a
    mapped file are given back behind each block, so that the search holds no more of it
    than a block."""
    release = getattr(data, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
    size, start = len(data), 0
    while start < size:
        end = min(start + _BLOCK, size)
        for match in pattern.finditer(data, start, min(end + _OVERLAP, size)):
            if match.start() < end:
                yield match
        if release is not None and end < size:
            page = end - end % mmap.PAGESIZE
            low = start - start % mmap.PAGESIZE
            if page > low:
                release(mmap.MADV_DONTNEED, low, page - low)
        start = end


def _has_sidechains(data: Any) -> bool:
    """Whether the whole-file reader may set sidechain records apart (a client before
    2.0.28 wrote a subagent's records into the main file: ``read._sidechain_in_main``): by
    the client version of the first lines, else by a search for ``"isSidechain": true``, a
    block at a time as :func:`_title_tags` searches."""
    found = _VERSION.search(data, 0, min(len(data), 1 << 20))
    if found is not None:
        return _sidechain_in_main(found.group(1).decode("utf-8", "replace"))
    return any(True for _ in _tags(data, _SIDECHAIN))


_VERSION = re.compile(rb'"version"\s*:\s*"([^"]*)"')
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
_BLOCK = 16 << 20
_OVERLAP = 64  # longer than any tag the pattern matches


def read_messages(session: NativeSession, loss: LossReport, window: int = WINDOW) -> StreamedConversation | None:
    """``session`` (loaded undecoded: ``kit.load.load_once``) a message at a time, or None
    when it is not read that way: its lines already decoded, or subagent files beside it
    (their calls are joined by what the whole file says)."""
    data = session.pending
    if data is None:
        return None
    tool_results: dict[str, Path] = {}
    files = None
    if session.path is not None:
        from .sidefiles import session_files

        files = session_files(Path(session.path))
        if files.agents or files.journals:
            return None
        tool_results = {p.name: p for p in files.tool_results}
    name = str(session.path) if session.path else "<bytes>"
    reader = MessageStream(session, loss, name, tool_results, window)
    if _has_sidechains(data):  # an old client's sidechain records: joined by the whole file (read.attach_sidechains)
        return None
    reader.meta.title = _title(data)

    def messages() -> Iterator[tuple[Message, bool]]:
        keep = reader.add_loss is not _keep_nothing
        for batch in reader.batches(keep):
            yield from reader.feed(batch)
            if reader.meta.id is UNSET and session.path is not None:
                reader.meta.id = session.path.name.removesuffix(".jsonl")  # as read_file names it, until a line does
        yield from reader.close()

    def tail() -> Conversation:
        reader.unknown.report(loss, name)
        if files is not None:
            for refused in files.refused:
                loss.add(
                    "side-file:symlink-outside",
                    f"{refused} is a symlink out of the session folder; not read",
                    file=name,
                )
            for agent_id, spawn in reader.spawns.items():  # as attach_children says of a session without agents
                loss.add(
                    "subagent:dangling-agent-id",
                    f"toolUseResult.agentId {agent_id} has no transcript",
                    file=name,
                    line=spawn.line,
                )
            for path in files.orphan_metas:
                loss.add("subagent:meta-without-transcript", "agent sidecar whose transcript is absent", file=str(path))
        report_lone_surrogate_lines(loss, name if session.path is not None else None, reader.repaired)
        return Conversation(meta=reader.meta, messages=[], epochs=reader.final.epochs)

    return StreamedConversation(reader.meta, messages(), tail)


# --- a reader that carries on (Harness.carry_on, txcodec.live) -------------------------


class CarryOn:
    """The main file of a session read as its client appends to it: the reader's state
    (the calls whose fragments and results may still come, the commands whose output may
    still come, the boundaries waiting for their summary) is kept between feeds, so a feed
    costs what its lines cost. Subagents are not read here (their side files are followed
    by re-reading the session).

    With a ``window`` the reader is :class:`~.stream.MessageStream`, as ``show`` reads a
    session: it holds the last ``window`` messages (and the call still open) and hands on
    the others, final, as ``show`` prints them (:meth:`hand_on`)."""

    def __init__(self, path: str | Path | None = None, window: int | None = None) -> None:
        from ...kit.conform import Fitted

        name = str(path) if path is not None else "<bytes>"
        self.path = Path(path) if path is not None else None
        tool_results: dict[str, Path] = {}
        if self.path is not None:
            from .sidefiles import session_files

            tool_results = {p.name: p for p in session_files(self.path).tool_results}
        session = NativeSession(HARNESS, CODEC, [], True, self.path)
        self.loss = UnreadLoss()  # a follow shows the conversation, not what it lost
        self.stream: Any = None
        self.opening_title: Any = UNSET
        if window is None:
            self.reader = _FileReader(session, self.loss, name, tool_results)
        else:
            self.reader = self.stream = MessageStream(session, self.loss, name, tool_results, window)
            # the title show's heading gives, found before the first message is handed on
            self.opening_title = title_of_file(self.path) if self.path is not None else UNSET
        self.reader.touched, self.reader.touched_calls = [], []
        self.lines = 0
        self.index: dict[int, int] = {}  # id(message) -> its index from the start, for the messages changed
        self.indexed = 0  # the messages indexed so far (from the start)
        self.new_from = 0  # the first message built since the last conversation() (from the start)
        self.passed: list[tuple[Message, bool]] = []  # handed on, not yet taken by hand_on()
        self.fitted = Fitted(checked=True)  # read_unshared

    def feed(self, lines: list[Line]) -> None:
        first = self.lines + 1
        self.lines += len(lines)
        if self.stream is None:
            self.reader.feed(enumerate(lines, first))
            return
        gone = self.stream.feed(enumerate(lines, first))
        index = self.index
        for message, _ in gone:  # their ids may be given to new objects once they are dropped
            index.pop(id(message), None)
        self.passed += gone

    def hand_on(self) -> list[tuple[Message, bool]]:
        passed, self.passed = self.passed, []
        if passed:
            self.fitted.forget(len(passed))
        return [(f, compacted) for m, compacted in passed if (f := self.fitted.fit_one(m, self.loss)) is not None]

    def conversation(self) -> tuple[Conversation, list[int]]:
        reader = self.reader
        messages = reader.messages
        base = reader.base
        index = self.index
        for i in range(max(self.indexed, base), base + len(messages)):
            index[id(messages[i - base])] = i
        self.indexed = base + len(messages)
        calls, reader.touched_calls = reader.touched_calls or [], []
        reader.settle(calls)
        touched = {index[id(m)] - base for m in reader.touched or () if index.get(id(m), -1) >= base}
        touched.update(range(max(self.new_from, base) - base, len(messages)))
        reader.touched, self.new_from = [], base + len(messages)
        conversation = reader.snapshot()
        if self.opening_title is not UNSET:  # once: the heading
            conversation.meta.title, self.opening_title = self.opening_title, UNSET
        trailing = reader.trailing_context()
        if trailing is not None:  # shown as the whole-file reader ends, never kept: a result may still join it
            conversation.messages = [*messages, trailing]
            touched.add(len(messages))
        if conversation.meta.id is UNSET and self.path is not None:
            conversation.meta.id = self.path.name.removesuffix(".jsonl")
        return self.fitted.fit(conversation, touched, self.loss)


def carry_on(path: str | Path | None = None, window: int | None = None) -> CarryOn:
    return CarryOn(path, window)
