"""Small helpers shared by harness readers (``txcodec.harnesses.*.read``)."""

from __future__ import annotations

import contextlib
import mmap
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable
from collections.abc import Iterator
from operator import is_
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ..core.errors import MALFORMED
from ..core.errors import describe
from ..core.errors import guarded
from ..core.zst import read_bytes
from ..model.common import Image
from ..model.common import Message
from ..model.common import RawBlock
from ..model.common import Text
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.loss import LossReport
from ..model.loss import UnreadLoss
from ..model.native import Codec
from ..model.native import Line
from ..model.native import NativeSession
from ..model.native import Opaque
from ..model.native import decode_batches
from ..model.native import decode_document
from ..model.native import decode_session
from ..model.native import has_lone_surrogates
from ..model.native import json_source
from ..model.native import mark_cut_off
from ..model.native import plain
from ..model.native import without_lone_surrogates
from ..model.tools import tool_kind

_json = msgspec.json.Decoder()


@guarded
def load_file(path: Path, codec: Codec, harness: str) -> NativeSession:
    """A JSON Lines file of ``harness`` read as :func:`txcodec.api.load` reads one it is told
    the harness of (a session's side file, such as a Gemini subagent chat): by lines, or
    whole when its bytes are one pretty-printed document. Here, so that a reader needs no
    import of the API above it."""
    from .detect import spread_document

    data = read_bytes(path)
    if spread_document(data):
        try:
            _json.decode(json_source(data))
        except (msgspec.DecodeError, RecursionError):
            pass  # not one document after all (or nested too deeply): read it as lines
        else:
            return decode_document(data, codec, harness, path)
    return decode_session(data, codec, harness, path)


def line_dicts(session: NativeSession) -> list[tuple[int, Any]]:
    """``(line number, the line as plain JSON)``; ``None`` for a line that is not JSON.
    An unchanged line is read from its own bytes, an edited record from its re-encoding."""
    out = []
    for n, line in enumerate(session.lines, 1):
        record = line.record
        if isinstance(record, Opaque):
            raw = record.raw
        elif line.raw is not None and session.codec.decode(line.raw) == record:
            raw = line.raw
        else:
            raw = msgspec.json.encode(plain(record))
        try:
            out.append((n, _json.decode(json_source(raw))))
        except msgspec.DecodeError:
            out.append((n, None))
    return out


@contextlib.contextmanager
def malformed(loss: LossReport, file: str | None, line: int | None, what: str = "record") -> Iterator[None]:
    """Read one record (or one part of it) with this around it: a value whose shape the
    reader does not expect (a number where it reads a list, a key missing, an object
    where it wants a string) is data, not a crash. The record is reported as
    ``read:malformed`` with the reason and the reading goes on with the next one.

    Well-formed sessions never reach this: the tests read every golden and corpus file
    and assert no such entry."""
    try:
        yield
    except MALFORMED as exc:
        report_malformed(loss, file, line, exc, what)


def report_malformed(
    loss: LossReport, file: str | None, line: int | None, exc: BaseException, what: str = "record"
) -> None:
    """The entry :func:`malformed` adds, for a loop that catches ``MALFORMED`` itself
    (a ``with`` per record costs a generator per line)."""
    loss.add(
        "read:malformed", f"{what} not read, a value has an unexpected shape ({describe(exc)})", file=file, line=line
    )


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")  # one regex scan: quicker than two ``in`` tests


def report_lone_surrogates(session: NativeSession, loss: LossReport, file: str | None) -> None:
    """A line that decoded only after its lone UTF-16 surrogate escapes were replaced
    by U+FFFD (``native.repairs_surrogates``) reads differently from what it holds: say
    so, once per line."""
    if isinstance(loss, UnreadLoss):
        return
    source = session._source
    suspects = surrogate_suspects(session)
    if suspects is not None:  # only these can hold one: the file is not scanned
        lines = session.lines
        report_lone_surrogate_lines(loss, file, [i + 1 for i in suspects if read_repaired(lines[i])])
        return
    if source is not None and not may_hold_lone_surrogates(source):
        return  # the common case: one scan of the file's bytes (a pair of escapes, an emoji, is no lone one)
    report_lone_surrogate_lines(loss, file, [n for n, line in enumerate(session.lines, 1) if read_repaired(line)])


def surrogate_suspects(session: NativeSession) -> list[int] | None:
    """The indices of the only lines of ``session`` that can hold a lone surrogate
    escape (those decoded outside a whole batch, see ``native.decode_batches``) while its
    lines are still the ones decoded (the source scan assumes as much); else ``None``."""
    suspects, lines = session._surrogate_suspects, session.lines
    if (
        suspects is not None
        and len(lines) == len(session._source_lines)
        and all(map(is_, lines, session._source_lines))
    ):
        return suspects
    return None


def may_hold_lone_surrogates(source: Any) -> bool:
    """Whether any line of ``source`` (a file's bytes) can hold a lone surrogate escape."""
    return _SURROGATE_ESCAPE.search(source) is not None and has_lone_surrogates(source)


_RELEASE = 8 << 20  # a streamed file's pages are given back every 8 MiB read


def streamed_batches(data: Any, codec: Any, repaired: list[int]) -> Iterator[tuple[int, list[Line]]]:
    """A session read once, as it is decoded (``NativeSession.pending``): each batch of
    lines with the number of its first line. The last line is marked cut off when the
    data does not end in a newline; the numbers of the lines read from a copy with lone
    surrogates repaired go to ``repaired`` (only a line decoded alone can be one); and once
    a batch is read, the pages of a mapped file behind it are given back, every 8 MiB."""
    size = len(data)
    final_newline = bool(size) and data[-1] == 0x0A
    release = getattr(data, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
    released, n = 0, 0
    for batch, end, whole in decode_batches(data, codec):
        if end >= size and not final_newline:
            mark_cut_off(batch[-1])
        if not whole:
            repaired.extend(k for k, line in enumerate(batch, n + 1) if read_repaired(line))
        yield n + 1, batch
        n += len(batch)
        if release is not None and end - released >= _RELEASE:
            page = end - end % mmap.PAGESIZE
            release(mmap.MADV_DONTNEED, released, page - released)
            released = page


def read_repaired(line: Any) -> bool:
    """Whether ``line`` was decoded from a copy with its lone surrogate escapes repaired."""
    raw = line._raw
    if raw is None or isinstance(line._record, Opaque):
        return False
    raw = bytes(raw)
    return (b"\\ud" in raw or b"\\uD" in raw) and without_lone_surrogates(raw) is not None


def report_lone_surrogate_lines(loss: LossReport, file: str | None, lines: list[int]) -> None:
    for n in lines:
        loss.add("text:lone-surrogate", "a lone UTF-16 surrogate escape read as U+FFFD", file=file, line=n)


_keys = msgspec.json.Decoder(dict[str, msgspec.Raw])


def report_unknown_keys(
    session: NativeSession, loss: LossReport, file: str | None, read: Any, nested: tuple[str, ...] = ("message",)
) -> None:
    """Keys of a typed record the reader reads (its class is in ``read``), and of its
    ``nested`` objects, that the Struct does not declare: the reader cannot see them, so
    they are not carried. (A record the reader does not read at all is reported whole,
    by the reader.) One entry per record type and key, with the first line and how many
    lines hold it."""
    if isinstance(loss, UnreadLoss):
        return
    unknown = UnknownKeys(read, nested)
    add = unknown.add
    for n, line in enumerate(session.lines, 1):
        add(n, line._record, line._raw)
    unknown.report(loss, file)


class UnknownKeys:
    """:func:`report_unknown_keys` a line at a time, for a reader that reads each line as
    it is decoded and drops it (nothing is kept but the keys found)."""

    def __init__(self, read: Any, nested: tuple[str, ...] = ("message",)) -> None:
        self.read, self.nested = read, nested
        self.found: dict[tuple[str, str], list[int]] = {}
        self.probes = {cls: _probe(cls, nested) for cls in read}

    def add(self, n: int, record: Any, raw: Any) -> None:
        if raw is None or type(record) not in self.read:
            return
        probe = self.probes[type(record)]
        if probe is not None:
            try:
                probe.decode(json_source(raw))
                return  # every key declared: one scan of the line, no dict of its keys
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                pass  # an unknown key (or an odd shape): found below as ever
        try:
            keys = _keys.decode(json_source(raw))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return
        found = self.found
        tag = _tag(record)
        declared = _declared(type(record))
        for key in keys:  # in the line's order, so that a report reads the same every run
            if key not in declared:
                found.setdefault((tag, key), []).append(n)
        for name in self.nested:
            inner = getattr(record, name, None)
            if isinstance(inner, msgspec.Struct) and name in keys:
                try:
                    inner_keys = _keys.decode(keys[name])
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    continue
                declared = _declared(type(inner))
                for key in inner_keys:
                    if key not in declared:
                        found.setdefault((tag, f"{name}.{key}"), []).append(n)

    def report(self, loss: LossReport, file: str | None) -> None:
        for (tag, key), lines in sorted(self.found.items(), key=lambda kv: kv[1][0]):
            count = f" ({len(lines)} lines)" if len(lines) > 1 else ""
            loss.add(
                "field:unknown",
                f"{tag} record key {key!r}{count}: not known to the reader, not carried",
                file=file,
                line=lines[0],
            )


_probes: dict[tuple[type, tuple[str, ...]], Any] = {}


def _probe(cls: type, nested: tuple[str, ...]) -> Any:
    """A decoder that accepts a line of ``cls`` only when each of its keys, and each key
    of its ``nested`` objects, is one ``cls`` declares (any values, skipped unread):
    :class:`UnknownKeys` has nothing to find in such a line. ``None`` when ``cls`` has a
    nested field that is not exactly one Struct class (the full check then runs)."""
    key = (cls, nested)
    if key not in _probes:
        struct = _probe_struct(cls, nested)
        _probes[key] = None if struct is None else msgspec.json.Decoder(struct)
    return _probes[key]


def _probe_struct(cls: type, nested: tuple[str, ...]) -> Any:
    fields: list[tuple[str, Any]] = []  # (key, type of its value)
    for f in msgspec.structs.fields(cls):
        kind: Any = msgspec.Raw
        if f.name in nested:
            if not (isinstance(f.type, type) and issubclass(f.type, msgspec.Struct)):
                return None
            kind = _probe_struct(f.type, ())
        fields.append((f.encode_name, kind))
    tag_field = cls.__struct_config__.tag_field
    if tag_field and tag_field not in {name for name, _ in fields}:
        fields.append((tag_field, msgspec.Raw))
    names = {f"k{i}": name for i, (name, _) in enumerate(fields)}
    return msgspec.defstruct(
        f"{cls.__name__}Keys",
        [(f"k{i}", kind | UnsetType, UNSET) for i, (_, kind) in enumerate(fields)],
        rename=names,
        forbid_unknown_fields=True,
    )


def _tag(record: msgspec.Struct) -> str:
    tag = record.__struct_config__.tag
    return tag if isinstance(tag, str) else type(record).__name__


_declared_cache: dict[type, frozenset[str]] = {}


def _declared(cls: type) -> frozenset[str]:
    names = _declared_cache.get(cls)
    if names is None:
        config = cls.__struct_config__
        names = frozenset(f.encode_name for f in msgspec.structs.fields(cls)) | (
            {config.tag_field} if config.tag_field else set()
        )
        _declared_cache[cls] = names
    return names


def call_arguments(value: Any, *, empty_is_object: bool = False) -> Any:
    """A tool call's arguments, which these clients keep as a JSON string, as the value it
    encodes; a string that is not JSON stays text, any other value is kept as it is. With
    ``empty_is_object``, an empty string is no arguments: ``{}``."""
    import json  # here: the readers that never meet string arguments do not load it

    if isinstance(value, str):
        try:
            return json.loads(value) if value or not empty_is_object else {}
        except ValueError:
            return value
    return value


def chat_tool_calls(calls: Any, kinds: dict[str, str]) -> list[ToolUse]:
    """The tool uses of a Chat Completions ``tool_calls`` list (``{id, function: {name,
    arguments}}``, the arguments a JSON string), their kinds by the client's ``kinds``."""
    uses = []
    for call in calls or []:
        function = call.get("function") or {}
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        arguments = call_arguments(function.get("arguments"))
        uses.append(ToolUse(str(call.get("id") or ""), name, arguments, tool_kind(name, kinds)))
    return uses


def implied_stop(blocks: list[Any]) -> str:
    """The stop reason of an assistant message whose client records none: it stopped to
    call a tool when it holds a tool use, else it ended its turn."""
    return "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"


def url_image(url: str) -> Image:
    """An image a message part names by URL: a ``data:`` URL's base64 bytes kept inline,
    any other URL kept as the reference it is."""
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return Image(media_type=media, data=data)
    return Image(url=url)


def add_result(messages: list[Message], result: ToolResult, source_id: str | None = None) -> Message:
    """``result`` added to the user message of tool results it follows (one message answers
    a turn's calls, as the API is sent them), else to a new user message; ``source_id``, the
    id of the record it was read from, added to that message's. The message is returned."""
    last = messages[-1] if messages else None
    results = last is not None and last.role == "user" and bool(last.content)
    if results and all(isinstance(b, ToolResult) for b in last.content):
        last.content.append(result)
    else:
        last = Message("user", [result])
        messages.append(last)
    if source_id is not None:
        last.source_ids.append(source_id)
    return last


def content_blocks(content: Any, other: Callable[[str | None, Any], list[Any] | None]) -> list[Any]:
    """A message's content, a string or a list of typed parts (``{"type": ..., ...}``), as
    blocks: a ``text`` part as a Text, any other as ``other(kind, part)`` gives it, kept as a
    RawBlock where that gives None. Anything else is no content."""
    if isinstance(content, str):
        return [Text(content)] if content else []
    blocks: list[Any] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append(Text(part["text"]))
        elif (found := other(kind, part)) is not None:
            blocks += found
        else:
            blocks.append(RawBlock(str(kind), part))
    return blocks


class StreamedConversation:
    """A conversation handed on a message at a time, each once the reader holds it final
    (``Harness.read_messages``): ``show`` prints the first before the last line is read,
    and holds no more than a window of messages.

    ``meta`` is what is known so far (its title before the first message; the rest once
    ``messages`` is used up). ``messages`` yields each message with whether a compaction
    starts at it. ``tail()``, once ``messages`` is used up, is the conversation without its
    messages: meta, epochs and children."""

    def __init__(
        self,
        meta: Any,
        messages: Iterator[tuple[Message, bool]],
        tail: Callable[[], Any],
    ) -> None:
        self.meta = meta
        self.messages = messages
        self.tail = tail


class LastMessageCarryOn:
    """A :class:`~txcodec.kit.registry.CarryOn` for a reader whose every line adds messages
    or changes the last one (a tool result joining the results message before it), written
    as ``reader.step(n, value)`` for each line as plain JSON (:func:`line_dicts`) and
    ``reader.conversation``, the conversation it builds. A feed costs what its lines cost.
    With a ``window`` the messages before the last ``window`` are handed on and taken out of
    ``reader.conversation``; ``reader.handed`` counts them, so that its epochs count from
    the session's first message."""

    def __init__(
        self,
        reader: Any,
        harness: str,
        codec: Any,
        path: Any = None,
        *,
        checked: bool = False,
        window: int | None = None,
    ) -> None:
        from .conform import Fitted

        self.reader, self.harness, self.codec, self.path = reader, harness, codec, path
        # with a window, the messages before the last ``window`` are handed on (only the last
        # one changes); the reader's ``handed`` counts them (its epochs count from the start)
        self.window = None if window is None else max(1, window)
        self.lines = 0
        self.seen = 0  # the messages given by the last conversation()
        self.loss = UnreadLoss()
        self.fitted = Fitted(checked=checked)

    def feed(self, lines: list[Any]) -> None:
        step, first = self.reader.step, self.lines
        for n, value in line_dicts(NativeSession(self.harness, self.codec, lines, True, self.path)):
            step(first + n, value)
        self.lines += len(lines)

    def conversation(self) -> tuple[Any, list[int]]:
        conversation = self.reader.conversation
        count = len(conversation.messages)
        touched = set(range(max(0, self.seen - 1), count))  # the last one given may have changed
        self.seen = count
        return self.fitted.fit(conversation, touched, self.loss)

    def hand_on(self) -> list[tuple[Any, bool]]:
        messages = self.reader.conversation.messages
        count = len(messages) - self.window if self.window is not None else 0
        if count <= 0:
            return []
        gone = messages[:count]
        del messages[:count]
        first, self.reader.handed = self.reader.handed, self.reader.handed + count
        self.seen = max(0, self.seen - count)
        self.fitted.forget(count)
        starts = {e.start for e in self.reader.conversation.epochs}
        return [
            (f, first + j in starts) for j, m in enumerate(gone) if (f := self.fitted.fit_one(m, self.loss)) is not None
        ]


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_LOW = (1 << 64) - 1


class SeenIds:
    """A set of the record ids a reader has read (Claude Code's rule 1, ``(file, uuid)``),
    for a reader that keeps no more of a session than a window: a client may copy a
    record again at any distance (docs/claude_code_reader.md#streamed-reading), so every
    id is kept, but in about 16 bytes rather than a Python string's hundred and more.

    The last ``batch`` ids added are a plain set; then those that are lower-case UUIDs
    (every id Claude Code writes) become 128-bit numbers in a sorted pair of arrays (a
    *run*), the others stay strings. A bitmap of two bits per packed id, chosen by the
    string's hash, answers most look-ups of an id never seen without touching a run.
    It answers ``in`` exactly as a set of the strings would."""

    __slots__ = ("recent", "odd", "runs", "bits", "batch")

    BITS = 1 << 23  # the bitmap: 1 MiB

    BATCH = 1 << 15  # the ids kept as strings before they are packed

    def __init__(self, batch: int | None = None) -> None:
        self.recent: set[str] = set()
        self.odd: set[str] = set()  # ids that are not lower-case UUIDs, kept as they are
        self.runs: list[tuple[array, array]] = []  # (high 64 bits, low 64 bits), sorted
        self.bits = bytearray()  # made at the first packing: a short session never pays its MiB
        self.batch = batch or self.BATCH

    def __len__(self) -> int:
        return len(self.recent) + len(self.odd) + sum(len(high) for high, _ in self.runs)

    def __contains__(self, key: str) -> bool:
        if key in self.recent or key in self.odd:
            return True
        return bool(self.runs) and self._packed(key)

    def _packed(self, key: str) -> bool:
        h = hash(key)
        bits = self.bits
        one, two = h & (self.BITS - 1), (h >> 23) & (self.BITS - 1)
        if not (bits[one >> 3] >> (one & 7)) & (bits[two >> 3] >> (two & 7)) & 1:
            return False
        if _UUID.fullmatch(key) is None:
            return False
        number = int(key.replace("-", ""), 16)
        high, low = number >> 64, number & _LOW
        for highs, lows in self.runs:
            i = bisect_left(highs, high)
            while i < len(highs) and highs[i] == high:
                if lows[i] == low:
                    return True
                i += 1
        return False

    def add(self, key: str) -> None:
        recent = self.recent
        if key in self.odd or (self.runs and key not in recent and self._packed(key)):
            return  # seen: packed or kept apart
        recent.add(key)
        if len(recent) >= self.batch:
            self._pack()

    def _pack(self) -> None:
        numbers = []
        if not self.bits:
            self.bits = bytearray(self.BITS >> 3)
        bits, mask = self.bits, self.BITS - 1
        for key in self.recent:
            if _UUID.fullmatch(key) is None:
                self.odd.add(key)
                continue
            numbers.append(int(key.replace("-", ""), 16))
            h = hash(key)
            one, two = h & mask, (h >> 23) & mask
            bits[one >> 3] |= 1 << (one & 7)
            bits[two >> 3] |= 1 << (two & 7)
        self.recent = set()
        if numbers:
            numbers.sort()
            self.runs.append((array("Q", [n >> 64 for n in numbers]), array("Q", [n & _LOW for n in numbers])))
