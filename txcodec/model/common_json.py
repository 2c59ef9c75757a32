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

from ..core.errors import InputError
from .common import Conversation

_decoder = msgspec.json.Decoder(Conversation)


def from_json(data: bytes | str, path: object = None) -> Conversation:
    """The conversation in Common JSON. Its ``changes`` are not kept: they are derived
    from the messages, and :func:`txcodec.kit.changes.conversation_changes` derives them again.
    A lone UTF-16 surrogate escape (``"\\ud83d"``, half an emoji a JavaScript client cut) is
    kept as the lone surrogate it names, which msgspec's decoder refuses.

    Anything that does not fit the schema is an :class:`~txcodec.core.errors.InputError` in
    one line naming the JSON path (``at `$.messages[3].content```), as is a document nested
    deeper than the reader goes (docs/guarantees.md#limits)."""
    try:
        return _without_changes(_decoder.decode(data))
    except msgspec.ValidationError as exc:
        raise InputError(f"not Common JSON: {_one_line(exc)}", path=path) from None
    except msgspec.DecodeError as exc:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
        if "\\ud" not in text.lower():
            raise InputError(f"not JSON: {_one_line(exc)}", path=path) from None
        try:  # a lone surrogate escape: json takes it
            value = json.loads(data)
            return _without_changes(msgspec.convert(value, Conversation))
        except (ValueError, msgspec.ValidationError) as again:
            raise InputError(f"not Common JSON: {_one_line(again)}", path=path) from None
    except RecursionError:
        raise InputError("not Common JSON: nested too deeply to read", path=path) from None


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


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
