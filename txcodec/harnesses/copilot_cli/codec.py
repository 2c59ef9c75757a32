"""Copilot CLI line codec: bytes -> :class:`~.records.Event`, and back.

A line that is not an event envelope (``type``, ``id``, ``timestamp``, ``parentId``) becomes
an :class:`~txcodec.model.native.Opaque` record that keeps its bytes. Decoding never raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Event


class CopilotCliCodec(JsonCodec):
    name = "copilot_cli"
    record = Event


CODEC = CopilotCliCodec()
