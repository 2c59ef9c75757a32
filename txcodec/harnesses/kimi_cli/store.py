"""Where Kimi CLI keeps sessions, a shallow listing of them, and installing one.

kimi-cli 1.51.0 (``kimi_cli/share.py``, ``kimi_cli/metadata.py``): the store is
``$KIMI_SHARE_DIR``, else ``~/.kimi``. A session is the folder
``sessions/<md5 of the work folder's path>/<session id>/`` holding ``context.jsonl`` (the
conversation resume sends), ``wire.jsonl`` (the UI event log) and ``state.json``
(approvals, title, todos); resume needs ``context.jsonl`` alone (docs/kimi_cli.md#format-facts). The
work folder must be listed in ``kimi.json`` (``{"work_dirs": [{"path", "kaos": "local",
"last_session_id"}]}``): when it is not, ``kimi -r <id>`` empties the session's
``context.jsonl`` and starts a new one with exit 0. :func:`install` therefore always
registers the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.atomic import TargetExists
from ...core.atomic import stage
from ...core.atomic import update_locked
from ...core.atomic import write_atomic
from ...core.errors import InputError
from ...core.errors import StoreError
from ...core.ids import check_id
from ...core.ids import is_safe_relpath
from ...core.ids import shown
from ...core.zst import SMALL_FILE
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import described
from ...kit.store import file_lines
from ...kit.store import files_under
from ...kit.store import peeks

REGISTRY = "kimi.json"
CONTEXT = "context.jsonl"


def default_root() -> Path:
    value = os.environ.get("KIMI_SHARE_DIR")
    return Path(value).expanduser() if value else Path.home() / ".kimi"


def work_dir_hash(cwd: str) -> str:
    """The name of a work folder's sessions folder (``WorkDirMeta.sessions_dir``)."""
    return hashlib.md5(cwd.encode("utf-8")).hexdigest()


def session_relpath(cwd: str, session_id: str) -> str:
    return f"sessions/{work_dir_hash(cwd)}/{session_id}/{CONTEXT}"


def registry_entry(cwd: str, session_id: str) -> bytes:
    """The ``kimi.json`` a writer puts beside the session: its work folder alone
    (:func:`install` merges it into an existing one)."""
    entry = {"path": cwd, "kaos": "local", "last_session_id": session_id}
    return json.dumps({"work_dirs": [entry]}, ensure_ascii=False, indent=2).encode() + b"\n"


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    cwd: str | UnsetType = UNSET
    registered: bool = False  # the work folder is in kimi.json (else -r cannot resume it)
    lines: int = 0
    messages: int = 0


class _Peek(msgspec.Struct):
    role: str | None = None


_peek = msgspec.json.Decoder(_Peek)


def _work_dirs(root: Path) -> dict[str, str]:
    """md5 folder name -> work folder path, from ``kimi.json`` (empty when unreadable)."""
    try:
        value = json.loads(read_bytes(root / REGISTRY, SMALL_FILE))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply (docs/guarantees.md#limits)
        return {}
    dirs = value.get("work_dirs") if isinstance(value, dict) else None
    out = {}
    for entry in dirs if isinstance(dirs, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and entry.get("kaos", "local") == "local":
            out[work_dir_hash(entry["path"])] = entry["path"]
    return out


def work_dir_of(path: Path) -> str | None:
    """The work folder of the context file at ``path`` when it lies in a store
    (``<root>/sessions/<md5>/<id>/context.jsonl``) whose ``kimi.json`` lists it."""
    parts = Path(path).parts
    if len(parts) < 5 or parts[-4] != "sessions":
        return None
    return _work_dirs(Path(*parts[:-4])).get(parts[-3])


def session_files(root: Path) -> list[Path]:
    return files_under(root / "sessions", f"*/*/{CONTEXT}")


def session_file(folder: Path) -> Path | None:
    """A session folder's conversation file (a session folder is one session)."""
    path = Path(folder) / CONTEXT
    try:
        return path if path.is_file() else None
    except OSError:  # a folder we may not search is not a session folder (verify reports it)
        return None


def describe(path: Path, work_dirs: dict[str, str] | None = None) -> SessionInfo | None:
    lines = file_lines(path)
    if lines is None:
        return None
    info = SessionInfo(id=path.parent.name, path=str(path), lines=len(lines))
    cwd = (work_dirs or {}).get(path.parent.parent.name)
    if cwd is not None:
        info.cwd, info.registered = cwd, True
    previous = None
    for role in (peek.role for peek in peeks(lines, _peek)):
        # a run of tool answers is one message (the user turn Common holds them in), as a
        # Claude Code tool result is a user record
        if role in ("user", "assistant") or role == "tool" and previous != "tool":
            info.messages += 1
        previous = role
    return info


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under ``root`` (the default store when ``None``)."""
    root = Path(root) if root is not None else default_root()
    work_dirs = _work_dirs(root)
    return described(session_files(root), lambda p: describe(p, work_dirs))


def install(files: dict[str, bytes], root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Install a writer's output: the session folder (never overwriting) and its work
    folder merged into ``kimi.json`` (other folders kept; its ``last_session_id`` set).

    Kill-safe (docs/guarantees.md, "Atomic installs"): the files go to temporaries, the
    work folder is registered (under the registry lock, so parallel installs keep every
    entry), and the context file is linked in last, so no kill leaves a folder kimi would
    find unregistered (``kimi -r`` would empty it). A retry that finds the very same
    session in place but its folder not registered registers it; when a step fails, what
    this install did is taken back. Returns the paths written, the context file first."""
    root = Path(root) if root is not None else default_root()
    entry = _entry_of(files)
    cwd, session_id = entry["path"], entry["last_session_id"]
    session = {rel: data for rel, data in files.items() if rel != REGISTRY}
    for rel in session:
        parts = rel.split("/")
        if len(parts) != 4 or parts[0] != "sessions" or parts[1] != work_dir_hash(cwd) or not is_safe_relpath(rel):
            raise InputError(f"unexpected file {shown(rel)} for a Kimi CLI store")
        check_id(parts[2], "session id")
    main = next((rel for rel in session if rel.endswith("/" + CONTEXT)), None)
    if main is None:
        raise InputError(f"the files carry no {CONTEXT}")
    staged = stage(root, [(main, session[main]), *((r, d) for r, d in session.items() if r != main)], complete_ok=True)
    try:
        if staged.complete and work_dir_hash(cwd) in _work_dirs(root):
            raise TargetExists(f"{staged.main} already exists; not overwritten")
        undo = register(root, cwd, session_id)
    except BaseException:
        staged.discard()
        raise
    try:
        paths = staged.commit()
    except BaseException:
        unregister(root, cwd, session_id, undo)
        raise
    return [*paths, root / REGISTRY]


def install_files_for(
    root: Path, cwd: str, session_id: str, files: dict[str, bytes], *, register_dir: bool = True
) -> Path:
    """Put a session's files (by name: ``context.jsonl`` …) where kimi looks for ``cwd``'s
    session ``session_id``, and (unless told not to) register ``cwd``; used by the resume
    check. Returns the session folder."""
    folder = root / "sessions" / work_dir_hash(cwd) / check_id(session_id, "session id")
    for name, data in files.items():
        write_atomic(folder / name, data)
    if register_dir:
        register(root, cwd, session_id)
    return folder


def _entry_of(files: dict[str, bytes]) -> dict:
    try:
        value = json.loads(files[REGISTRY])
        entry = value["work_dirs"][0]
        if isinstance(entry.get("path"), str) and isinstance(entry.get("last_session_id"), str):
            return entry
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        pass
    raise InputError(f"the files carry no usable {REGISTRY}: the session's work folder is unknown")


_ADDED = "added"  # what register() did, for unregister(): the entry was new


def register(root: Path, cwd: str, session_id: str) -> str | None:
    """List ``cwd`` in ``kimi.json`` with ``session_id`` as its last session (``kimi -C``
    continues it); the other entries and keys are kept. The file is read, changed and
    replaced under the registry lock. Returns what :func:`unregister` needs to take it
    back: ``"added"`` for a new entry, else the entry's previous last session."""
    path = root / REGISTRY
    undo: list[str | None] = [None]

    def change(old: bytes | None) -> bytes:
        try:
            value = json.loads(old) if old is not None else {}
        except ValueError as exc:
            raise StoreError(f"{path}: not a readable Kimi CLI registry ({exc})") from exc
        if not isinstance(value, dict) or not isinstance(value.get("work_dirs", []), list):
            raise StoreError(f"{path}: not a Kimi CLI registry (no work_dirs list)")
        dirs = value.setdefault("work_dirs", [])
        for entry in dirs:
            if isinstance(entry, dict) and entry.get("path") == cwd and entry.get("kaos", "local") == "local":
                previous = entry.get("last_session_id")
                undo[0] = previous if isinstance(previous, str) else None
                entry["last_session_id"] = session_id
                break
        else:
            dirs.append({"path": cwd, "kaos": "local", "last_session_id": session_id})
            undo[0] = _ADDED
        return json.dumps(value, ensure_ascii=False, indent=2).encode() + b"\n"

    update_locked(path, change, mode=0o600)
    return undo[0]


def unregister(root: Path, cwd: str, session_id: str, undo: str | None) -> None:
    """Take back what :func:`register` did for an install that failed, unless another
    install changed the entry since."""
    path = root / REGISTRY

    def change(old: bytes | None) -> bytes | None:
        try:
            value = json.loads(old) if old is not None else None
        except ValueError:
            return None
        dirs = value.get("work_dirs") if isinstance(value, dict) else None
        for n, entry in enumerate(dirs if isinstance(dirs, list) else []):
            if isinstance(entry, dict) and entry.get("path") == cwd and entry.get("last_session_id") == session_id:
                if undo == _ADDED:
                    del dirs[n]
                elif undo is None:
                    entry.pop("last_session_id", None)
                else:
                    entry["last_session_id"] = undo
                return json.dumps(value, ensure_ascii=False, indent=2).encode() + b"\n"
        return None

    try:
        update_locked(path, change, mode=0o600)
    except OSError:
        pass  # the install's own error is the one to report


STORE = Store(default_root=default_root, discover=discover, session_file=session_file, install=install)
