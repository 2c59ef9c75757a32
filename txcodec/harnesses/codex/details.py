"""What ``txcodec list`` shows of a Codex rollout (first prompt, message count, models,
lineage), read lean: the lines are decoded into the reader's own typed records (the same
codec), and a small state machine follows :mod:`.read`'s rules only as far as the count needs
them: which items open a message and which join the open one (``_Reader.side``), and which
message is a turn (:func:`txcodec.model.summary.typed`). No Common block is built, no tool
argument decoded, nothing conformed. Codex keeps no title.

An events-only rollout, a 0.1.x document, or a rollout with no message at all is read whole
(:func:`summarize` returns None), as is one where a handler the full reader runs would stop.
``tests/features/test_list_lean.py`` compares both on every golden and corpus
rollout and on mutated lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from typing import Union

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.gcpause import no_cycle_collection
from ...core.zst import read_bytes
from ...kit.detect import is_document
from ...kit.detect import spread_document
from ...model.native import Opaque
from ...model.native import batch_decoder
from ...model.native import decode_batches
from ...model.native import decode_whole
from ...model.summary import NOT_TYPED
from ...model.summary import PROMPT_MAX
from ...model.summary import Details
from . import records as R
from .codec import CODEC
from .origin import codex_meta_candidates
from .origin import codex_origin
from .prelude import prelude_kind
from .read import _is_part
from .scan import SessionInfo
from .scan import _PayloadPeek
from .scan import scan_line


class _Unsure(Exception):
    """The lean read cannot tell what the full read gives: read the rollout whole."""


class _Msg:
    __slots__ = ("assistant", "meta", "synthetic", "compact", "blocks", "results", "contexts", "texts")

    def __init__(self, assistant: bool, meta: bool = False, synthetic: bool = False, compact: bool = False) -> None:
        self.assistant = assistant
        self.meta = meta
        self.synthetic = synthetic
        self.compact = compact
        self.blocks = 0
        self.results = 0  # ToolResult blocks
        self.contexts = 0  # Context blocks
        self.texts: list[str] = []


_TOOL_SEARCH = {"tool_search_call": True, "tool_search_output": False}  # is the assistant's
_CALLS = (R.FunctionCallItem, R.CustomToolCallItem, R.LocalShellCallItem)
_OUTPUTS = (R.FunctionCallOutputItem, R.CustomToolCallOutputItem)
_COMPACTIONS = (R.CompactionItem, R.CompactionSummaryItem)
_BARE = frozenset(R.RESPONSE_ITEM_TYPES.values())


class _Lean:
    def __init__(self) -> None:
        self.messages: list[_Msg] = []
        self.models: list[str] = []
        self.has_message_item = False

    def _new(self, msg: _Msg) -> _Msg:
        self.messages.append(msg)
        return msg

    def side(self, assistant: bool) -> _Msg:
        """read._Reader.side: the open message of that side, or a new one."""
        last = self.messages[-1] if self.messages else None
        if (
            last is not None
            and last.assistant is assistant
            and not (last.meta or last.synthetic or last.compact)
            and (assistant or last.results == last.blocks)
        ):
            return last
        return self._new(_Msg(assistant))

    def feed(self, records: list[Any]) -> None:
        for record in records:
            kind = type(record)
            if kind is R.ResponseItemLine:
                self.item(record.payload)
            elif kind is R.TurnContextLine:
                self.model(R.turn_settings(record.payload).model)
            elif kind is R.CompactedLine:
                self._new(_Msg(False, synthetic=True, compact=True)).blocks = 1
            elif kind is R.EventMsgLine:
                if type(record.payload) is R.ErrorEvent:
                    self.error()
            elif kind is R.TsRollout:
                raise _Unsure  # a 0.1.x document: read whole
            elif kind in _BARE:
                self.item(record)

    def model(self, model: Any) -> None:
        if isinstance(model, str) and model not in self.models:
            self.models.append(model)

    def error(self) -> None:
        """An error event: the reader's synthetic assistant message."""
        self._new(_Msg(True, synthetic=True)).blocks = 1

    def item(self, p: Any) -> None:
        kind = type(p)
        if kind is R.MessageItem:
            self.has_message_item = True
            self.message_item(p)
        elif kind is R.ReasoningItem or kind in _CALLS:
            self.side(True).blocks += 1
        elif kind is R.WebSearchCallItem:
            self.side(True).blocks += 1
            msg = self._new(_Msg(False, synthetic=True))
            msg.blocks = msg.results = 1
        elif kind in _OUTPUTS:
            self.call_output(p)
        elif kind in _COMPACTIONS:
            self._new(_Msg(True, compact=True)).blocks = 1
        elif kind is msgspec.Raw:
            value = R.raw_json(p)
            found = value.get("type") if isinstance(value, dict) else None
            if isinstance(found, str) and found in _TOOL_SEARCH:
                self.context(self.side(_TOOL_SEARCH[found]))

    def message_item(self, p: R.MessageItem) -> None:
        parts = p.content
        if p.role == "assistant":
            self.side(True).blocks += len(parts)
            return
        texts = [part.text for part in parts if isinstance(part, (R.InputText, R.OutputText))]
        kinds = {prelude_kind(t) for t in texts}
        meta = p.role in ("developer", "system") or bool(texts and None not in kinds)
        msg = self._new(_Msg(False, meta=meta))
        msg.blocks = len(parts)
        msg.texts = texts

    @staticmethod
    def context(msg: _Msg) -> None:
        if not msg.assistant and msg.contexts == msg.blocks:
            msg.meta = True
        msg.blocks += 1
        msg.contexts += 1

    def call_output(self, p: Any) -> None:
        if not p.call_id and isinstance(getattr(p, "name", None), str):  # a goal's output (read.goal_output)
            self.context(self.side(False))
            return
        output = p.output
        if isinstance(output, list):
            for part in output:
                if _is_part(part):
                    msgspec.convert(part, R.ContentPart)  # where the full reader stops, this stops too
        msg = self.side(False)
        msg.blocks += 1
        msg.results += 1

    def details(self) -> Details:
        count = 0
        prompt = None
        for msg in self.messages:
            if msg.assistant:
                count += not msg.synthetic
                continue
            if msg.meta or msg.synthetic or msg.compact or msg.blocks == msg.results:
                continue
            count += 1
            if prompt is None:
                text = "\n".join(msg.texts).strip()
                if text and not text.startswith(NOT_TYPED):
                    prompt = text[:PROMPT_MAX]
        return Details(title=None, first_prompt=prompt, messages=count, models=list(self.models))


def summarize(path: str | Path) -> Details | None:
    """The rollout's row details read lean, or None when only the full read can tell."""
    # records by the thousand and no cycle among them: the collector would only scan them
    with no_cycle_collection():
        return _summarize(Path(path), None, None)[0]


def summarize_scanning(path: Path, data: bytes, found: SessionInfo) -> tuple[Details | None, bool]:
    """:func:`summarize` of the rollout's bytes, adding each line to ``found`` as
    :func:`.scan.scan` would; and whether every line was (else the caller scans the file)."""
    with no_cycle_collection():
        return _summarize(path, data, found)


def _summarize(path: Path, data: bytes | None, found: SessionInfo | None) -> tuple[Details | None, bool]:
    scanned = False
    try:
        if is_document(path):
            return None, False
        if data is None:
            data = read_bytes(path)
        if spread_document(data):
            return None, False
        lean = _Lean()
        found = found if found is not None else SessionInfo(id="", path="")  # the scan costs little here
        whole = decode_whole(data, _LISTING_CODEC)
        if whole is not None:  # every line typed: no line is opaque
            candidates = _scan_feeding(found, lean, *whole)
        else:
            candidates = []
            for batch, _, typed in decode_batches(data, CODEC, runs=True):
                records = [line._record for line in batch]
                if typed:
                    candidates.extend(_scan_feeding(found, lean, [bytes(line._raw) for line in batch], records))
                    continue
                for line in batch:
                    scan_line(found, bytes(line._raw))
                candidates.extend(codex_meta_candidates(batch))
                lean.feed([record for record in records if type(record) is not Opaque])
        scanned = True
        if not lean.has_message_item or not lean.messages:
            return None, scanned  # events only (read from its events), or nothing: read whole
        result = lean.details()
        origin = codex_origin(candidates, path)
    except (_Unsure, RecursionError, OSError, msgspec.MsgspecError, TypeError, AttributeError, KeyError, ValueError):
        return None, scanned
    result.started_by = origin.started_by
    result.forked_from = origin.forked_from.session_id if origin.forked_from is not None else None
    return result, scanned


_ITEMS = frozenset(R.RESPONSE_ITEM_TYPES.values())
_CALL_ITEMS = frozenset((R.FunctionCallItem, R.CustomToolCallItem, R.LocalShellCallItem, R.WebSearchCallItem))
_ITEM_LINE, _EVENT_LINE, _TURN_LINE, _MESSAGE = R.ResponseItemLine, R.EventMsgLine, R.TurnContextLine, R.MessageItem


class _EventType(msgspec.Struct):
    type: Any = None


class _ListedEventLine(R.EventMsgLine, tag="event_msg"):
    """An event line as the listing decodes it, its payload read for its ``type`` alone: of
    the events, the count takes only an ``error`` (typed as the codec types it,
    :func:`_is_error`) and the scan only the line's time. Where the codec refuses an event's
    payload object it keeps it as bytes, the line around it typed the same: so the listing
    decodes a rollout whole where every line but an event's payload object fits the codec's
    union, with the same records. (A payload that is no object sends the rollout to the codec.)"""

    payload: _EventType | UnsetType = UNSET


_LISTING = msgspec.json.Decoder(
    Union[R.SessionMetaLine, R.ResponseItemLine, _ListedEventLine, R.TurnContextLine, R.CompactedLine]
)


class _ListingCodec:
    decode_batch = batch_decoder(_LISTING)


_LISTING_CODEC = _ListingCodec()


def _is_error(line: bytes) -> bool:
    """Whether the codec types the event on ``line`` as an error (its payload's last ``type``
    key said "error": a tagged struct checks them all, the codec's lenient path keeps the last)."""
    record = CODEC.decode(line)
    return type(record) is _EVENT_LINE and type(record.payload) is R.ErrorEvent


# A ``turn_context`` payload read once for the scan and the count: every key the count's
# ``TurnContext`` decodes, typed as it types them, and the other keys the scan's peek
# (:class:`.scan._PayloadPeek`) decodes, typed as it does. A key decoded as any value is decoded all
# the same (its strings checked as UTF-8, its numbers for range), so where this fits, each of
# theirs fits and gives the same ``model``; where it does not, each is read as before.
_TURN_KEYS = {f.name: (f.name, f.type, f.default) for f in msgspec.structs.fields(_PayloadPeek)}
_TURN_KEYS.update((f.name, (f.name, f.type, f.default)) for f in msgspec.structs.fields(R.TurnContext))
_TurnPeek = msgspec.defstruct("_TurnPeek", list(_TURN_KEYS.values()))
_turn_peek = msgspec.json.Decoder(_TurnPeek)


def _scan_feeding(found: SessionInfo, lean: _Lean, raws: list[bytes], records: list[Any]) -> list[bytes]:
    """Lines decoded together (a rollout the listing decoded whole with ``_LISTING``, or a batch
    the codec did) added to ``found`` as :func:`.scan.scan` adds them and fed to ``lean``, in one
    pass; and those that may name a session (as :func:`.origin.codex_meta_candidates` keeps
    them: no item or event line can). Such lines are plain objects, each decoded by msgspec as
    the scan's peek decodes it: an event gives its time, all the scan takes of one whatever its
    payload; a response item with a typed payload gives its time, type and role. Every other
    line is peeked at (a meta, a turn's context that :class:`_TurnPeek` does not fit, the rest).
    No line's bytes are searched: that cost more than the rest of the pass."""
    metas: list[bytes] = []
    item = lean.item
    # the counts the loop keeps as locals: written back around each line peeked at
    lines, first, last = found.lines, found.first_timestamp, found.last_timestamp
    for raw, rec in zip(raws, records):
        kind = type(rec)
        if kind is _ITEM_LINE:
            payload = rec.payload
            typed = type(payload)
            item(payload)
            if typed is _MESSAGE:
                role = payload.role
                if role == "user":
                    found.user_messages += 1
                elif role == "assistant":
                    found.assistant_messages += 1
            elif typed in _ITEMS:
                found.tool_calls += typed in _CALL_ITEMS
            else:
                kind = None
        elif kind is _ListedEventLine or kind is _EVENT_LINE:
            payload = rec.payload
            if payload is UNSET:
                kind = None
            elif kind is _EVENT_LINE:  # a batch the codec decoded: its payload typed
                if type(payload) is R.ErrorEvent:
                    lean.error()
            elif payload.type == "error" and _is_error(raw):
                lean.error()
        elif kind is _TURN_LINE:
            try:
                turn = _turn_peek.decode(rec.payload)
            except (msgspec.DecodeError, msgspec.ValidationError):
                kind = None
            else:
                if turn.model is not UNSET:
                    found.model = turn.model
                    lean.model(turn.model)
        else:
            kind = None
        if kind is None:  # peeked at by the scan, read by the count as its records are
            if type(rec) is not _ITEM_LINE:
                metas.append(raw)
                lean.feed([rec])
            found.lines, found.first_timestamp, found.last_timestamp = lines, first, last
            scan_line(found, raw)
            lines, first, last = found.lines, found.first_timestamp, found.last_timestamp
            continue
        lines += 1
        stamp = rec.timestamp
        if stamp is not UNSET:
            last = stamp
            if first is UNSET:
                first = stamp
    found.lines, found.first_timestamp, found.last_timestamp = lines, first, last
    return metas
