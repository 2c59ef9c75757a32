"""Where aider keeps its chat history, a listing of it, and installing one.

aider-chat 0.86.2 (``aider/args.py``): the history is ``--chat-history-file``, whose
environment form is ``$AIDER_CHAT_HISTORY_FILE``, else ``.aider.chat.history.md`` at the
root of the git repository aider runs in, else in the folder it runs in. There is one
history per project and no session id: ``--restore-chat-history`` restores the whole file
(every run appended to it).

The store's root is the project folder (the current one by default): ``list`` shows its
history as one session named after the folder, and ``--install`` writes the history there,
never over an existing one.
"""

from __future__ import annotations

import os
from datetime import datetime
from datetime import timezone
from pathlib import Path

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.atomic import install_files
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import described

HISTORY = ".aider.chat.history.md"
FILE_NAMES = (HISTORY,)  # a file with this name is an aider history, whatever its bytes
_STARTED = "# aider chat started at "


def project_root(start: Path | None = None) -> Path:
    """The git repository's root around ``start`` (the current folder), else ``start``."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def root_for(cwd: str | os.PathLike[str]) -> Path:
    """Where aider run in ``cwd`` keeps its history (``--install --cwd DIR`` installs there)."""
    value = os.environ.get("AIDER_CHAT_HISTORY_FILE")
    return Path(value).expanduser().parent if value else project_root(Path(cwd))


def default_root() -> Path:
    value = os.environ.get("AIDER_CHAT_HISTORY_FILE")
    return Path(value).expanduser().parent if value else project_root()


def history_file(root: Path) -> Path:
    value = os.environ.get("AIDER_CHAT_HISTORY_FILE")
    return Path(value).expanduser() if value and Path(value).expanduser().parent == root else root / HISTORY


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    cwd: str | UnsetType = UNSET
    first_timestamp: str | UnsetType = UNSET
    updated: str | UnsetType = UNSET
    messages: int = 0
    first_prompt: str | UnsetType = UNSET


def describe(path: Path) -> SessionInfo | None:
    try:
        text = read_bytes(path).decode("utf-8", errors="replace")
        modified = path.stat().st_mtime
    except FileNotFoundError:
        return None
    info = SessionInfo(id=path.resolve().parent.name or "aider", path=str(path), cwd=str(path.resolve().parent))
    info.updated = datetime.fromtimestamp(modified, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    for line in text.splitlines():
        if line.startswith(_STARTED) and info.first_timestamp is UNSET:
            info.first_timestamp = line[len(_STARTED) :].strip()
    from .read import parse

    messages = parse(text)
    info.messages = len(messages)
    prompt = next((content.strip() for role, content, _ in messages if role == "user" and content.strip()), None)
    if prompt is not None:
        info.first_prompt = prompt[:300]
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """The history of the project folder ``root`` (the default one when ``None``)."""
    root = Path(root) if root is not None else default_root()
    path = history_file(root)
    # a history that is there but cannot be read (a FIFO, no permission) is reported, not left out in silence
    return described([path] if os.path.lexists(path) and not path.is_dir() else [], describe)


def install(files: dict[str, bytes], root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write the history into the project folder, refusing when one is already there (aider
    would restore both)."""
    root = Path(root) if root is not None else default_root()
    name = history_file(root).name  # $AIDER_CHAT_HISTORY_FILE may name it otherwise
    return install_files(root, {name if rel == HISTORY else rel: data for rel, data in files.items()})


STORE = Store(default_root=default_root, discover=discover, file_names=FILE_NAMES, root_for=root_for, install=install)
