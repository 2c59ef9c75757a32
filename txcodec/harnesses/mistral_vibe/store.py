"""Where Mistral Vibe keeps sessions, a shallow listing of them, and the unified store's
digest chain.

mistral-vibe 3.0.2: the home is ``$VIBE_HOME``, else ``~/.vibe`` (``vibe/utils/vibe_home.py``);
sessions are under ``logs/session/`` (``SessionLoggingConfig.save_dir``). A session is a
folder, in one of two forms (``records.py``):

- legacy ``session_<anything>_<id[:8]>/`` with ``meta.json`` and ``messages.jsonl``: the
  form ``vibe --resume <id>`` imports (into a new unified session) and the one txcodec
  writes, since the unified store refuses any session whose digests it did not compute;
- unified ``unified/<id>/``: ``CURRENT`` -> ``generations/<generation>/manifest.json`` ->
  the checkpoint's ``chunks/<sha256>.json`` hold the committed history; ``meta.json``
  beside ``CURRENT`` holds the session's id, work folder and times. txcodec reads it and
  never writes it.

The digests, as observed on files 3.0.2 wrote (:func:`digest_errors` checks each): a file's
digest is the SHA-256 of its bytes without the final line feed; ``CURRENT.manifest_sha256``
is the manifest's; the manifest's ``checkpoint`` / ``projection_state`` / ``runtime_state``
``sha256`` are those files' and their ``chunks`` name chunk files by their digest. Journal
records chain by ``previous_record_sha256`` = the previous record's ``record_sha256``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec import UnsetType

from ...core.errors import InputError
from ...core.zst import SMALL_FILE
from ...core.zst import read_bytes
from ...kit.registry import Store
from ...kit.store import listed

LEGACY_MESSAGES, META, CURRENT = "messages.jsonl", "meta.json", "CURRENT"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_GENERATION = re.compile(r"[0-9]{1,32}")


def vibe_home() -> Path:
    value = os.environ.get("VIBE_HOME")
    return Path(value).expanduser() if value else Path.home() / ".vibe"


def default_root() -> Path:
    """The home; written paths are relative to it (``logs/session/...``)."""
    return vibe_home()


def legacy_relpath(folder_name: str, name: str) -> str:
    return f"logs/session/{folder_name}/{name}"


class SessionInfo(msgspec.Struct, omit_defaults=True):
    id: str
    path: str
    form: str  # legacy | unified
    cwd: str | UnsetType = UNSET
    title: str | UnsetType = UNSET
    started: str | UnsetType = UNSET
    updated: str | UnsetType = UNSET
    messages: int | UnsetType = UNSET  # of a legacy session (a unified one keeps them in chunks)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a folder we may not search holds no session we can read
        return False


def session_file(folder: Path) -> Path | None:
    """A session folder's file: ``messages.jsonl`` (legacy, beside ``meta.json``) or
    ``CURRENT`` (unified)."""
    folder = Path(folder)
    if _is_file(folder / LEGACY_MESSAGES) and _is_file(folder / META):
        return folder / LEGACY_MESSAGES
    if _is_file(folder / CURRENT) and _is_file(folder / META):
        return folder / CURRENT
    return None


def session_files(root: Path) -> list[Path]:
    base = Path(root) / "logs" / "session"
    found = [p for p in base.glob(f"session_*/{LEGACY_MESSAGES}") if _is_file(p.parent / META)]
    found += [p for p in base.glob(f"unified/*/{CURRENT}")]
    return sorted(found)


def read_meta(folder: Path) -> dict[str, Any]:
    """``meta.json`` of a session folder; ``{}`` when missing or not an object."""
    try:
        value = json.loads(read_bytes(Path(folder) / META, SMALL_FILE))
    except FileNotFoundError:
        return {}
    except (ValueError, RecursionError):  # not JSON, past the limit, or nested too deeply: no metadata
        return {}
    return value if isinstance(value, dict) else {}


def describe(path: Path) -> SessionInfo | None:
    meta = read_meta(path.parent)
    sid = meta.get("session_id")
    if not isinstance(sid, str):
        return None
    info = SessionInfo(id=sid, path=str(path), form="unified" if path.name == CURRENT else "legacy")
    environment = meta.get("environment")
    if isinstance(environment, dict) and isinstance(environment.get("working_directory"), str):
        info.cwd = environment["working_directory"]
    for key, attr in (("title", "title"), ("start_time", "started"), ("end_time", "updated")):
        if isinstance(meta.get(key), str):
            setattr(info, attr, meta[key])
    if info.form == "legacy":
        info.messages = _count_messages(path)
    return info


class _Role(msgspec.Struct):
    role: Any = None


def _count_messages(path: Path) -> int | UnsetType:
    """User and assistant lines, a run of tool answers as one (the user turn Common holds
    them in, as a Claude Code tool result is a user record); the system prompt is not one."""
    try:
        data = read_bytes(path)  # a regular file only: a FIFO raises, and the listing reports it
    except FileNotFoundError:
        return UNSET
    count, previous = 0, None
    for line in data.splitlines():
        try:
            role = msgspec.json.decode(line, type=_Role).role
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if role in ("user", "assistant") or role == "tool" and previous != "tool":
            count += 1
        previous = role
    return count


def discover(root: Path | None = None) -> list[SessionInfo]:
    """Every session under ``root`` (the default home when ``None``), both forms."""
    return listed(root, default_root, session_files, describe)


# -- the unified store -----------------------------------------------------------------------


def digest(data: bytes) -> str:
    return hashlib.sha256(data[:-1] if data.endswith(b"\n") else data).hexdigest()


def _json_file(path: Path, folder: Path) -> tuple[bytes, Any]:
    """A file of the unified session in ``folder``: a regular file, within the folder
    once links are followed (a chunk linked to a file elsewhere is not read), decoded."""
    try:
        data = _session_bytes(path, folder)
        return data, json.loads(data)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable unified session file ({one_line(exc)})") from exc
    except RecursionError:
        raise InputError(f"{path}: not a readable unified session file (nested too deeply)") from None


def _session_bytes(path: Path, folder: Path) -> bytes:
    if not _within(path, folder):
        raise InputError("a link to a file outside its session: not read")
    return read_bytes(path)


def _within(path: Path, folder: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, top]) == top


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def unified_history(folder: Path, current: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """The committed history of a unified session (the checkpoint's chunks, in order) and
    every digest of the chain that does not match (the client refuses such a session:
    "manifest digest mismatch")."""
    generation = current.get("generation")
    if not isinstance(generation, str) or not _GENERATION.fullmatch(generation):
        raise InputError(f"{folder / CURRENT}: no valid generation")
    gen = folder / "generations" / generation
    manifest_bytes, manifest = _json_file(gen / "manifest.json", folder)
    errors = []
    if current.get("manifest_sha256") != digest(manifest_bytes):
        errors.append(f"{gen / 'manifest.json'}: digest differs from CURRENT's manifest_sha256")
    if not isinstance(manifest, dict):
        raise InputError(f"{gen / 'manifest.json'}: not an object")
    history: list[Any] = []
    for part in ("checkpoint", "projection_state", "runtime_state"):
        entry = manifest.get(part)
        if not isinstance(entry, dict):
            continue
        name = entry.get("path")
        if isinstance(name, str) and "/" not in name and _is_file(gen / name):
            try:
                data = _session_bytes(gen / name, folder)
            except (OSError, ValueError) as exc:
                raise InputError(f"{gen / name}: not a readable unified session file ({one_line(exc)})") from exc
            if entry.get("sha256") != digest(data):
                errors.append(f"{gen / name}: digest differs from the manifest's")
        for chunk in entry.get("chunks") or []:
            if not isinstance(chunk, str) or not _HEX64.fullmatch(chunk):
                errors.append(f"{gen / 'manifest.json'}: {part} names an invalid chunk")
                continue
            data, value = _json_file(folder / "chunks" / f"{chunk}.json", folder)
            if digest(data) != chunk:
                errors.append(f"{folder / 'chunks' / chunk}.json: digest differs from its name")
            if part == "checkpoint":
                if not isinstance(value, list):
                    raise InputError(f"{folder / 'chunks' / chunk}.json: a checkpoint chunk that is not a list")
                history.extend(value)
    return history, errors


def journal_errors(folder: Path) -> list[str]:
    """Journal records whose ``previous_record_sha256`` is not the record before's
    ``record_sha256`` (each segment is a chain of its own)."""
    errors = []
    for segment in sorted((Path(folder) / "journal").glob("*.jsonl")):
        previous = None
        for n, line in enumerate(read_bytes(segment).splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                errors.append(f"{segment}:{n}: not JSON")
                continue
            if n > 1 and isinstance(record, dict) and record.get("previous_record_sha256") != previous:
                errors.append(f"{segment}:{n}: previous_record_sha256 breaks the chain")
            previous = record.get("record_sha256") if isinstance(record, dict) else None
    return errors


STORE = Store(default_root=default_root, discover=discover, session_file=session_file)
