"""Where OpenHands keeps conversations, loading one folder as one session, and a listing.

OpenHands CLI 1.16.0 keeps each conversation in ``~/.openhands/conversations/<uuid without
dashes>/`` (docs/openhands.md#format-facts): ``base_state.json`` and ``events/event-<seq>-<event uuid>.json``.
``openhands --resume <uuid>`` replays the events in sequence order; ``base_state.json`` may
be missing (a copy without it resumed).

A conversation is ONE session to every command: :func:`session_folder` finds the folder
from the folder itself, its ``events`` folder or any file in it, and :func:`load_folder`
reads every file of it into one :class:`FolderSession`, a "line" per file (the base state
first, then the events in sequence order). Each file keeps its own bytes: an untouched
session writes back every file byte for byte (:meth:`FolderSession.files`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.zst import SMALL_FILE
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import described
from ...kit.store import stamp
from ...model.native import Line
from ...model.native import NativeSession
from ...model.native import decode_line
from ...model.native import json_source

BASE_STATE = "base_state.json"
EVENTS = "events"
EVENT_FILE = re.compile(r"^event-(\d{5,})-([0-9A-Za-z-]{1,64})\.json\Z")
CONVERSATION = re.compile(r"^[0-9a-f]{32}\Z")  # a UUID without its dashes


def default_root() -> Path:
    """The conversations folder (``$OPENHANDS_CONVERSATIONS_DIR`` when set, as the CLI's
    ``locations.py`` reads it; else under ``$OPENHANDS_PERSISTENCE_DIR`` or ``~/.openhands``)."""
    value = os.environ.get("OPENHANDS_CONVERSATIONS_DIR")
    if value:
        return Path(value).expanduser()
    base = os.environ.get("OPENHANDS_PERSISTENCE_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".openhands") / "conversations"


def conversation_dir(session_id: str) -> str:
    """The folder name of a conversation id (a UUID, written with or without dashes)."""
    return session_id.replace("-", "").lower()


def event_name(sequence: int, event_id: str) -> str:
    return f"event-{sequence:05d}-{event_id}.json"


def session_folder(path: str | os.PathLike[str]) -> Path | None:
    """The conversation folder ``path`` belongs to: the folder (it holds ``events/``), its
    ``events`` folder, an event file or its ``base_state.json``; ``None`` otherwise."""
    path = Path(path)
    if path.is_dir():
        if (path / EVENTS).is_dir():
            return path
        if path.name == EVENTS and any(EVENT_FILE.match(p.name) for p in path.iterdir()):
            return path.parent
        return None
    if not path.is_file():
        return None
    if path.parent.name == EVENTS and EVENT_FILE.match(path.name):
        return path.parent.parent
    if path.name == BASE_STATE and (path.parent / EVENTS).is_dir():
        return path.parent
    return None


def event_files(folder: Path) -> list[Path]:
    """The event files in the order the client replays them: by sequence number."""
    events = folder / EVENTS
    found = (
        [(int(m.group(1)), p.name, p) for p in events.iterdir() if (m := EVENT_FILE.match(p.name))]
        if events.is_dir()
        else []
    )
    return [p for _, _, p in sorted(found)]


@dataclass
class FolderSession(NativeSession):
    """A conversation folder as one session: ``members[i]`` is the path (relative to the
    folder) of the file line ``i`` came from, and whether that file ended in LF."""

    members: list[tuple[str, bool]] = field(default_factory=list)

    def files(self) -> dict[str, bytes]:
        """Each file's bytes: the original ones for a line nobody changed."""
        out = {}
        for line, (name, newline) in zip(self.lines, self.members):
            data = bytes(self.emit(line))
            out[name] = data + b"\n" if newline else data
        return out


def session_file(folder: str | os.PathLike[str]) -> Path | None:
    """A conversation folder names itself: the session is the folder (see the registry's
    ``session_in_folder``); ``None`` for any other folder."""
    try:
        found = session_folder(folder)
    except OSError:  # a folder we may not search is not a session folder (verify reports it)
        return None
    return found if found is not None and found == Path(folder) else None


def load_folder(folder: str | os.PathLike[str]) -> FolderSession:
    from .codec import CODEC  # when a folder is read: loading the store (every export --all) needs none

    folder = Path(folder)
    members = ([folder / BASE_STATE] if (folder / BASE_STATE).is_file() else []) + event_files(folder)
    session = FolderSession("openhands", CODEC, path=folder)
    for path in members:
        data = read_bytes(path)  # a regular file only (docs/guarantees.md#limits)
        newline = data.endswith(b"\n")
        body = data[:-1] if newline else data
        session.lines.append(Line(body, decode_line(CODEC.decode, body), False))
        session.members.append((path.relative_to(folder).as_posix(), newline))
    return session


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    cwd: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    first_timestamp: str | UnsetType = UNSET
    last_timestamp: str | UnsetType = UNSET
    messages: int = 0
    first_prompt: str | UnsetType = UNSET


class _Peek(msgspec.Struct):
    kind: str | None = None
    timestamp: str | None = None
    source: str | None = None
    llm_response_id: str | None = None


# the events that answer a call: a run of them is one message (a user turn of tool results)
_ANSWERS = ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation")


_peek = msgspec.json.Decoder(_Peek)
_any = msgspec.json.Decoder()


def describe(folder: Path) -> SessionInfo | None:
    try:
        events = event_files(folder)
    except OSError:
        return None
    if not events:
        return None
    ident = folder.name
    info = SessionInfo(id=dashed(ident), path=str(folder))
    previous: tuple[str | None, str | None] = (None, None)  # the last counted event: kind, response
    for path in events:
        data = json_source(read_bytes(path))  # a FIFO or a file that cannot be read raises: the listing says so
        try:
            peek = _peek.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        stamp(info, peek.timestamp)
        # messages as the reader makes them: a message event each, the calls of one model
        # response together, a run of answers together
        if peek.kind == "MessageEvent" and peek.source in ("user", "agent"):
            info.messages += 1
            previous = (peek.kind, None)
            if peek.source == "user" and info.first_prompt is UNSET:
                prompt = _first_text(data)
                if prompt:
                    info.first_prompt = prompt[:300]
        elif peek.kind == "ActionEvent":
            if previous != ("ActionEvent", peek.llm_response_id):
                info.messages += 1
            previous = ("ActionEvent", peek.llm_response_id)
        elif peek.kind in _ANSWERS:
            if previous[0] != "answers":
                info.messages += 1
            previous = ("answers", None)
    try:
        state = _any.decode(read_bytes(folder / BASE_STATE, SMALL_FILE))
    except (OSError, ValueError, RecursionError):  # none, unreadable, not JSON or nested too deeply
        state = None
    if isinstance(state, dict):
        workspace = state.get("workspace")
        if isinstance(workspace, dict) and isinstance(workspace.get("working_dir"), str):
            info.cwd = workspace["working_dir"]
        agent = state.get("agent")
        llm = agent.get("llm") if isinstance(agent, dict) else None
        if isinstance(llm, dict) and isinstance(llm.get("model"), str):
            info.model = llm["model"]
    return info


def _first_text(data: bytes) -> str | None:
    try:
        event = _any.decode(data)
    except msgspec.DecodeError:
        return None
    llm = event.get("llm_message") if isinstance(event, dict) else None
    content = llm.get("content") if isinstance(llm, dict) else None
    for part in content if isinstance(content, list) else []:
        if (
            isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
            and part["text"].strip()
        ):
            return part["text"].strip()
    return None


def dashed(hex_id: str) -> str:
    """The UUID as ``--resume`` takes it (with dashes) when the folder name is one."""
    if CONVERSATION.match(hex_id):
        return f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:]}"
    return hex_id


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every conversation folder under ``root`` (the default conversations folder when ``None``)."""
    root = Path(root) if root is not None else default_root()
    if not root.is_dir():
        return []
    return described((p for p in sorted(root.iterdir()) if p.is_dir() and (p / EVENTS).is_dir()), describe)


STORE = Store(
    default_root=default_root,
    discover=discover,
    session_file=session_file,
    session_folder=session_folder,
    load_folder=load_folder,
)
