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

from .common import Conversation, Message
from .errors import InternalError
from .loss import LossReport
from .native import _raw_value

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Conversation)
_message_decoder = msgspec.json.Decoder(Message)
_pack = msgspec.msgpack.Encoder().encode
_lenient_encoder = msgspec.json.Encoder(enc_hook=repr)  # a value msgspec cannot encode becomes its repr
_plain = msgspec.json.Decoder()
_WHERE = re.compile(r" - at `\$([^`]*)`$")
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
_MAX_REPAIRS = 1000


def conform(conversation: Conversation, loss: LossReport) -> Conversation:
    """``conversation`` decoded against its own schema; values that do not fit are set
    aside (see the module docstring) and reported as ``read:malformed``.

    ``conversation`` is used up: its messages are replaced, one by one, by their decoded
    copies (so a session is never held twice in memory, nor its whole JSON at once)."""
    try:
        return _fit(conversation)
    except (msgspec.ValidationError, TypeError, msgspec.EncodeError):
        pass  # the messages fitted so far encode as they did: the repair below sees the same tree
    tree = _plain.decode(_lenient_encoder.encode(conversation))
    for _ in range(_MAX_REPAIRS):
        try:
            return msgspec.convert(tree, Conversation)
        except msgspec.ValidationError as exc:
            _repair(tree, str(exc), loss)
    raise InternalError(f"the conversation still does not fit the Common schema after {_MAX_REPAIRS} repairs")


def _fit(conversation: Conversation) -> Conversation:
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
        if b"\xcb" not in _pack(plain):  # msgspec packs every float as float64 (0xCB); the byte in a string costs the JSON pass only
            return msgspec.convert(plain, Message)
    except OverflowError:
        pass
    return _message_decoder.decode(_encoder.encode(message))


def _steps(message: str) -> tuple[str, list[str | int]]:
    found = _WHERE.search(message)
    if found is None:
        return message, []
    steps: list[str | int] = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _STEP.finditer(found.group(1))]
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
                blocks[steps[i]] = {"type": "raw", "source_type": kind if isinstance(kind, str) else "malformed", "value": value}
                loss.add("read:malformed", f"{where}: {reason}; the block is kept as a raw block")
                return
    if not steps:
        raise InternalError(f"the conversation does not fit the Common schema: {message}")
    parent = _at(tree, steps[:-1])
    last = steps[-1]
    if isinstance(last, str) and isinstance(parent, dict) and last in parent and not reason.startswith("Object missing"):
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
