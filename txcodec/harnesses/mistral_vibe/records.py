"""Typed records of Mistral Vibe's two session forms (mistral-vibe 3.0.2).

**Legacy** (Vibe 1.x/2.x, still imported by 3.0.2: ``vibe/core/session/session_loader.py``):
``<VIBE_HOME>/logs/session/session_<anything>_<first 8 characters of the id>/`` holding
``meta.json`` (``session_id``, ``start_time``, ``end_time``, ``environment.working_directory``,
``title``) and ``messages.jsonl``, one ``LLMMessage`` a line (``vibe/core/types.py``):
``role``, ``content`` (a string: a list of parts is joined into one), ``reasoning_content``,
``tool_calls`` (``{id, index, type: "function", function: {name, arguments (JSON
string)}}``), ``name`` and ``tool_call_id`` (a tool line), ``message_id``, ``injected``,
``images``. Every line must be a JSON object or the client refuses the session; ``system``
lines are skipped.

**Unified** (3.x, ``logs/session/unified/<id>/``): ``CURRENT`` is one JSON line
``{generation, manifest_sha256, session_id, snapshot_sequence, store_format:
"mistral.vibe.unified-session-store/v1", store_format_minor}`` naming the generation whose
``manifest.json`` lists the checkpoint's content-addressed chunks (the committed history).

One record type covers both files' lines, so each round-trips byte for byte; fields the
view does not name stay in the line's bytes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET
from msgspec import Raw
from msgspec import UnsetType

STORE_FORMAT = "mistral.vibe.unified-session-store/v1"


class Line(msgspec.Struct, omit_defaults=True):
    role: str | UnsetType = UNSET
    content: Raw | UnsetType = UNSET
    tool_calls: Raw | UnsetType = UNSET
    tool_call_id: str | None | UnsetType = UNSET
    name: str | None | UnsetType = UNSET
    # CURRENT, the pointer of a unified session
    store_format: str | UnsetType = UNSET
    generation: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    manifest_sha256: str | UnsetType = UNSET
