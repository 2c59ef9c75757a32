"""Common JSON: a conversation to and from its JSON form, and that form's JSON Schema.

It sits beside the structs (:mod:`txcodec.model.common`) rather than inside them because
writing the JSON derives ``changes`` (:mod:`txcodec.model.changes`), which reads those
structs: kept apart, neither module imports the other back.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from .common import Conversation

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Conversation)


def to_json(conversation: Conversation) -> bytes:
    return _encoder.encode(with_changes(conversation))


def with_changes(conversation: Conversation) -> Conversation:
    """A copy whose ``changes`` (and each child's) is derived afresh from its messages."""
    from .changes import conversation_changes  # here: reading Common JSON never loads difflib

    found = conversation_changes(conversation, subagents=False)
    children = [msgspec.structs.replace(c, conversation=with_changes(c.conversation)) for c in conversation.children]
    return msgspec.structs.replace(conversation, derived_changes=found or UNSET, children=children)


def from_json(data: bytes | str) -> Conversation:
    """The conversation in Common JSON. Its ``changes`` are not kept: they are derived
    from the messages, and :func:`txcodec.model.changes.conversation_changes` derives them again."""
    return _without_changes(_decoder.decode(data))


def _without_changes(conversation: Conversation) -> Conversation:
    conversation.derived_changes = UNSET
    for child in conversation.children:
        _without_changes(child.conversation)
    return conversation


def json_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(Conversation)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": Conversation.SCHEMA_ID, **schema}
