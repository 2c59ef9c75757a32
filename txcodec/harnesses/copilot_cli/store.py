"""Where Copilot CLI keeps sessions, and a shallow listing of them.

Copilot CLI 1.0.102 (``copilot help environment``, and its ``resolveCopilotHome``: a
``--config-dir``, else ``$COPILOT_HOME``, else ``$HOME/.copilot``): each session is a folder
``session-state/<session id>/`` holding ``events.jsonl`` (the event log that resume
replays) beside ``workspace.yaml``, ``checkpoints/`` and other side files that resume does
not need (docs/copilot_cli.md#format-facts). ``session-store.db`` is a search index, also not needed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec

from ...kit.registry import Store
from ...kit.store import LineSessionInfo
from ...kit.store import file_lines
from ...kit.store import files_under
from ...kit.store import listed
from ...kit.store import peeks
from ...kit.store import stamp

UUID = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.IGNORECASE
)  # \Z: no newline after


def default_root() -> Path:
    value = os.environ.get("COPILOT_HOME")
    return Path(value).expanduser() if value else Path.home() / ".copilot"


def session_relpath(session_id: str) -> str:
    return f"session-state/{session_id}/events.jsonl"


SessionInfo = LineSessionInfo


class _Data(msgspec.Struct):
    sessionId: str | None = None
    copilotVersion: str | None = None
    context: dict | None = None


class _Peek(msgspec.Struct):
    type: str | None = None
    timestamp: str | None = None
    data: _Data | None = None


_peek = msgspec.json.Decoder(_Peek)


def session_files(root: Path) -> list[Path]:
    return files_under(root / "session-state", "*/events.jsonl", lambda p: UUID.match(p.parent.name))


def describe(path: Path) -> SessionInfo | None:
    lines = file_lines(path)
    if lines is None:
        return None
    info = SessionInfo(id=path.parent.name, path=str(path), lines=len(lines))
    for peek in peeks(lines, _peek):
        if peek.type == "session.start" and peek.data is not None:
            if isinstance(peek.data.context, dict) and isinstance(peek.data.context.get("cwd"), str):
                info.cwd = peek.data.context["cwd"]
            if peek.data.copilotVersion:
                info.version = peek.data.copilotVersion
        stamp(info, peek.timestamp)
        if peek.type in ("user.message", "assistant.message"):
            info.messages += 1
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under ``root`` (the default store when ``None``)."""
    return listed(root, default_root, session_files, describe)


STORE = Store(default_root=default_root, discover=discover)
