"""Hold every reader's output to the Common schema.

A reader copies values from native records into Common, and a native value can have any
shape: an object where Common wants a string (a tool call id), a number where it wants a
list. msgspec does not check a Struct when it is built, so such a value would travel on
to a writer or a renderer and break it there. :func:`conform` checks the conversation in
one encode/decode pass (the decoded copy also turns every :class:`msgspec.Raw` into plain
values, which every consumer can handle); when a value does not fit, the smallest thing
that holds it is set aside and named in the loss report: a content block becomes a
``raw`` block that keeps the value, a field that may be left out is left out, and only
what cannot be anything else (a message without a role) is dropped.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ..core.errors import InternalError
from ..model.common import Conversation
from ..model.common import Image
from ..model.common import Message
from ..model.common import Text
from ..model.common import Thinking
from ..model.common import ToolResult
from ..model.common import ToolUse
from ..model.common import Usage
from ..model.loss import LossReport
from ..model.native import _raw_value

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Conversation)
_message_decoder = msgspec.json.Decoder(Message)
_pack = msgspec.msgpack.Encoder().encode
_lenient_encoder = msgspec.json.Encoder(enc_hook=repr)  # a value msgspec cannot encode becomes its repr
_plain = msgspec.json.Decoder()
_WHERE = re.compile(r" - at `\$([^`]*)`$")
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
_MAX_REPAIRS = 1000


def conform(conversation: Conversation, loss: LossReport, *, checked: bool = False) -> Conversation:
    """``conversation`` decoded against its own schema; values that do not fit are set
    aside (see the module docstring) and reported as ``read:malformed``.

    ``conversation`` is used up: its messages are replaced, one by one, by their decoded
    copies (so a session is never held twice in memory, nor its whole JSON at once).

    ``checked`` (a reader that shares no object between two messages says so) keeps a
    message as it is where :func:`fits_as_is` finds that its decoded copy would equal it:
    the copy is the costliest part of a conversion from such a reader."""
    try:
        return _fit(conversation, checked)
    except (msgspec.ValidationError, TypeError, msgspec.EncodeError):
        pass  # the messages fitted so far encode as they did: the repair below sees the same tree
    tree = _plain.decode(_lenient_encoder.encode(conversation))
    for _ in range(_MAX_REPAIRS):
        try:
            return msgspec.convert(tree, Conversation)
        except msgspec.ValidationError as exc:
            _repair(tree, str(exc), loss)
    raise InternalError(f"the conversation still does not fit the Common schema after {_MAX_REPAIRS} repairs")


def _fit(conversation: Conversation, checked: bool = False) -> Conversation:
    """The encode/decode pass a message at a time: the conversation without its messages,
    then each message in its place. msgspec checks a struct field by field, so this
    accepts and builds what decoding the whole conversation's JSON would."""
    messages = conversation.messages
    conversation.messages = []
    try:
        fitted = _decoder.decode(_encoder.encode(conversation))
    finally:
        conversation.messages = messages
    for i, message in enumerate(messages):
        if not (checked and fits_as_is(message)):
            messages[i] = _fit_message(message)
    fitted.messages = messages
    return fitted


def _fit_message(message: Message) -> Message:
    """``decode(encode(message))`` as a Message, built from the message's plain values
    instead of its JSON: the same checks, and the strings are shared with what the
    reader read rather than copied. A message holding a float (JSON spells NaN and the
    infinities ``null``) or an int past 64 bits goes through JSON itself."""
    plain = msgspec.to_builtins(message, str_keys=True, enc_hook=_raw_value)
    try:
        if b"\xcb" not in _pack(
            plain
        ):  # msgspec packs every float as float64 (0xCB); the byte in a string costs the JSON pass only
            return msgspec.convert(plain, Message)
    except OverflowError:
        pass
    return _message_decoder.decode(_encoder.encode(message))


_ABSENT_OR_STR = (str, UnsetType)
_INT_RANGE = range(-(2**63), 2**64)  # what msgpack packs: past it, _fit_message takes the JSON pass


def fits_as_is(message: Message) -> bool:
    """Whether ``message`` holds only the shapes a reader usually builds (text, thinking,
    tool calls, results of text or images), every field of its declared type and every
    free-form value (a tool input, a result's ``structured`` value, an ``extra`` bag)
    plain JSON without a float: then
    decoding it against the schema gives an equal message, and :func:`conform` keeps it.
    ``False`` leaves it to the decode (whatever is rarer, a float, a ``msgspec.Raw``)."""
    m = message
    if (
        m.role not in ("user", "assistant")
        or type(m.role) is not str
        or type(m.id) not in _ABSENT_OR_STR
        or type(m.timestamp) not in _ABSENT_OR_STR
        or type(m.model) not in _ABSENT_OR_STR
        or type(m.origin) not in _ABSENT_OR_STR
        or not (m.stop_reason is None or type(m.stop_reason) in _ABSENT_OR_STR)
        or not (m.usage is UNSET or _plain_usage(m.usage))
        or not (m.usage_unverified is UNSET or _plain_usage(m.usage_unverified))
        or type(m.synthetic) is not bool
        or type(m.compact_summary) is not bool
        or type(m.interrupted) is not bool
        or type(m.api_error) is not bool
        or type(m.meta) is not bool
        or type(m.source_ids) is not list
        or not all(type(i) is str for i in m.source_ids)
        or type(m.extra) is not dict
        or (m.extra and not _plain_json(m.extra))
        or type(m.content) is not list
    ):
        return False
    for block in m.content:
        kind = type(block)
        if kind is Text:
            if type(block.text) is not str:
                return False
        elif kind is ToolUse:
            if (
                type(block.id) is not str
                or type(block.name) is not str
                or type(block.kind) is not str
                or not _plain_json(block.input)
            ):
                return False
        elif kind is ToolResult:
            if (
                type(block.tool_use_id) is not str
                or not (block.is_error is None or type(block.is_error) is bool)
                or not (block.structured is UNSET or _plain_json(block.structured))
                or type(block.persisted_output) not in _ABSENT_OR_STR
                or not (type(block.content) is str or _plain_parts(block.content))
            ):
                return False
        elif kind is Thinking:
            if (
                type(block.thinking) is not str
                or type(block.signature) not in _ABSENT_OR_STR
                or type(block.encrypted) not in _ABSENT_OR_STR
            ):
                return False
        else:
            return False
    return True


def _plain_usage(usage: Any) -> bool:
    return (
        type(usage) is Usage
        and all(type(n) is int and n in _INT_RANGE for n in msgspec.structs.astuple(usage)[:4])
        and (
            usage.reasoning_output_tokens is UNSET
            or (type(usage.reasoning_output_tokens) is int and usage.reasoning_output_tokens in _INT_RANGE)
        )
    )


def _plain_parts(parts: Any) -> bool:
    """A tool result's content list of text and image blocks, each field of its type."""
    if type(parts) is not list:
        return False
    for part in parts:
        if type(part) is Text:
            if type(part.text) is not str:
                return False
        elif type(part) is not Image or not all(
            type(v) in _ABSENT_OR_STR for v in (part.media_type, part.data, part.url, part.file_id)
        ):
            return False
    return True


def _plain_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is made of dicts with string keys, lists, strings, bools, None
    and ints msgpack packs, and nothing else (no float: JSON spells NaN ``null``)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return value in _INT_RANGE
    if depth > 64:  # deeper than a reader's value ever is: the decode decides
        return False
    if kind is dict:
        return all(type(k) is str and _plain_json(v, depth + 1) for k, v in value.items())
    if kind is list:
        return all(_plain_json(v, depth + 1) for v in value)
    return False


def _steps(message: str) -> tuple[str, list[str | int]]:
    found = _WHERE.search(message)
    if found is None:
        return message, []
    steps: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _STEP.finditer(found.group(1))
    ]
    return message[: found.start()], steps


def _repair(tree: dict, message: str, loss: LossReport) -> None:
    reason, steps = _steps(message)
    where = "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)
    # a content block (a message's, or a tool result's) is the smallest unit that can
    # be kept as it is: a raw block holds any value
    for i in range(len(steps) - 1, 0, -1):
        if isinstance(steps[i], int) and steps[i - 1] == "content":
            blocks = _at(tree, steps[:i])
            if isinstance(blocks, list) and steps[i] < len(blocks):
                value = blocks[steps[i]]
                kind = value.get("type") if isinstance(value, dict) else None
                blocks[steps[i]] = {
                    "type": "raw",
                    "source_type": kind if isinstance(kind, str) else "malformed",
                    "value": value,
                }
                loss.add("read:malformed", f"{where}: {reason}; the block is kept as a raw block")
                return
    if not steps:
        raise InternalError(f"the conversation does not fit the Common schema: {message}")
    parent = _at(tree, steps[:-1])
    last = steps[-1]
    if (
        isinstance(last, str)
        and isinstance(parent, dict)
        and last in parent
        and not reason.startswith("Object missing")
    ):
        del parent[last]  # an optional field: its default stands in
        loss.add("read:malformed", f"{where}: {reason}; the field is left out")
        return
    # a required field missing or unusable, or an element of the wrong kind: the
    # innermost list element that holds it goes
    path = steps if not (isinstance(last, str) and last in (parent or {})) else steps[:-1]
    for i in range(len(path) - 1, -1, -1):
        if isinstance(path[i], int):
            items = _at(tree, path[:i])
            if isinstance(items, list) and path[i] < len(items):
                del items[path[i]]
                loss.add("read:malformed", f"{where}: {reason}; the element is dropped")
                return
    raise InternalError(f"the conversation does not fit the Common schema: {message}")


def _at(tree: Any, steps: list[str | int]) -> Any:
    node = tree
    for step in steps:
        node = node[step]
    return node


class Fitted:
    """The fitted copy of a conversation a reader keeps building (a ``Harness.carry_on``
    reader): each call fits only the messages the reader built or changed since the last
    one, so a look after an append costs what the appended lines built, not the session."""

    def __init__(self, *, checked: bool = False) -> None:
        self.checked = checked
        self.messages: list[Message | None] = []
        self.dropped = False  # a message was repaired away (None in ``messages``): rare, and then filtered

    def fit(self, conversation: Conversation, touched: set[int], loss: LossReport) -> tuple[Conversation, list[int]]:
        """``conversation`` (the reader's own, left as it is) with its messages at
        ``touched`` fitted again and the others as last fitted; and those indices."""
        built = conversation.messages
        fitted = self.messages
        del fitted[len(built) :]  # a history that got shorter (a rewind, a branch)
        fitted.extend([None] * (len(built) - len(fitted)))
        changed = sorted(i for i in touched if i < len(built))
        for i in changed:
            fitted[i] = self._fit_message(built[i], loss)
            self.dropped = self.dropped or fitted[i] is None
        frame = msgspec.structs.replace(conversation, messages=[])
        out = conform(frame, loss)
        # a copy of the list (the next call changes this one), a C loop over its references
        if not self.dropped:
            out.messages = list(fitted)  # type: ignore[arg-type]
            return out, changed
        out.messages = [m for m in fitted if m is not None]
        return out, list(range(len(out.messages)))  # the indices moved: every message may have changed

    def forget(self, count: int) -> None:
        """The first ``count`` messages were handed on: the next conversation starts after them."""
        del self.messages[:count]

    def fit_one(self, message: Message, loss: LossReport) -> Message | None:
        """``message`` alone held to the schema (a message handed on); None if repaired away."""
        return self._fit_message(message, loss)

    def _fit_message(self, message: Message, loss: LossReport) -> Message | None:
        if self.checked and fits_as_is(message):
            return message
        try:
            return _fit_message(message)
        except (msgspec.ValidationError, TypeError, msgspec.EncodeError):
            # the repair of a whole conversation, for this one message (its list is conform's to change)
            repaired = conform(Conversation(messages=[message]), loss).messages
            return repaired[0] if repaired else None
