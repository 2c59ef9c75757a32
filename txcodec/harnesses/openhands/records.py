"""Typed view of an OpenHands conversation (``~/.openhands/conversations/<hex>/``).

Facts from OpenHands CLI 1.16.0 (SDK 1.21.0; docs/openhands.md#format-facts and the files it wrote against
a loopback mock): a conversation is a folder named by its UUID without dashes, holding
``base_state.json`` (agent and LLM settings, workspace, stats; not needed to resume) and
``events/event-<5-digit sequence>-<event uuid>.json``, one JSON event per file. Every event
has ``kind`` (its class name), ``id``, ``timestamp`` and ``source`` (``agent``, ``user``,
``environment``); the conversation kinds are ``SystemPromptEvent``, ``MessageEvent``,
``ActionEvent`` and ``ObservationEvent``.

The rest of an event varies with its kind and is left to the bytes: an untouched file is
written back as it was read.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import UnsetType


class Event(msgspec.Struct, omit_defaults=True):
    kind: str
    id: str
    timestamp: str | UnsetType = UNSET
    source: str | UnsetType = UNSET


class BaseState(msgspec.Struct, omit_defaults=True):
    """``base_state.json``: the conversation's settings. It has no ``kind``."""

    id: str
    agent: msgspec.Raw
