"""Where the Gemini CLI keeps sessions, how to list them, and how to install one.

Layout (gemini-cli ``packages/core/src/config/storage.ts``, ``projectRegistry.ts``,
``chatRecordingService.ts``; observed on 0.61.0):

- the root is ``$GEMINI_CLI_HOME/.gemini`` when that variable is set (it replaces the
  home folder, ``utils/paths.ts::homedir``), else ``~/.gemini``;
- ``projects.json`` = ``{"projects": {<absolute cwd>: <slug>}}`` maps a project to its
  folder ``tmp/<slug>/``; the slug is the cwd's basename lower-cased with every run of
  characters outside ``[a-z0-9]`` as one ``-`` (``project`` when empty), ``-1``, ``-2``...
  on a collision; ``tmp/<slug>/.project_root`` holds the cwd and proves ownership (the CLI
  also finds an unregistered project through it);
- main sessions: ``tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<sid[:8]>.jsonl`` (legacy
  ``.json``); subagent chats: ``tmp/<slug>/chats/<parent session id>/<session id>.jsonl``
  (``kind: "subagent"``), never offered by ``--resume``;
- ``projectHash`` in a session is ``sha256(cwd)`` (hex).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.atomic import clean_stale
from ...core.atomic import stage
from ...core.atomic import write_atomic
from ...core.errors import InputError
from ...core.errors import UnsafeId
from ...core.ids import is_safe_relpath
from ...core.ids import shown
from ...core.jsonl import split_lines
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import UNREADABLE
from ...kit.store import Listing
from ...kit.store import skipped
from ...model.native import json_source

REGISTRY = "projects.json"
MARKER = ".project_root"


def default_root() -> Path:
    home = os.environ.get("GEMINI_CLI_HOME")
    return (Path(home) if home else Path.home()) / ".gemini"


def project_hash(cwd: str) -> str:
    return hashlib.sha256(cwd.encode("utf-8")).hexdigest()


def slugify(cwd: str) -> str:
    """The CLI's ``ProjectRegistry.slugify`` of the cwd's basename."""
    base = os.path.basename(cwd.rstrip("/")) or "project"
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", base.lower())).strip("-")
    return slug or "project"


def session_file_name(session_id: str, start_time: str) -> str:
    """``session-<YYYY-MM-DDTHH-MM>-<sid[:8]>.jsonl`` (``toISOString().slice(0, 16)``
    with ``:`` as ``-``)."""
    stamp = start_time[:16].replace(":", "-")
    return f"session-{stamp}-{session_id[:8]}.jsonl"


# --- listing ---------------------------------------------------------------------------


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    project: str  # the slug folder under tmp/
    kind: str = "main"
    parent_id: str | UnsetType = UNSET  # for a subagent chat
    cwd: str | UnsetType = UNSET
    project_hash: str | UnsetType = UNSET
    start_time: str | UnsetType = UNSET
    last_updated: str | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    lines: int = 0
    legacy: bool = False  # a single-object .json file


def session_files(root: Path) -> list[tuple[Path, str | None]]:
    """``(path, parent session id)`` of every session file under ``root/tmp``."""
    found: list[tuple[Path, str | None]] = []
    for chats in sorted((root / "tmp").glob("*/chats")):
        for path in sorted(chats.iterdir()):
            # a FIFO or a device so named is listed too: the read passes it over with a warning
            if path.name.startswith("session-") and path.suffix in (".json", ".jsonl") and not path.is_dir():
                found.append((path, None))
            elif path.is_dir():
                found.extend((p, path.name) for p in sorted(path.glob("*.jsonl")) if p.is_file())
    # 0.1.x kept no session file, only what /chat save wrote (docs/gemini_cli.md#versions-read)
    found.extend((p, None) for p in sorted((root / "tmp").glob("*/checkpoint-*.json")) if p.is_file())
    return found


def discover(root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """Every session under the store, main and subagent, with its metadata. Unreadable
    files are skipped; a missing root lists nothing."""
    root = Path(root) if root is not None else default_root()
    out = Listing()
    for path, parent in session_files(root):
        try:
            data = read_bytes(path)  # a regular file only (docs/guarantees.md#limits)
        except UNREADABLE as exc:
            line = skipped(path, exc)
            if line is not None:
                out.errors.append(line)  # one warning per file passed over
            continue
        info = describe(data, path, root)
        if info is not None:
            if parent is not None:
                info.parent_id = parent
            out.append(info)
    return out


def describe(data: bytes, path: Path, root: Path) -> SessionInfo | None:
    if path.name.startswith("checkpoint-"):
        return _describe_checkpoint(data, path, root)
    meta, lines, legacy = header(data)
    if not isinstance(meta.get("sessionId"), str):
        return None
    slug = path.relative_to(root / "tmp").parts[0]
    info = SessionInfo(id=meta["sessionId"], path=str(path), project=slug, lines=lines, legacy=legacy)
    for key, attr in (
        ("projectHash", "project_hash"),
        ("startTime", "start_time"),
        ("lastUpdated", "last_updated"),
        ("summary", "summary"),
        ("kind", "kind"),
    ):
        if isinstance(meta.get(key), str):
            setattr(info, attr, meta[key])
    marker = root / "tmp" / slug / MARKER
    try:
        cwd = marker.read_text(encoding="utf-8").strip()
        info.cwd = cwd
    except (OSError, UnicodeDecodeError):
        pass
    return info


_peek = msgspec.json.Decoder()


def _describe_checkpoint(data: bytes, path: Path, root: Path) -> SessionInfo | None:
    """A 0.1.x ``checkpoint-<tag>.json``: a bare list of API contents; anything else so
    named is not listed."""
    from .codec import is_checkpoint  # when a file is read: loading the store needs none

    try:
        value = _peek.decode(json_source(data))
    except msgspec.DecodeError:
        return None
    if not is_checkpoint(value):
        return None
    slug = path.relative_to(root / "tmp").parts[0]
    return SessionInfo(id=path.name.removesuffix(".json"), path=str(path), project=slug, lines=1, legacy=True)


def header(data: bytes) -> tuple[dict[str, Any], int, bool]:
    """The metadata in effect (first line, later metadata lines and ``$set`` merged,
    ``messages`` left out), the line count, and whether it is a legacy document."""
    stripped = json_source(data).lstrip()
    if stripped.startswith(b"{") and b"\n" in data.strip():
        try:
            whole = _peek.decode(json_source(data))
        except msgspec.DecodeError:
            whole = None
        if isinstance(whole, dict):
            whole.pop("messages", None)
            return whole, 1, True
    from .codec import classify  # when a file is read: loading the store (every export --all) needs none

    meta: dict[str, Any] = {}
    lines, _ = split_lines(data)
    for line in lines:
        if b'"sessionId"' not in line and b'"$set"' not in line:
            continue  # message records: no need to decode them
        try:
            value = _peek.decode(json_source(line))
        except msgspec.DecodeError:
            continue
        kind = classify(value)
        if kind is not None and kind.__name__ == "Metadata":
            meta.update({k: v for k, v in value.items() if k != "messages"})
        elif kind is not None and kind.__name__ == "SetRecord":
            meta.update({k: v for k, v in value["$set"].items() if k != "messages"})
    return meta, len(lines), False


def session_id_of(data: bytes) -> str | None:
    meta, _, _ = header(data)
    return meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None


# --- installing ------------------------------------------------------------------------


def read_registry(root: Path) -> dict[str, str]:
    try:
        value = json.loads((root / REGISTRY).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise RegistryError(f"{root / REGISTRY} is not readable JSON ({exc}); not touched") from exc
    projects = value.get("projects") if isinstance(value, dict) else None
    if not isinstance(projects, dict):
        raise RegistryError(f"{root / REGISTRY} has no 'projects' object; not touched")
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


class RegistryError(InputError):
    pass


def _owner(root: Path, slug: str) -> str | None:
    try:
        return (root / "tmp" / slug / MARKER).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def project_slug(root: Path, cwd: str, projects: dict[str, str] | None = None) -> str:
    """The slug the CLI will use for ``cwd`` in this store: its registration when the
    folder's marker agrees, else a folder whose marker names ``cwd``, else a new slug
    that no registration and no other project's marker holds (``ProjectRegistry.getShortId``)."""
    projects = read_registry(root) if projects is None else projects
    cwd = os.path.abspath(cwd)
    slug = projects.get(cwd)
    if slug and _owner(root, slug) in (None, cwd):
        return slug
    tmp = root / "tmp"
    if tmp.is_dir():
        for folder in sorted(tmp.iterdir()):
            if _owner(root, folder.name) == cwd:
                return folder.name
    taken = set(projects.values())
    base = slugify(cwd)
    for n in range(10_000):
        candidate = base if n == 0 else f"{base}-{n}"
        if candidate not in taken and _owner(root, candidate) in (None, cwd):
            return candidate
    raise RegistryError(f"no free project slug for {cwd}")


def register(root: Path, cwd: str, slug: str) -> tuple[bool, bool]:
    """Add ``cwd -> slug`` to ``projects.json`` and write the ``.project_root`` marker.
    Other registrations are kept (read, merge, atomic replace), under the lock folder the
    CLI's ``proper-lockfile`` uses (``projects.json.lock``). Returns ``(marker written,
    registration added)`` for :func:`unregister`."""
    cwd = os.path.abspath(cwd)
    marker = root / "tmp" / slug / MARKER
    marked = False
    if _owner(root, slug) is None:
        write_atomic(marker, cwd.encode("utf-8"))
        marked = True
    try:
        with _locked(root / (REGISTRY + ".lock")):
            current = _registry_document(root)
            if current["projects"].get(cwd) == slug:
                return marked, False
            current["projects"][cwd] = slug
            _write_registry(root, current)
    except BaseException:
        if marked:
            marker.unlink(missing_ok=True)
        raise
    return marked, True


def unregister(root: Path, cwd: str, slug: str, marked: bool, added: bool) -> None:
    """Take back what :func:`register` did for an install that failed: the store is left
    as it was, no registration or marker for a project without its chat."""
    cwd = os.path.abspath(cwd)
    if added:
        with _locked(root / (REGISTRY + ".lock")):
            current = _registry_document(root)
            if current["projects"].get(cwd) == slug:
                del current["projects"][cwd]
                if current["projects"] or len(current) > 1:
                    _write_registry(root, current)
                else:  # we made the file: remove it again
                    (root / REGISTRY).unlink(missing_ok=True)
    if marked:
        (root / "tmp" / slug / MARKER).unlink(missing_ok=True)


def _registry_document(root: Path) -> dict[str, Any]:
    projects_file = root / REGISTRY
    try:
        current = json.loads(projects_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        current = {"projects": {}}
    except (OSError, ValueError) as exc:
        raise RegistryError(f"{projects_file} is not readable JSON ({exc}); not touched") from exc
    if not isinstance(current, dict) or not isinstance(current.get("projects"), dict):
        raise RegistryError(f"{projects_file} has no 'projects' object; not touched")
    return current


def _write_registry(root: Path, document: dict[str, Any]) -> None:
    write_atomic(root / REGISTRY, json.dumps(document, indent=2, ensure_ascii=False).encode("utf-8"), overwrite=True)


class _locked:
    """The ``projects.json.lock`` folder (``proper-lockfile``'s lock, which the CLI takes
    too). It is stale when older than the CLI's 10 s, or at once when the txcodec run that
    made it is gone (a ``txcodec.<pid>`` mark inside it): a killed install never blocks
    the next one."""

    STALE = 10.0

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        self.path, self.timeout = path, timeout
        self.mark = path / f"txcodec.{os.getpid()}"

    def __enter__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                os.mkdir(self.path)
                self.mark.touch()
                return
            except FileExistsError:
                if self._stale():
                    self._remove()
                    continue
                if time.monotonic() > deadline:
                    raise RegistryError(f"{self.path} is held by another process") from None
                time.sleep(0.1)

    def _stale(self) -> bool:
        try:
            if time.time() - self.path.stat().st_mtime > self.STALE:
                return True
            owners = [
                int(p.name.split(".", 1)[1]) for p in self.path.iterdir() if re.fullmatch(r"txcodec\.\d+", p.name)
            ]
        except OSError:
            return False
        return bool(owners) and not any(_alive(pid) for pid in owners)

    def _remove(self) -> None:
        try:
            for entry in self.path.iterdir():
                if re.fullmatch(r"txcodec\.\d+", entry.name):
                    entry.unlink(missing_ok=True)
            os.rmdir(self.path)
        except OSError:
            pass

    def __exit__(self, *exc: Any) -> None:
        self.mark.unlink(missing_ok=True)
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def install(files: dict[str, bytes], root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Install a writer's output (``Written.files``) into a Gemini store.

    The chat file goes to the slug the CLI will use for the session's cwd in *this* store
    (an existing registration wins over the slug the writer chose), never overwriting a
    file; ``projects.json`` is merged, not replaced; ``.project_root`` is written only when
    the folder has none. All or nothing (docs/guarantees.md): the chat is written to a
    temporary first, the project is registered, the chat is linked in last; when a step
    fails, the registration and marker made for it are taken back. A folder that is a
    symlink leading out of the store is refused. Returns the chat file's path."""
    root = Path(root) if root is not None else default_root()
    cwd = _cwd_of(files)
    written_slug = next(iter(files)).split("/")[1]
    slug = project_slug(root, cwd)
    chats = []
    for rel, data in files.items():
        parts = rel.split("/")
        if rel == REGISTRY or parts[-1] == MARKER:
            continue
        if len(parts) < 3 or parts[0] != "tmp" or parts[1] != written_slug or not is_safe_relpath(rel):
            raise UnsafeId(f"unexpected file {shown(rel)} for a Gemini store")
        chats.append(("/".join(["tmp", slug, *parts[2:]]), data))
    for folder in (root, root / "tmp" / slug):
        clean_stale(folder)  # what a killed run left beside projects.json and .project_root
    staged = stage(root, chats, mode=None)
    try:
        marked, added = register(root, cwd, slug)
    except BaseException:
        staged.discard()
        raise
    try:
        return staged.commit()
    except BaseException:
        unregister(root, cwd, slug, marked, added)
        raise


def _cwd_of(files: dict[str, bytes]) -> str:
    for rel, data in files.items():
        if rel.endswith("/" + MARKER):
            return data.decode("utf-8").strip()
    raise ValueError("the files carry no .project_root: the session's cwd is unknown")


def install_session(gemini_root: Path, cwd: str, name: str, data: bytes) -> Path:
    """Put an existing session file (``name`` as on disk) where the CLI looks for
    ``cwd``'s sessions; used by the resume check."""
    if not name.startswith("session-"):
        name = f"session-{name}"
    slug = project_slug(gemini_root, cwd)
    register(gemini_root, cwd, slug)
    return write_atomic(gemini_root / "tmp" / slug / "chats" / name, data)


def main_files(root: Path) -> list[Path]:
    """The main chats under ``root`` (not the subagent chats filed under one)."""
    return [p for p, parent in session_files(root) if parent is None]


def not_a_session(path: Path, folder: Path) -> bool:
    """A subagent's chat (``chats/<parent id>/...``) beside its parent's: read with it."""
    chats = path.parent.parent
    return chats.name == "chats" and any(chats.glob(f"session-*-{path.parent.name[:8]}.json*"))


STORE = Store(
    default_root=default_root, discover=discover, main_files=main_files, install=install, not_a_session=not_a_session
)
