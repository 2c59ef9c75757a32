"""Common JSON read back into a conversation, and that form's JSON Schema. Writing it
derives each conversation's changes, which takes each harness's extractor: that is
:func:`txcodec.kit.changes.to_json`."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from .common import Conversation

_decoder = msgspec.json.Decoder(Conversation)


def from_json(data: bytes | str) -> Conversation:
    """The conversation in Common JSON. Its ``changes`` are not kept: they are derived
    from the messages, and :func:`txcodec.kit.changes.conversation_changes` derives them again."""
    return _without_changes(_decoder.decode(data))


def _without_changes(conversation: Conversation) -> Conversation:
    conversation.derived_changes = UNSET
    for child in conversation.children:
        _without_changes(child.conversation)
    return conversation


def json_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(Conversation)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": Conversation.SCHEMA_ID, **schema}
