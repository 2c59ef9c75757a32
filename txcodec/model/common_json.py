"""Common JSON read back into a conversation, and that form's JSON Schema. Writing it
derives each conversation's changes, which takes each harness's extractor: that is
:func:`txcodec.kit.changes.to_json`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET

from .common import Conversation

_decoder = msgspec.json.Decoder(Conversation)


def from_json(data: bytes | str) -> Conversation:
    """The conversation in Common JSON. Its ``changes`` are not kept: they are derived
    from the messages, and :func:`txcodec.kit.changes.conversation_changes` derives them again.
    A lone UTF-16 surrogate escape (``"\\ud83d"``, half an emoji a JavaScript client cut) is
    kept as the lone surrogate it names, which msgspec's decoder refuses."""
    try:
        return _without_changes(_decoder.decode(data))
    except msgspec.DecodeError:
        if "\\ud" not in (data if isinstance(data, str) else data.decode("utf-8", "replace")).lower():
            raise
        try:
            value = json.loads(data)
        except ValueError:
            raise msgspec.DecodeError("not Common JSON") from None
        return _without_changes(msgspec.convert(value, Conversation))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def encode(value: Any, encoder: Callable[[Any], bytes]) -> bytes:
    """``encoder(value)``; where a string holds a lone surrogate (which UTF-8 cannot hold),
    the same JSON with that surrogate written as its ``\\uXXXX`` escape, so that
    :func:`from_json` gives it back."""
    try:
        return encoder(value)
    except UnicodeEncodeError:
        text = json.dumps(msgspec.to_builtins(value), ensure_ascii=False, separators=(",", ":"))
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _without_changes(conversation: Conversation) -> Conversation:
    conversation.derived_changes = UNSET
    for child in conversation.children:
        _without_changes(child.conversation)
    return conversation


def json_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(Conversation)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": Conversation.SCHEMA_ID, **schema}
