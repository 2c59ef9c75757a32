"""Token usage: per session and model, and as a report over files, folders and stores.

A call's usage is the one the reader kept: its last fragment's in line order, and only
when the call reported a ``stop_reason`` (docs/claude_code_reader.md#provider-calls). Calls are summed
(one Common assistant message is one call); fragments never are.

A call that never reported a ``stop_reason`` is not silently zero: its last fragment's
usage (``Message.usage_unverified``) is summed in separate ``unverified_*`` counters.
Claude Code before 2.1.220 wrote ``stop_reason: null`` on nearly every fragment, so on
such files every call lands there; docs/usage.md says what those numbers are worth.

Two ways to the same numbers: :func:`session_usage` from a Common conversation, and the
report (:func:`usage`), which reads a harness's files with its lean decode of only the
fields usage needs where it declares one (``Harness.usage``: Claude Code's, Codex's),
falls back to Common for anything else, and spreads files over processes.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import msgspec
from msgspec import UNSET

from .core.errors import InputError

if TYPE_CHECKING:  # (imported where used: reading a file's usage builds no Common)
    from .model.common import Conversation
    from .model.common import Usage

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
GROUP_KEYS = ("session", "day", "week", "month", "model", "project", "harness")


class ModelUsage(msgspec.Struct):
    session: str
    model: str
    calls: int = 0  # every call of this model, whatever its usage
    calls_unverified: int = 0  # no stop_reason: counted in unverified_* below
    calls_without_usage: int = 0  # no usage block at all
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    unverified_input_tokens: int = 0
    unverified_output_tokens: int = 0
    unverified_cache_creation_input_tokens: int = 0
    unverified_cache_read_input_tokens: int = 0
    # reasoning/thought tokens, where the harness records them (inside output_tokens)
    reasoning_output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def unverified_total_tokens(self) -> int:
        return sum(getattr(self, "unverified_" + f) for f in TOKEN_FIELDS)

    def to_dict(self) -> dict:
        return {
            **msgspec.to_builtins(self),
            "total_tokens": self.total_tokens,
            "unverified_total_tokens": self.unverified_total_tokens,
        }


def with_unverified(row: ModelUsage) -> ModelUsage:
    """The row with its unverified counts folded into the verified ones: what a tool that
    does not gate on ``stop_reason`` (ccusage) reports. Old Claude Code sessions keep all
    their usage in ``usage_unverified``; summing ``Message.usage`` alone gives 0."""
    out = msgspec.structs.replace(row, calls_unverified=0)
    for f in TOKEN_FIELDS:
        setattr(out, f, getattr(row, f) + getattr(row, "unverified_" + f))
        setattr(out, "unverified_" + f, 0)
    return out


def message_usage(message: Any, *, unverified: bool = True) -> Usage | None:
    """A Common message's usage: ``Message.usage``, else (unless ``unverified=False``)
    ``Message.usage_unverified``, the usage of a call that never reported a
    ``stop_reason``; ``None`` when it has neither."""
    if message.usage is not UNSET:
        return message.usage
    if unverified and message.usage_unverified is not UNSET:
        return message.usage_unverified
    return None


def total_usage(conv: Conversation, *, unverified: bool = True, subagents: bool = True) -> Usage:
    """The conversation's tokens, each call once (subagents included unless
    ``subagents=False``), unverified usage folded in unless ``unverified=False``."""
    from .model.common import Usage

    rows = session_usage(conv, subagents=subagents)
    total = Usage()
    for row in rows:
        r = with_unverified(row) if unverified else row
        total = total + Usage(r.input_tokens, r.output_tokens, r.cache_creation_input_tokens, r.cache_read_input_tokens)
    reasoning = sum(r.reasoning_output_tokens for r in rows)
    if reasoning:
        total.reasoning_output_tokens = reasoning
    return total


# --- from Common --------------------------------------------------------------------------


def _conversations(conv: Conversation) -> Iterable[Conversation]:
    yield conv
    for child in conv.children:
        yield from _conversations(child.conversation)


def _tokens(u: Usage) -> tuple[int, int, int, int]:
    return (u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)


def common_calls(conv: Conversation, *, subagents: bool = True) -> list[list]:
    """The conversation's provider calls in the lean readers' shape: ``[id, model,
    timestamp, tokens | None, verified, reasoning]``; synthetic messages are no calls, and
    a compaction's own model call is its summary's usage (Codex)."""
    out = []
    for c in _conversations(conv) if subagents else (conv,):
        for m in c.messages:
            call = (m.role == "assistant" and not m.synthetic) or (m.compact_summary and m.usage is not UNSET)
            if not call:
                continue
            ts = m.timestamp if isinstance(m.timestamp, str) else None
            model = m.model if isinstance(m.model, str) else None
            mid = m.id if isinstance(m.id, str) else None
            if m.usage is not UNSET:
                r = m.usage.reasoning_output_tokens
                out.append([mid, model, ts, _tokens(m.usage), True, r if isinstance(r, int) else None])
            elif m.usage_unverified is not UNSET:
                out.append([mid, model, ts, _tokens(m.usage_unverified), False, None])
            else:
                out.append([mid, model, ts, None, True, None])
    return out


def _count(row: ModelUsage, call: list) -> None:
    row.calls += 1
    tokens = call[3]
    if tokens is None:
        row.calls_without_usage += 1
        return
    if call[4]:
        row.input_tokens += tokens[0]
        row.output_tokens += tokens[1]
        row.cache_creation_input_tokens += tokens[2]
        row.cache_read_input_tokens += tokens[3]
        if call[5]:
            row.reasoning_output_tokens += call[5]
    else:
        row.calls_unverified += 1
        row.unverified_input_tokens += tokens[0]
        row.unverified_output_tokens += tokens[1]
        row.unverified_cache_creation_input_tokens += tokens[2]
        row.unverified_cache_read_input_tokens += tokens[3]


def _unique(calls: Iterable[list]) -> Iterator[list]:
    """Each call once, whatever files its id reaches (docs/usage.md#the-rule)."""
    seen: set[str] = set()
    for call in calls:
        mid = call[0]
        if mid is not None:
            if mid in seen:
                continue
            seen.add(mid)
        yield call


def session_usage(conv: Conversation, *, subagents: bool = True) -> list[ModelUsage]:
    """One row per model, the subagents' calls included unless ``subagents=False``."""
    session = conv.meta.id if conv.meta.id is not UNSET else "?"
    rows: dict[str, ModelUsage] = {}
    for call in _unique(common_calls(conv, subagents=subagents)):
        model = call[1] or "?"
        row = rows.get(model)
        if row is None:
            row = rows[model] = ModelUsage(session, model)
        _count(row, call)
    return sorted(rows.values(), key=lambda r: r.model)


# --- one session file, the fast way -------------------------------------------------------


class NotASession(InputError):
    """A file no harness recognizes (empty, or no known session format)."""


class FileUsage(msgspec.Struct):
    """One session file's calls (subagents included), ready to group."""

    path: str
    harness: str
    session: str
    cwd: str | None
    calls: list[list]


_SPLIT_BYTES = 128 << 20  # a file this large is read by several processes (below, forking costs what it saves)


def lean_reader(harness: str | None) -> Any:
    """The harness's declared lean usage pass (``Harness.usage``), or None when its files
    are read through Common."""
    if harness is None:
        return None
    from .kit import registry

    found = registry.find(harness)
    lean = found.usage if found is not None else None
    return lean if lean is not None and lean.file_calls is not None else None


def _lean(
    path: Path, data: bytes | None, harness: str | None, subagents: bool
) -> tuple[str | None, str | None, list[list]] | None:
    """The file's (session, cwd, calls) by the harness's lean pass, its subagents'
    calls included; None when it has none or the file needs the full reader."""
    lean = lean_reader(harness)
    if lean is None:
        return None
    found = False
    if lean.calls_of_parts is not None and data is None and path.suffix != ".zst" and _size(path) >= _SPLIT_BYTES:
        found = _split(path, lean)
    if found is False:
        found = _each_piece(path, data, lean.file_calls)
    if found is None or not subagents or lean.subagent_files is None:
        return found
    agents = lean.subagent_files(path)
    if not agents:
        return found
    session, cwd, calls = found
    for transcript in agents:
        try:
            child = _each_piece(transcript, None, lean.file_calls)
        except OSError:
            return None  # the full reader reports it
        if child is None:
            return None
        calls.extend(child[2])
    return session, cwd, calls


def _split(path: Path, lean: Any) -> Any:
    """A large file's calls, its parts (cut at line ends) read by one process each; the
    harness's rules then run over the parts' lines in order. ``False`` when this process
    may not start others (it is itself a worker, or the platform cannot fork)."""
    import multiprocessing

    jobs = os.cpu_count() or 1
    if jobs < 2 or multiprocessing.parent_process() is not None:
        return False
    try:
        multiprocessing.get_context("fork")
    except ValueError:
        return False
    from .core.forking import forked_map

    ranges = _line_ranges(path, jobs)
    try:
        parts = forked_map(_wanted_part, [(lean.wanted_lines, str(path), a, b) for a, b in ranges], len(ranges))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return lean.calls_of_parts(parts)


def _line_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of about equal size that start at a line start."""
    size = _size(path)
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, parts):
            f.seek(max(size * k // parts, cuts[-1]))
            pos = f.tell()
            while block := f.read(1 << 16):
                nl = block.find(b"\n")
                if nl >= 0:
                    pos += nl + 1
                    break
                pos += len(block)
            if cuts[-1] < pos < size:
                cuts.append(pos)
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


def _wanted_part(job: tuple[Callable[[Any], list], str, int, int]) -> list:
    return _wanted_range(*job)


def _wanted_range(wanted: Callable[[Any], list], path: str, start: int, end: int) -> list:
    with open(path, "rb", buffering=0) as f:
        return wanted(line_blocks(f, start, end))


_BLOCK = 1 << 20  # small enough to stay in the CPU's cache between the read and the decode
_spare: list[bytearray] = []  # buffers line_blocks reuses: a store's thousands of small files need no new memory each


def line_blocks(f: Any, start: int = 0, end: int | None = None) -> Iterator[memoryview]:
    """The file's bytes from ``start`` up to ``end`` in blocks of whole lines (the last
    may lack its LF), read into a reused buffer: each block is a view that is only
    valid until the next one is asked for, so a reader decodes it before asking. A
    line longer than the buffer gets a larger one. Memory stays flat and nothing is
    copied twice, whatever the file's size."""
    if start:
        f.seek(start)
    left = None if end is None else end - start
    try:
        buf = _spare.pop()
    except IndexError:  # none spare (or another thread took the last one)
        buf = bytearray(_BLOCK)
    keep = 0  # bytes of an unfinished line at the buffer's start
    try:
        while True:
            want = len(buf) - keep if left is None else min(len(buf) - keep, left)
            got = f.readinto(memoryview(buf)[keep : keep + want]) if want > 0 else 0
            if left is not None:
                left -= got
            filled = keep + got
            if not got:
                if filled:
                    yield memoryview(buf)[:filled]
                return
            cut = buf.rfind(b"\n", 0, filled) + 1
            if cut == 0:  # no line ends here yet
                if filled == len(buf):
                    bigger = bytearray(2 * len(buf))
                    bigger[:filled] = buf
                    buf = bigger
                keep = filled
                continue
            yield memoryview(buf)[:cut]
            keep = filled - cut
            if keep:
                buf[:keep] = buf[cut:filled]  # same length: the buffer is never resized under a view
    finally:
        if len(buf) <= 8 * _BLOCK:  # a buffer grown for a huge line is let go
            _spare.append(buf)


def _each_piece(path: Path, data: bytes | None, reader: Callable[[Any], Any]) -> Any:
    """``reader`` over the file's bytes, read a piece at a time unless already in memory
    (or compressed): usage's memory stays flat whatever the file's size."""
    if data is not None or path.suffix == ".zst":
        from .core.zst import read_bytes

        return reader(data if data is not None else read_bytes(path))
    from .core.zst import open_regular

    with open_regular(path, buffering=0) as f:  # a FIFO or a device raises (docs/guarantees.md#limits)
        return reader(line_blocks(f))


def file_usage(path: str | os.PathLike[str], harness: str | None = None, *, subagents: bool = True) -> FileUsage:
    """The calls of the session file at ``path`` (its harness detected when not named).
    A harness's lean pass reads its files where it has one (``Harness.usage``); anything
    it does not cover, and every other harness, is read through Common. Raises InputError for a file no
    harness recognizes."""
    from .kit.detect import is_document

    path = Path(path)
    try:
        found = None
        if not is_document(path):
            if harness is None:
                harness = _detect_head(path)
            found = _lean(path, None, harness, subagents)
        if found is not None:
            session, cwd, calls = found
            return FileUsage(str(path), harness, session or _stem(path), cwd, calls)
        from . import api  # the Common path: other harnesses, and what the lean pass leaves

        native = api.load(path, harness)
        if harness is None and native.harness == "jsonl":
            raise NotASession(f"{path}: no known session format; name its harness with --from")
        conv = api.to_common(native)
    except InputError:
        raise
    except (ValueError, msgspec.MsgspecError) as exc:  # a codec's or reader's complaint: name the file
        raise InputError(str(exc) if str(exc).startswith(f"{path}:") else f"{path}: {exc}") from exc
    meta = conv.meta
    session = meta.id if isinstance(meta.id, str) else "?"
    cwd = meta.cwd if isinstance(meta.cwd, str) else None
    return FileUsage(str(path), native.harness, session, cwd, common_calls(conv, subagents=subagents))


def _detect_head(path: Path) -> str:
    """The harness of a JSONL file, from its head only (detection never reads the
    whole file, and the lean pass decodes every line once)."""
    from .kit.detect import detect  # not api: usage of a file needs no more

    if path.suffix == ".zst":
        from .core.zst import read_bytes

        head = read_bytes(path)
    else:
        from .core.zst import open_regular

        with open_regular(path) as f:
            head = f.read(1 << 20)
            while b"\n" not in head and (more := f.read(1 << 20)):  # a first line over 1 MB
                head += more
            if f.read(1):  # more follows: detect from whole lines only
                head = head[: head.rfind(b"\n") + 1] or head
    harness = detect(head)
    if harness == "jsonl":
        what = "empty file" if not head.strip() else "no known session format in its first lines"
        raise NotASession(f"{path}: {what}; name its harness with --from")
    return harness


def _stem(path: Path) -> str:
    return path.name.removesuffix(".zst").removesuffix(".jsonl")


# --- the report ---------------------------------------------------------------------------

_N = 12  # counters of a cell, in ModelUsage's order from ``calls`` on
_COUNTERS = tuple(ModelUsage.__struct_fields__[2:])


class UsageRow(msgspec.Struct, omit_defaults=True):
    """One row of a usage report: the group's keys (those grouped by), its counters, and
    its cost in US dollars (of the calls whose model has a known price)."""

    harness: str | None = None
    session: str | None = None
    path: str | None = None
    project: str | None = None
    day: str | None = None
    week: str | None = None
    month: str | None = None
    model: str | None = None
    calls: int = 0
    calls_unverified: int = 0
    calls_without_usage: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    unverified_input_tokens: int = 0
    unverified_output_tokens: int = 0
    unverified_cache_creation_input_tokens: int = 0
    unverified_cache_read_input_tokens: int = 0
    reasoning_output_tokens: int = 0
    cost_usd: float | None = 0.0  # of the calls whose model has a price; None: none has
    cost_complete: bool = True  # False when some call's model has no known price

    total_tokens = ModelUsage.total_tokens
    unverified_total_tokens = ModelUsage.unverified_total_tokens

    def to_dict(self) -> dict:
        out = {k: v for k, v in msgspec.structs.asdict(self).items() if v is not None or k == "cost_usd"}
        return {**out, "total_tokens": self.total_tokens, "unverified_total_tokens": self.unverified_total_tokens}


class UsageReport(msgspec.Struct):
    """What :func:`usage` found: rows grouped as asked, their totals, the models no price
    is known for, and the files that could not be read (one line each)."""

    by: list[str]
    rows: list[UsageRow]
    totals: UsageRow
    unpriced: list[str]
    errors: list[str]
    prices: str | None  # where the prices came from, None when no price table is installed
    # one line per file whose calls were already counted in another (a converted copy)
    copies: list[str] = msgspec.field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "by": self.by,
            "rows": [r.to_dict() for r in self.rows],
            "totals": self.totals.to_dict(),
            "unpriced_models": self.unpriced,
            "prices": self.prices,
            "copies": self.copies,
            "errors": self.errors,
        }


_day_cache: dict[str, str] = {}
_zone: Any = None  # the zone whose days a report counts (None: the system's); workers inherit it


def _use_zone(where: Any) -> None:
    global _zone
    if where is not _zone:
        _zone = where
        _day_cache.clear()
        _moments.clear()


def local_day(ts: str | None) -> str | None:
    """The calendar day of an ISO timestamp in the report's zone (``None`` when it is none)."""
    if not ts:
        return None
    key = ts[:16] + ts[-6:]  # same minute, same zone: same day
    day = _day_cache.get(key)
    if day is None:
        try:
            moment = datetime.fromisoformat(ts)
        except ValueError:
            return None
        if moment.tzinfo is not None:
            moment = moment.astimezone(_zone)
        day = _day_cache[key] = moment.date().isoformat()
    return day


def call_instant(ts: str | None) -> int | None:
    """A call's timestamp as whole milliseconds since the epoch (a time without a zone is
    UTC, as the writers that drop it mean it): the same call keeps its instant whatever
    format a conversion wrote it in (``...Z``, ``+00:00``, microseconds)."""
    if not ts:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


Cells = dict[tuple[str, str | None], list[int]]


class Marks(msgspec.Struct, gc=False):
    """A file's marked calls: each counted call with an instant and a model, which a copy
    may share. Grouped by model: ``instants`` (ms since the epoch, each once) and, per
    instant, seven integers in ``rest``: the index of its day in ``days``, its kind
    (:data:`_NONE`, :data:`_VERIFIED`, :data:`_UNVERIFIED`, or :data:`_AMBIGUOUS` when two
    calls of the model share the millisecond: no mark can tell them apart), its four token
    counts and its reasoning tokens. Flat integer arrays: a worker hands them back, and the
    index keeps them, as bytes."""

    days: list[str | None]
    models: list[str]
    instants: list[array]  # array('q') per model
    rest: list[array]  # array('q') per model, 7 per instant
    ambiguous: list[list[int]]  # per model, its instants of kind _AMBIGUOUS

    def one(self, g: int, p: int) -> tuple[tuple[str, str | None], list[int]]:
        """The cell and counters of model ``g``'s ``p``-th mark (not an ambiguous one)."""
        at = 7 * p
        didx, kind, a, b, cw, cr, r = self.rest[g][at : at + 7]
        one = [1] + [0] * (_N - 1)
        if kind == _NONE:
            one[2] = 1
        elif kind == _VERIFIED:
            one[3:7] = (a, b, cw, cr)
            one[11] = r
        else:
            one[1] = 1
            one[7:11] = (a, b, cw, cr)
        return (self.models[g], self.days[didx]), one


_NONE, _VERIFIED, _UNVERIFIED, _AMBIGUOUS = 0, 1, 2, 3
_EMPTY = (0, 0, 0, 0)


_moments: dict[str, tuple[str | None, int | None]] = {}  # a call's timestamp -> its day and instant


def _moment(ts: str) -> tuple[str | None, int | None]:
    """The report-zone day and the instant (:func:`call_instant`) of a timestamp, kept for
    the run (one look-up per call). A worker keeps its own; bounded: past 262,144
    timestamps (a home of that many calls, each at its own time) it starts again."""
    if len(_moments) >= 1 << 18:
        _moments.clear()
    found = _moments[ts] = (local_day(ts), call_instant(ts))
    return found


def _add_call(cells: Cells, key: tuple[str, str | None], kind: int, tokens: Sequence[int], reasoning: int) -> None:
    c = cells.get(key)
    if c is None:
        c = cells[key] = [0] * _N
    c[0] += 1
    if kind == _NONE:
        c[2] += 1
    elif kind == _VERIFIED:
        c[3] += tokens[0]
        c[4] += tokens[1]
        c[5] += tokens[2]
        c[6] += tokens[3]
        c[11] += reasoning
    else:
        c[1] += 1
        c[7] += tokens[0]
        c[8] += tokens[1]
        c[9] += tokens[2]
        c[10] += tokens[3]


def _cells(fu: FileUsage) -> tuple[Cells, Cells, Marks | None]:
    """The file's counters per (model, local day), each call once (:func:`_unique`,
    inlined: this runs once per call of a whole store); the part of them no mark covers;
    and each counted call's mark (its instant and model) with its own counters: a session
    converted by txcodec keeps both, so the report finds the copy's calls in the original
    (docs/usage.md#converted-sessions)."""
    cells: Cells = {}
    unmarked: Cells = {}
    groups: dict[str, tuple[dict[int, int], list[int], list[int]]] = {}  # model -> positions, rest, ambiguous
    day_at: dict[str | None, int] = {}
    seen: set[str] = set()
    moments = _moments
    for mid, model, ts, tokens, verified, reasoning in fu.calls:
        if mid is not None:
            if mid in seen:
                continue
            seen.add(mid)
        if ts:
            moment = moments.get(ts)
            if moment is None:
                moment = _moment(ts)
            day, instant = moment
        else:
            day = instant = None
        key = (model or "?", day)
        c = cells.get(key)
        if c is None:
            c = cells[key] = [0] * _N
        c[0] += 1
        if tokens is None:
            kind = _NONE
            tokens = _EMPTY
            reasoning = 0
            c[2] += 1
        elif verified:
            kind = _VERIFIED
            reasoning = reasoning or 0
            c[3] += tokens[0]
            c[4] += tokens[1]
            c[5] += tokens[2]
            c[6] += tokens[3]
            c[11] += reasoning
        else:
            kind = _UNVERIFIED
            reasoning = 0
            c[1] += 1
            c[7] += tokens[0]
            c[8] += tokens[1]
            c[9] += tokens[2]
            c[10] += tokens[3]
        if instant is None or not model:
            _add_call(unmarked, key, kind, tokens, reasoning)
            continue
        g = groups.get(model)
        if g is None:
            g = groups[model] = ({}, [], [])
        positions = g[0]
        p = positions.get(instant)
        if p is None:
            didx = day_at.get(day)
            if didx is None:
                didx = day_at[day] = len(day_at)
            positions[instant] = len(positions)
            g[1].extend((didx, kind, *tokens, reasoning))
            continue
        # two calls of one model in one millisecond: both (and any more) count unmarked
        rest, at = g[1], 7 * p
        if rest[at + 1] != _AMBIGUOUS:
            first = rest[at : at + 7]
            _add_call(unmarked, (model, list(day_at)[first[0]]), first[1], first[2:6], first[6])
            rest[at + 1] = _AMBIGUOUS
            g[2].append(instant)
        _add_call(unmarked, key, kind, tokens, reasoning)
    if not groups:
        return cells, unmarked, None
    return (
        cells,
        unmarked,
        Marks(
            list(day_at),
            list(groups),
            [array("q", g[0]) for g in groups.values()],
            [array("q", g[1]) for g in groups.values()],
            [g[2] for g in groups.values()],
        ),
    )


def _read_one(job: tuple[str, str | None, bool, bool, bool]) -> tuple[Any, ...]:
    """A worker's share: one file's identity, cells, unmarked cells and marks, packed as
    the index keeps them (bytes cross to the parent process far faster than objects, and
    are written as they are), or its error line (``None`` for a file found in a folder
    that is no session); last, when asked (``job[4]``), the file's stamp taken before it
    was read (:func:`_file_stamp`). :func:`_unpacked` makes them objects again."""
    from .core.errors import TxcodecError

    path, harness, subagents, explicit, stamp_it = job
    stamp = None
    if stamp_it:
        lean = lean_reader(harness)
        stamp = _file_stamp(Path(path), lean, subagents) if lean is not None else None
    try:
        fu = file_usage(path, harness, subagents=subagents)
    except NotASession as exc:
        return (path, None, str(exc) if explicit else None, None, None, stamp)
    except (OSError, ValueError, TxcodecError, msgspec.MsgspecError) as exc:
        return (path, None, str(exc) if str(exc).startswith(path) else f"{path}: {exc}", None, None, stamp)
    try:
        cells, unmarked, marks = _cells(fu)
        blobs = (_cells_blob(cells), _cells_blob(unmarked), _marks_blob(marks))
    except OverflowError:  # kept as 64-bit integers, which no count a client writes comes near
        return (path, None, f"{path}: a token count past 2**63, which is no count of tokens", None, None, stamp)
    return (path, (fu.harness, fu.session, fu.cwd), *blobs, stamp)


def _unpacked(result: tuple) -> tuple:
    path, ident, cells, unmarked, marks, _stamp = result
    if ident is None:
        return (path, ident, cells, unmarked, marks)
    return (path, ident, _cells_of(cells), _cells_of(unmarked), _marks_of(marks))


def _in_range(day: str | None, since: str | None, until: str | None) -> bool:
    return (since is None and until is None) or not (day is None or (since and day < since) or (until and day > until))


def _within(result: tuple, since: str | None, until: str | None) -> tuple:
    """A read file's cells, unmarked cells and marks of the days in [since, until]."""
    if (since is None and until is None) or result[1] is None:
        return result
    path, ident, cells, unmarked, marks = result
    cells = {key: c for key, c in cells.items() if _in_range(key[1], since, until)}
    unmarked = {key: c for key, c in unmarked.items() if _in_range(key[1], since, until)}
    if marks is not None:
        keep_day = [_in_range(day, since, until) for day in marks.days]
        kept = Marks(marks.days, [], [], [], [])
        for model, instants, rest, ambiguous in zip(marks.models, marks.instants, marks.rest, marks.ambiguous):
            if all(keep_day[rest[7 * p]] for p in range(len(instants))):
                kept_instants, kept_rest = instants, rest
            else:
                wanted = [p for p in range(len(instants)) if keep_day[rest[7 * p]]]
                if not wanted:
                    continue
                kept_instants = array("q", [instants[p] for p in wanted])
                kept_rest = array("q")
                for p in wanted:
                    kept_rest.extend(rest[7 * p : 7 * p + 7])
            kept.models.append(model)
            kept.instants.append(kept_instants)
            kept.rest.append(kept_rest)
            gone = set(instants) - set(kept_instants) if kept_instants is not instants else ()
            kept.ambiguous.append([i for i in ambiguous if i not in gone])
        marks = kept if kept.models else None
    return (path, ident, cells, unmarked, marks)


def _drop_copies(results: list[tuple], stamps: Sequence[str | None] | None = None) -> list[str]:
    """Count each model call once across files: a call whose mark (instant and model) is
    in several files counts in the one written first (the oldest file: a conversion writes
    its copy after the session it copies), and comes off the others' cells. Returns one
    line per file that held copies (docs/usage.md#converted-sessions). A file's age is its
    modification time (ns), from its stamp in ``stamps`` (:func:`_file_stamp`) where given.

    Set operations do the finding: the marks two files share, then, file by file from the
    oldest, which of its shared marks an older file holds (its copies) and which it is the
    first to hold. Only the calls that change a file's cells cost Python steps: the copies
    taken off, or, when most of a file's calls are copies, the calls it keeps added to its
    unmarked part."""
    sets: list[list[set[int]] | None] = [None] * len(results)
    seen: dict[str, set[int]] = {}
    dup: dict[str, set[int]] = {}
    for i, result in enumerate(results):
        marks = result[4]
        if marks is None:
            continue
        mine = sets[i] = []
        for model, instants in zip(marks.models, marks.instants):
            s = set(instants)
            mine.append(s)
            known = seen.get(model)
            if known is None:
                seen[model] = set(s)
                continue
            both = known & s
            if both:
                dup.setdefault(model, set()).update(both)
            known |= s
    mtimes: dict[int, tuple[int, str, int]] = {}

    def age(i: int) -> tuple[int, str, int]:
        if i not in mtimes:
            stamp = stamps[i] if stamps is not None else None
            when = int(stamp.split("|", 2)[1].split(":")[1]) if stamp else _mtime_ns(results[i][0])
            mtimes[i] = (when, results[i][0], i)
        return mtimes[i]

    skipped: dict[int, tuple[int, set[int]]] = {}
    if dup:
        holders = [
            i
            for i, mine in enumerate(sets)
            if mine is not None
            and any(
                (d := dup.get(model)) is not None and not d.isdisjoint(s)
                for model, s in zip(results[i][4].models, mine)
            )
        ]
        owner: dict[str, dict[int, int]] = {}
        claimed: dict[str, set[int]] = {}
        skip: dict[str, set[int]] = {}  # marks whose first holder holds them ambiguously: never taken
        for i in sorted(holders, key=age):
            marks, mine = results[i][4], sets[i]
            taken_here: list[tuple[int, set[int]]] = []
            origins: set[int] = set()
            for g, (model, s) in enumerate(zip(marks.models, mine)):
                d = dup.get(model)
                if d is None:
                    continue
                shared = s & d
                if not shared:
                    continue
                had = claimed.setdefault(model, set())
                new = shared - had
                if new:
                    owner.setdefault(model, {}).update(dict.fromkeys(new, i))
                    had |= new
                    ambiguous = set(marks.ambiguous[g])
                    if ambiguous:
                        skip.setdefault(model, set()).update(new & ambiguous)
                taken = shared - new
                if taken and model in skip:
                    taken -= skip[model]
                if taken and marks.ambiguous[g]:
                    taken.difference_update(marks.ambiguous[g])
                if taken:
                    mark_owner = owner[model]
                    origins.update({mark_owner[m] for m in taken})
                    taken_here.append((g, taken))
            if taken_here:
                _take(results, i, taken_here, mine)
                skipped[i] = (sum(len(t) for _, t in taken_here), origins)
    # a copy whose format keeps no instant or model marks no call: a conversion keeps the
    # session's id where the target allows, so its unmarked calls are matched by that id
    # in an older file of another harness (its origin)
    by_id: dict[str, list[int]] = {}
    for i, result in enumerate(results):
        if result[1] is not None and result[1][1] not in (None, "?"):
            by_id.setdefault(result[1][1], []).append(i)
    for files in by_id.values():
        if len({results[i][1][0] for i in files}) < 2:
            continue
        first = min(files, key=age)
        for i in files:
            if results[i][1][0] == results[first][1][0]:
                continue
            n = 0
            for key, left in results[i][3].items():
                if left[0] > 0:
                    n += left[0]
                    cell = results[i][2][key]
                    for k, value in enumerate(left):
                        cell[k] -= value
                    if not cell[0]:
                        del results[i][2][key]
            if n:
                count, origins = skipped.get(i, (0, set()))
                origins.add(first)
                skipped[i] = (count + n, origins)
    lines = []
    for i, (n, origins) in sorted(skipped.items()):
        where = ", ".join(sorted(results[j][0] for j in origins))
        lines.append(f"{results[i][0]}: {n} call{'s' if n != 1 else ''} already counted in {where}")
    return lines


def _take(results: list[tuple], i: int, taken: list[tuple[int, set[int]]], sets: list[set[int]]) -> None:
    """Take file ``i``'s copies (``taken``: per model index, the instants counted in an older
    file) off its cells. When they are most of its marks, its cells are made again from its
    unmarked part and the marks it keeps instead (``sets``: each model's instants). The
    cells keep their order either way, so dollars add up in one order."""
    path, ident, cells, unmarked, marks = results[i]
    n_taken = sum(len(t) for _, t in taken)
    n_marks = sum(len(instants) for instants in marks.instants)
    if 2 * n_taken <= n_marks:
        new = {key: list(c) for key, c in cells.items()}
        for g, gone in taken:
            instants = marks.instants[g]
            at = dict(zip(instants, range(len(instants))))
            for instant in gone:
                key, one = marks.one(g, at[instant])
                cell = new[key]
                for k, value in enumerate(one):
                    cell[k] -= value
    else:
        new = {key: list(c) for key, c in unmarked.items()}
        gone_of = dict(taken)
        for g, instants in enumerate(marks.instants):
            left = sets[g].difference(gone_of.get(g, ()), marks.ambiguous[g])
            if not left:
                continue
            for p, instant in enumerate(instants):
                if instant not in left:
                    continue
                key, one = marks.one(g, p)
                cell = new.get(key)
                if cell is None:
                    new[key] = one
                else:
                    for k, value in enumerate(one):
                        cell[k] += value
    kept = {key: new[key] for key in cells if key in new and new[key][0]}
    results[i] = (path, ident, kept, unmarked, marks)


def _mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 1 << 62  # let the reader report it: the newest


# --- from the session index ---------------------------------------------------------------

_pack = msgspec.msgpack.Encoder().encode
_unpack = msgspec.msgpack.decode


def _marks_blob(marks: Marks | None) -> bytes | None:
    if marks is None:
        return None
    return _pack(
        [
            marks.days,
            marks.models,
            [a.tobytes() for a in marks.instants],
            [a.tobytes() for a in marks.rest],
            marks.ambiguous,
        ]
    )


def _marks_of(blob: bytes | None) -> Marks | None:
    if blob is None:
        return None
    days, models, instants, rest, ambiguous = _unpack(blob)
    out = Marks(days, models, [], [], ambiguous)
    for raw in instants:
        a = array("q")
        a.frombytes(raw)
        out.instants.append(a)
    for raw in rest:
        a = array("q")
        a.frombytes(raw)
        out.rest.append(a)
    if len(out.instants) != len(models) or len(out.rest) != len(models) or len(ambiguous) != len(models):
        raise ValueError("a damaged row")
    if any(len(r) != 7 * len(i) for i, r in zip(out.instants, out.rest)):
        raise ValueError("a damaged row")
    return out


def _cells_of(blob: bytes) -> Cells:
    return {(m, d): c for m, d, c in _unpack(blob)}


def _cells_blob(cells: Cells) -> bytes:
    return _pack([[m, d, c] for (m, d), c in cells.items()])


def _file_stamp(path: Path, lean: Any, subagents: bool) -> str | None:
    """What keeps a file's kept usage valid: its size, mtime and inode, and those of the
    subagent files counted with it (their set included); None when a file cannot be stat'ed."""
    try:
        st = os.stat(path)
        stamp = f"{'s' if subagents else 'm'}|{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
        for p in lean.subagent_files(path) if subagents and lean.subagent_files is not None else ():
            st = os.stat(p)
            stamp += f"|{p.name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    except OSError:
        return None
    return stamp


def _indexed_results(
    work: list[tuple[Path, str | None, bool]],
    subagents: bool,
    since: str | None,
    until: str | None,
    jobs: int | None,
    zone: str,
) -> tuple[list[tuple], list[str]]:
    """:func:`_run` and :func:`_drop_copies` with the session index: a file of a harness with
    a lean usage pass is read only when it (or a subagent file) changed since it was kept
    (its cells, unmarked cells and marks are kept in its row); while no file of the run
    changed, the last report's deduped cells are used as they are. Same results as without
    the index (tests/features/test_usage_index.py)."""
    import threading

    from .session_index import UsageIndex

    idx = UsageIndex()
    writer: threading.Thread | None = None
    try:
        # nothing kept (a first run): no stamp is taken before the reading, the workers take
        # each file's as they read it
        cold = idx.usage_empty()
        stamps: list[str | None] = [None] * len(work)
        rows: dict[str, tuple[Any, ...]] = {}
        if not cold:
            leans: dict[str | None, Any] = {}
            for i, (path, harness, _explicit) in enumerate(work):
                lean = leans[harness] if harness in leans else leans.setdefault(harness, lean_reader(harness))
                stamps[i] = _file_stamp(path, lean, subagents) if lean is not None else None
            kept = idx.usage_last(_digest(work, stamps, zone, since, until, subagents))
            if kept is not None and all(s is not None for s in stamps):
                try:
                    done = _unpack(kept)
                    return [(p, tuple(ident), _cells_of_list(c), {}, None) for p, ident, c in done[0]], done[1]
                except (msgspec.DecodeError, ValueError, TypeError):
                    pass  # read as if it were not kept
            rows = idx.usage_rows()
            if rows:  # forget the files gone (a file of another run that still exists is kept)
                inrun = {str(job[0]) for job in work}
                idx.usage_forget([p for p in rows if p not in inrun and not os.path.exists(p)])
        results: list[Any] = [None] * len(work)
        todo = []
        for i, ((path, harness, _explicit), stamp) in enumerate(zip(work, stamps)):
            row = rows.get(str(path)) if stamp is not None else None
            if row is not None and row[0] == stamp and row[1] == zone and row[2] == harness:
                try:
                    results[i] = (
                        str(path),
                        (harness, row[3], row[4]),
                        _cells_of(row[5]),
                        _cells_of(row[6]),
                        _marks_of(row[7]),
                    )
                    continue
                except (msgspec.DecodeError, ValueError, TypeError):
                    pass  # read again
            todo.append(i)
        rows.clear()
        if todo:
            read = _run(
                [(str(work[i][0]), work[i][1], subagents, work[i][2], cold) for i in todo],
                jobs,
                [_size(work[i][0]) for i in todo],
            )
            if cold:
                for i, result in zip(todo, read):
                    stamps[i] = result[5]
            # the rows are written by a thread of their own (SQLite's work lets go of the GIL)
            # while this one unpacks them and counts the copies
            if idx.usable():
                writer = threading.Thread(target=_keep, args=(None, read, [stamps[i] for i in todo], zone))
                writer.start()
            for i, result in zip(todo, read):
                results[i] = _unpacked(result)
        results = [_within(r, since, until) for r in results]
        copies = _drop_copies(results, stamps)
        if writer is not None:
            writer.join()
            writer = None
        _keep_last(idx, _digest(work, stamps, zone, since, until, subagents), stamps, results, copies)
        return results, copies
    finally:
        if writer is not None:
            writer.join()
        idx.close()


def _digest(
    work: list[tuple[Path, str | None, bool]],
    stamps: list[str | None],
    zone: str,
    since: str | None,
    until: str | None,
    subagents: bool,
) -> str:
    """What a report's kept result (``usage_last``) is for: its files, their stamps and its options."""
    import hashlib

    return hashlib.sha256(
        _pack([zone, since, until, subagents, [[str(job[0]), job[1], s] for job, s in zip(work, stamps)]])
    ).hexdigest()


def _cells_of_list(cells: list) -> Cells:
    return {(m, d): c for m, d, c in cells}


def _keep(idx: Any, results: list[tuple], stamps: list[str | None], zone: str) -> None:
    """Write the files just read (whole, every day; as :func:`_read_one` packs them) to the
    index, in one transaction (``idx`` None: through a connection of its own, for a thread)."""
    new = [
        (path, stamp, zone, *ident, cells, unmarked, marks)
        for (path, ident, cells, unmarked, marks, _stamp), stamp in zip(results, stamps)
        if stamp is not None and ident is not None
    ]
    if not new:
        return
    if idx is not None:
        idx.usage_put(new)
        return
    from .session_index import UsageIndex

    own = UsageIndex()
    try:
        own.usage_put(new)
    finally:
        own.close()


def _keep_last(idx: Any, digest: str, stamps: list[str | None], results: list[tuple], copies: list[str]) -> None:
    """Keep the report's deduped cells for a run over the same unchanged files (files left
    with no cell add nothing to a report, and are not kept)."""
    if all(s is not None for s in stamps) and all(r[1] is not None for r in results):
        done = [[r[0], list(r[1]), [[m, d, c] for (m, d), c in r[2].items()]] for r in results if r[2]]
        idx.usage_put([], (digest, _pack([done, copies])))


def store_files(harness: str | None = None) -> list[tuple[Path, str]]:
    """Every main session file of every store (or one harness's), with its harness:
    the stores ``txcodec list`` reads, at their default roots. Subagent transcripts are
    read with their session, not on their own."""
    from .kit import registry

    names = [harness] if harness else sorted(registry.harnesses())
    found: list[tuple[Path, str]] = []
    for name in names:
        store = registry.get(name).store
        if store is None:
            continue
        root = store.default_root()
        if not root.is_dir():
            continue
        if store.main_files is not None:  # a store that can list them without reading any
            paths = store.main_files(root)
        else:
            paths = [Path(s.path) for s in store.discover(root) if getattr(s, "path", None)]
        found.extend((p, name) for p in paths)
    return found


_SESSION_SUFFIXES = (".jsonl", ".json", ".jsonl.zst", ".json.zst")


def folder_files(folder: Path) -> list[Path]:
    """Session files under ``folder``, recursively, but those a store says are none of
    their own (``Store.not_a_session``: side files, a subagent's transcript read with its
    session)."""
    from .kit import registry

    stores = [
        h.store for h in registry.builtins().values() if h.store is not None and h.store.not_a_session is not None
    ]
    out = []
    for p in sorted(folder.rglob("*")):
        if not p.name.endswith(_SESSION_SUFFIXES) or not p.is_file():
            continue
        if not any(store.not_a_session(p, folder) for store in stores):
            out.append(p)
    return out


def _jobs_for(
    paths: Sequence[str | os.PathLike[str]] | None, harness: str | None
) -> list[tuple[Path, str | None, bool]]:
    """``(file, harness, named by the user)`` for each file to read."""
    if not paths:
        return [(p, h, False) for p, h in store_files(harness)]
    out: list[tuple[Path, str | None, bool]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend((f, harness, False) for f in folder_files(p))
        else:
            out.append((p, harness, True))
    return out


def _week(day: str) -> str:
    d = date.fromisoformat(day)
    return (d - timedelta(days=d.weekday())).isoformat()  # the Monday that starts its ISO week


def _project(cwd: str | None) -> str | None:
    if not cwd:
        return None
    return cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or cwd


def usage(
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    by: Sequence[str] = ("session", "model"),
    since: str | date | None = None,
    until: str | date | None = None,
    project: str | None = None,
    harness: str | None = None,
    subagents: bool = True,
    jobs: int | None = None,
    prices: bool = True,
    timezone: str | None = None,
    index: bool = False,
) -> UsageReport:
    """Token usage (and cost) of session files, folders (recursively), or with no
    ``paths`` every store, grouped ``by`` any of session, day, week, month, model,
    project, harness. ``since``/``until`` keep calls of those days in ``timezone`` (an IANA
    name or ``UTC``; None: the system's), written as :mod:`txcodec.core.dates` says (a date,
    ``today``, an age such as ``"7d"``); ``project`` keeps sessions whose folder is named so (or whose
    cwd contains it); ``harness`` keeps one harness. Files are read by ``jobs``
    processes (default: the CPU count). A file that cannot be read is an error line in
    the report, not an exception. ``index``: files whose harness has a lean usage pass are
    taken from the session index (:class:`~txcodec.session_index.UsageIndex`) while they are
    unchanged; the report is the same."""
    by = list(by)
    if harness is not None:
        from .kit import registry

        harness = registry.canonical(harness)
    for key in by:
        if key not in GROUP_KEYS:
            raise InputError(f"cannot group by {key!r}; choose from {', '.join(GROUP_KEYS)}")
    from .core import dates

    where = dates.zone(timezone)
    _use_zone(where)
    lo = (since if isinstance(since, date) else dates.parse_day(since, tz=where)).isoformat() if since else None
    hi = (until if isinstance(until, date) else dates.parse_day(until, tz=where)).isoformat() if until else None
    from .core.gcpause import no_cycle_collection

    # a home's calls are millions of small objects and no cycle: the collector would only
    # scan them again and again (in the workers too, forked with it paused)
    with no_cycle_collection():
        work = _jobs_for(paths, harness)
        if lo is not None and not paths:  # a store file untouched since before ``since`` holds no later call
            floor = datetime.fromisoformat(lo).timestamp() - 86400
            work = [job for job in work if _mtime(job[0]) >= floor]
        if index and (not paths or harness is not None):  # files named alone are read: no index to open
            results, copies = _indexed_results(work, subagents, lo, hi, jobs, str(where))
        else:
            results = _run(
                [(str(p), h, subagents, explicit, False) for p, h, explicit in work],
                jobs,
                [_size(job[0]) for job in work],
            )
            results = [_within(_unpacked(r), lo, hi) for r in results]
            copies = _drop_copies(results)
    groups: dict[tuple, list] = {}  # the group's keys -> [counters, dollars, every call priced]
    models_cost: dict[str, Any] = {}
    errors: list[str] = []
    rates = _Prices() if prices else None
    by_day = bool({"day", "week", "month"} & set(by))
    weeks: dict[str, str] = {}
    for path, ident, cells, _unmarked, _marks in results:
        if ident is None:
            if cells is not None:
                errors.append(cells)
            continue
        fharness, session, cwd = ident
        if harness is not None and fharness != harness:
            continue
        proj = _project(cwd)
        if project is not None and project != proj and (cwd is None or project not in cwd):
            continue
        keys = {"harness": fharness, "session": session, "project": proj or "?"}
        for (model, day), counters in cells.items():
            keys["model"] = model
            if by_day:
                keys["day"] = day or "?"
                keys["month"] = day[:7] if day else "?"
                keys["week"] = (weeks.get(day) or weeks.setdefault(day, _week(day))) if day else "?"
            wanted = tuple([(k, keys[k]) for k in by])
            if "session" in by:
                wanted += (("path", path),)
            group = groups.get(wanted)
            if group is None:
                group = groups[wanted] = [[0] * _N, None, True]
            total = group[0]
            for i, value in enumerate(counters):
                total[i] += value
            cost = rates.cost(model, counters) if rates is not None else None
            if cost is None:  # as _add_cost: a part without a price leaves the row incomplete
                group[2] = False
            else:
                group[1] = (group[1] or 0.0) + cost
            models_cost.setdefault(model, cost)
    rows = sorted(
        (
            UsageRow(**dict(wanted), **dict(zip(_COUNTERS, total)), cost_usd=dollars, cost_complete=complete)
            for wanted, (total, dollars, complete) in groups.items()
        ),
        key=lambda r: tuple(str(getattr(r, k)) for k in by),
    )
    totals = UsageRow(cost_usd=None if rows else 0.0)
    _add_counters(totals, [sum(column) for column in zip(*(group[0] for group in groups.values()))])
    for row in rows:  # dollars in the rows' order, as they are shown
        _add_cost(totals, row.cost_usd)
        totals.cost_complete = totals.cost_complete and row.cost_complete
    unpriced = sorted(m for m, c in models_cost.items() if c is None) if rates is not None else []
    source = None
    if rates is not None:
        rates.save()
        source = rates.source
    return UsageReport(by=by, rows=rows, totals=totals, unpriced=unpriced, errors=errors, prices=source, copies=copies)


def _add_cost(row: UsageRow, cost: float | None) -> None:
    """Add a part's dollars; a part without a price leaves the row incomplete."""
    if cost is None:
        row.cost_complete = False
    else:
        row.cost_usd = (row.cost_usd or 0.0) + cost


def _add_counters(row: Any, counters: Sequence[int]) -> None:
    for name, value in zip(_COUNTERS, counters):
        if value:
            setattr(row, name, getattr(row, name) + value)


def _mtime(path: str | os.PathLike[str]) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return float("inf")  # let the reader report it


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_PARALLEL_BYTES = 16 << 20  # below this, starting processes costs more than it saves


def _run(work: list[tuple], jobs: int | None, sizes: list[int]) -> list[tuple]:
    """Read every file (``sizes``: their sizes), in ``jobs`` forked processes when the
    work is worth it."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(work) < 2 or sum(sizes) < _PARALLEL_BYTES:
        return [_read_one(job) for job in work]
    import multiprocessing

    try:
        multiprocessing.get_context("fork")
    except ValueError:  # no fork (Windows): one process
        return [_read_one(job) for job in work]
    from .core.forking import forked_map

    # big files first, so one large file does not finish last alone
    order = sorted(range(len(work)), key=lambda i: -sizes[i])
    done = forked_map(_read_one, [work[i] for i in order], min(jobs, len(work)), max(1, len(work) // (jobs * 8)))
    out: list[Any] = [None] * len(work)
    for i, result in zip(order, done):
        out[i] = result
    return out


class _Prices:
    """Dollars per token of each model, from the ``genai-prices`` package's offline
    table (its ``input_tokens`` include cache reads and writes, Anthropic's do not).
    Prices are per call in reality (some models charge more past a context size); the
    rates here are a short request's, so a report is a floor for such calls.

    Importing the table costs more than reading a large session, so the rates found are
    kept in ``$XDG_CACHE_HOME/txcodec/prices.json``, keyed by the installed table's
    version: a new genai-prices release is read again."""

    def __init__(self) -> None:
        from importlib.util import find_spec

        spec = find_spec("genai_prices")
        self.calc: Any = None
        self.rates: dict[str, list[float] | None] = {}
        self.source = None
        self.key = None
        self.dirty = False
        self.installed = False
        self.snapshot: dict | None = None  # the shipped table, read when a model is first priced from it
        installed = spec is not None and spec.origin is not None
        origin = Path(spec.origin) if installed else SNAPSHOT
        try:
            self.key = f"{origin}:{origin.stat().st_mtime_ns}"
        except OSError:
            return  # no table at all (a source tree without its snapshot)
        cached = self._cache_read()
        if cached is not None:
            self.rates = cached["rates"]
            self.source = cached.get("source")
        if not isinstance(self.source, str):
            if installed:
                # the table's name and version, from its folder's listing (site-packages holds
                # hundreds of entries: kept in the cache with the rates, listed once per release)
                dist = sorted(origin.parent.parent.glob("genai_prices-*.dist-info"))
                version = dist[-1].name.removeprefix("genai_prices-").removesuffix(".dist-info") if dist else "?"
                when = date.fromtimestamp(origin.stat().st_mtime).isoformat()
                self.source = f"genai-prices {version} (installed {when})"
            else:
                table = self._snapshot()
                self.source = f"{table['source']} (snapshot of {table['date']}, shipped with txcodec)"
            self.dirty = True
        self.installed = installed

    def _snapshot(self) -> dict:
        if self.snapshot is None:
            from .core.zst import read_bytes

            self.snapshot = msgspec.json.decode(read_bytes(SNAPSHOT))
        return self.snapshot

    @staticmethod
    def _cache_path() -> Path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "txcodec" / "prices.json"

    def _cache_read(self) -> dict | None:
        try:
            data = msgspec.json.decode(self._cache_path().read_bytes())
        except (OSError, msgspec.DecodeError):
            return None
        if not isinstance(data, dict) or data.get("key") != self.key or not isinstance(data.get("rates"), dict):
            return None
        return data

    def save(self) -> None:
        """Keep newly priced models for the next run (best effort: a cache only)."""
        if not self.dirty or self.key is None:
            return
        from .core.atomic import write_atomic

        path = self._cache_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(
                path, msgspec.json.encode({"key": self.key, "source": self.source, "rates": self.rates}), overwrite=True
            )
        except OSError:
            pass
        self.dirty = False

    def rate(self, model: str) -> list[float] | None:
        if model in self.rates:
            return self.rates[model]
        found = None
        if self.source is not None and model != "?" and not self.installed:
            found = snapshot_rates(model, self._snapshot())
        elif self.source is not None and model != "?":
            if self.calc is None:
                import genai_prices

                self.calc = genai_prices
            U, calc = self.calc.Usage, self.calc.calc_price
            n = 1000
            try:
                found = [
                    float(calc(U(input_tokens=n), model).total_price) / n,
                    float(calc(U(output_tokens=n), model).total_price) / n,
                    float(calc(U(input_tokens=n, cache_write_tokens=n), model).total_price) / n,
                    float(calc(U(input_tokens=n, cache_read_tokens=n), model).total_price) / n,
                ]
            except (LookupError, ValueError):
                found = None
        self.rates[model] = found
        self.dirty = True
        return found

    def cost(self, model: str, counters: Sequence[int]) -> float | None:
        r = self.rate(model)
        if r is None:
            return None
        # counters: calls, calls_unverified, calls_without_usage, 4 verified, 4 unverified, reasoning
        return sum(r[i] * (counters[3 + i] + counters[7 + i]) for i in range(4))


_table: _Prices | None = None


def model_cost(row: ModelUsage) -> float | None:
    """Dollars for one model's usage in a conversation (unverified calls included), from
    the genai-prices table; ``None`` when the table is not installed or does not know
    the model. The HTML pages price their token totals with it."""
    global _table
    if _table is None:
        _table = _Prices()
    rates = _table.rate(row.model)
    # kept at once: a page prices a model or two, and without the cache the next export
    # would import the whole table again (more time than rendering a long session)
    _table.save()
    if rates is None:
        return None
    return sum(rate * (getattr(row, f) + getattr(row, "unverified_" + f)) for rate, f in zip(rates, TOKEN_FIELDS))


# --- the price table shipped with txcodec -------------------------------------------------
#
# A snapshot of genai-prices' table, so a default install prices sessions without it
# (genai-prices brings pydantic and an HTTP client: the ``prices`` extra). It is made from
# the installed genai-prices by ``python -m txcodec.usage`` and updated with each release;
# an installed genai-prices is newer, and is used instead (docs/usage.md#cost).

SNAPSHOT = Path(__file__).parent / "prices.json.zst"


def _rule(logic: Any) -> Any:
    """A genai-prices match clause as JSON: ``{"equals": s}``, ``{"or": [...]}``, …"""
    for key in ("equals", "starts_with", "ends_with", "contains", "regex"):
        if hasattr(logic, key):
            return {key: getattr(logic, key)}
    if hasattr(logic, "or_"):
        return {"or": [_rule(c) for c in logic.or_]}
    return {"and": [_rule(c) for c in logic.and_]}


def _matches(rule: dict, text: str) -> bool:
    """genai-prices' clause semantics: case-insensitive, but a regex as written."""
    if "or" in rule:
        return any(_matches(c, text) for c in rule["or"])
    if "and" in rule:
        return all(_matches(c, text) for c in rule["and"])
    if "regex" in rule:
        import re

        return re.search(rule["regex"], text) is not None
    key, value = next(iter(rule.items()))
    value = value.lower()
    if key == "equals":
        return text == value
    if key == "starts_with":
        return text.startswith(value)
    if key == "ends_with":
        return text.endswith(value)
    return value in text


def snapshot_rates(model: str, table: dict) -> list[float] | None:
    """The per-token rates of ``model`` in a snapshot, found as genai-prices finds it: the
    first provider whose model rule matches, then its first matching model (then its
    fallback providers')."""
    ref = model.lower()
    providers = table["providers"]
    provider = next((p for p in providers if p.get("match") and _matches(p["match"], ref)), None)
    if provider is None:
        return None
    by_id = {p["id"]: p for p in providers}
    for candidate in [provider, *(by_id[i] for i in provider.get("fallback", []) if i in by_id)]:
        for entry in candidate["models"]:
            if _matches(entry["match"], ref):
                return entry["rates"]
    return None


def write_snapshot(path: Path = SNAPSHOT) -> dict:
    """The installed genai-prices table as a snapshot at ``path`` (a release step)."""
    import genai_prices
    from genai_prices.data import providers

    from .core.atomic import write_atomic

    n = 1000
    kinds = (
        {"input_tokens": n},
        {"output_tokens": n},
        {"input_tokens": n, "cache_write_tokens": n},
        {"input_tokens": n, "cache_read_tokens": n},
    )
    out = []
    for provider in providers:
        models = []
        for model in provider.models:
            try:
                rates = [
                    float(
                        genai_prices.calc_price(genai_prices.Usage(**k), model.id, provider_id=provider.id).total_price
                    )
                    / n
                    for k in kinds
                ]
            except (LookupError, ValueError):
                rates = None
            models.append({"id": model.id, "match": _rule(model.match), "rates": rates})
        entry: dict[str, Any] = {"id": provider.id, "models": models}
        if provider.model_match is not None:
            entry["match"] = _rule(provider.model_match)
        if provider.fallback_model_providers:
            entry["fallback"] = list(provider.fallback_model_providers)
        out.append(entry)
    from importlib.metadata import version

    table = {"source": f"genai-prices {version('genai-prices')}", "date": date.today().isoformat(), "providers": out}
    import zstandard

    write_atomic(path, zstandard.ZstdCompressor(level=19).compress(msgspec.json.encode(table)), overwrite=True)
    return table


if __name__ == "__main__":  # python -m txcodec.usage: refresh the shipped price snapshot
    written = write_snapshot()
    print(f"{SNAPSHOT}: {written['source']} of {written['date']}")
