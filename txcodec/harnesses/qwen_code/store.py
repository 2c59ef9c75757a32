"""Where Qwen Code keeps sessions, and a shallow listing of them.

Qwen Code 0.24.4 (its ``Storage`` class): the runtime base directory is
``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen``; a project's sessions are
``<base>/projects/<cwd with every character outside [A-Za-z0-9] replaced by ->/chats/
<session id>.jsonl``. Resume finds a file only under the cwd's folder, only when its name
matches ``^[0-9a-fA-F-]{32,36}\\.jsonl$``, and only when the ``cwd`` of its first record is
the project root (the client compares their sha256 hashes).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
from msgspec import UNSET

from ...kit.registry import Store
from ...kit.store import LineSessionInfo
from ...kit.store import file_lines
from ...kit.store import files_under
from ...kit.store import listed
from ...kit.store import peeks
from ...kit.store import stamp

SESSION_FILE = re.compile(r"^[0-9a-fA-F-]{32,36}\.jsonl$")


def default_root() -> Path:
    for name in ("QWEN_RUNTIME_DIR", "QWEN_HOME"):
        value = os.environ.get(name)
        if value:
            return Path(value).expanduser().resolve()
    return Path.home() / ".qwen"


def munge(cwd: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def session_relpath(cwd: str, session_id: str) -> str:
    return f"projects/{munge(cwd)}/chats/{session_id}.jsonl"


SessionInfo = LineSessionInfo


class _Peek(msgspec.Struct):
    sessionId: str | None = None
    type: str | None = None
    cwd: str | None = None
    version: str | None = None
    timestamp: str | None = None


_peek = msgspec.json.Decoder(_Peek)


def session_files(root: Path) -> list[Path]:
    return files_under(root / "projects", "*/chats/*.jsonl", lambda p: SESSION_FILE.match(p.name))


def describe(path: Path) -> SessionInfo | None:
    lines = file_lines(path)
    if lines is None:
        return None
    info = SessionInfo(id=path.stem, path=str(path), lines=len(lines))
    for peek in peeks(lines, _peek):
        if info.cwd is UNSET and peek.cwd:
            info.cwd = peek.cwd
        if info.version is UNSET and peek.version:
            info.version = peek.version
        stamp(info, peek.timestamp)
        if peek.type in ("user", "assistant", "tool_result"):
            info.messages += 1
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session file under ``root`` (the default store when ``None``)."""
    return listed(root, default_root, session_files, describe)


STORE = Store(default_root=default_root, discover=discover, main_files=session_files)
