"""Installs that race, fail or were cut short keep the stores' registries whole (issue 33).

- item 2: parallel installs (many sessions, several worker processes) into one store keep
  every session and every registry entry (``kimi.json``, Continue's ``sessions.json``,
  Gemini's ``projects.json``, cline's database), for every harness with an install step;
- item 3: a retry that finds the session in place but not registered registers it;
- item 4: a Continue install that fails (a damaged ``sessions.json``, a full disk) leaves
  nothing behind, and the retry after the repair succeeds;
- item 18: a cline install that fails leaves no empty session folder.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import msgspec
import pytest

from txcodec import api
from txcodec.core import atomic
from txcodec.core.atomic import TargetExists
from txcodec.core.errors import StoreError
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.loss import LossReport

# every harness that installs without its real client (opencode and kilo import through
# theirs; aider keeps one history file per project folder, nothing shared to race on)
PARALLEL = [
    "claude_code",
    "codex",
    "gemini_cli",
    "qwen_code",
    "pi",
    "copilot_cli",
    "droid",
    "continue_cli",
    "kimi_cli",
    "mistral_vibe",
    "cline",
    "openhands",
]
SESSIONS = 32
WORKERS = 8


def _written(harness: str, n: int) -> registry.Written:
    """Session ``n``: its own id, time and project folder (a registry entry of its own)."""
    sid = f"0d0d0d0d-1111-4222-8333-{n:012d}"
    conversation = Conversation(
        meta=Meta(id=sid, cwd=f"/tmp/par-project-{n}", started_at=f"2026-01-02T03:{n // 60:02d}:{n % 60:02d}.000Z"),
        messages=[Message("user", [Text(f"question {n}")]), Message("assistant", [Text(f"answer {n}")])],
    )
    return registry.get(harness).write(
        conversation, LossReport(), WriteOptions(session_id=sid, cwd=f"/tmp/par-project-{n}")
    )


def _install(job: tuple[str, int, str]) -> str:
    harness, n, root = job
    api.install(_written(harness, n), harness, root)
    return "ok"


def _registered(harness: str, root: Path) -> int | None:
    """How many sessions the store's registry lists (None: the store has none)."""
    if harness == "kimi_cli":
        return len(json.loads((root / "kimi.json").read_text())["work_dirs"])
    if harness == "continue_cli":
        return len(json.loads((root / "sessions.json").read_text()))
    if harness == "gemini_cli":
        return len(json.loads((root / "projects.json").read_text())["projects"])
    if harness == "cline":
        con = sqlite3.connect(root / "db" / "sessions.db")
        try:
            return con.execute("SELECT count(*) FROM sessions").fetchone()[0]
        finally:
            con.close()
    return None


@pytest.mark.parametrize("harness", PARALLEL)
def test_parallel_installs_keep_every_session_and_registry_entry(harness, tmp_path):
    root = tmp_path / "store"
    jobs = [(harness, n, str(root)) for n in range(SESSIONS)]
    with ProcessPoolExecutor(max_workers=WORKERS, mp_context=get_context("fork")) as pool:
        assert list(pool.map(_install, jobs)) == ["ok"] * SESSIONS
    found = registry.get(harness).store.discover(root)
    assert len(found) == SESSIONS, [getattr(s, "path", s) for s in found]
    assert _registered(harness, root) in (None, SESSIONS)


def test_the_registry_lock_is_released_by_a_killed_holder(tmp_path):
    path = tmp_path / "kimi.json"
    pid = os.fork()
    if pid == 0:
        with atomic.locked(path):
            os.kill(os.getpid(), 9)
    os.waitpid(pid, 0)
    assert atomic.update_locked(path, lambda old: b"{}") and path.read_bytes() == b"{}"


# --- item 3: a session in place but not registered is finished by the retry ---------------


def _kimi_dirs(root: Path) -> list[str]:
    return [d["path"] for d in json.loads((root / "kimi.json").read_text())["work_dirs"]]


@pytest.mark.parametrize("harness", ["kimi_cli", "continue_cli", "cline"])
def test_a_retry_registers_a_session_a_kill_left_unregistered(harness, tmp_path):
    root = tmp_path / "store"
    written = _written(harness, 1)
    # what a kill between the files and their registration left: the files, no registry
    for rel, data in written.files.items():
        if rel != "kimi.json":
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    api.install(written, harness, root)
    assert _registered(harness, root) == 1
    with pytest.raises(TargetExists, match="already exists"):  # now whole: a second install is refused
        api.install(written, harness, root)
    changed = msgspec.structs.replace(written, files={**written.files})
    changed.files[written.main] = written.files[written.main].replace(b"answer 1", b"answer 2")
    (root / written.main).write_bytes(changed.files[written.main])
    if harness == "cline":  # the row is there: other bytes under a registered id are refused
        with pytest.raises(TargetExists):
            api.install(written, harness, root)
    else:  # unregistered again, with other bytes in place: never overwritten
        _unregister(harness, root)
        with pytest.raises(TargetExists, match="already exists"):
            api.install(written, harness, root)
        assert (root / written.main).read_bytes() == changed.files[written.main]


def _unregister(harness: str, root: Path) -> None:
    (root / ("kimi.json" if harness == "kimi_cli" else "sessions.json")).unlink()


def test_a_kimi_install_whose_link_fails_takes_its_registration_back(tmp_path, monkeypatch):
    root = tmp_path / "kimi"
    root.mkdir()
    before = {"work_dirs": [{"path": "/else", "kaos": "local", "last_session_id": "x"}], "thinking": True}
    (root / "kimi.json").write_text(json.dumps(before))
    real = os.link

    def no_space(src, dst):
        if Path(dst).name == "context.jsonl":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "link", no_space)
    with pytest.raises(OSError, match="No space"):
        api.install(_written("kimi_cli", 1), "kimi_cli", root)
    assert json.loads((root / "kimi.json").read_text()) == before
    assert not (root / "sessions").exists()
    monkeypatch.setattr(os, "link", real)
    api.install(_written("kimi_cli", 1), "kimi_cli", root)
    assert _kimi_dirs(root) == ["/else", "/tmp/par-project-1"]


# --- item 4: a failed Continue install removes what it put in place ---------------------------


@pytest.mark.parametrize("damage", [b"{not json", b'{"a": 1}'], ids=["not-json", "not-a-list"])
def test_a_continue_install_into_a_damaged_index_leaves_nothing_and_the_retry_succeeds(damage, tmp_path):
    root = tmp_path / "sessions"
    root.mkdir()
    (root / "sessions.json").write_bytes(damage)
    written = _written("continue_cli", 1)
    with pytest.raises(StoreError, match="sessions.json"):
        api.install(written, "continue_cli", root)
    assert sorted(p.name for p in root.iterdir()) == ["sessions.json"]
    assert (root / "sessions.json").read_bytes() == damage
    (root / "sessions.json").write_text("[]")  # the repair
    (path,) = api.install(written, "continue_cli", root)
    assert path.read_bytes() == written.files[path.name]
    assert [e["sessionId"] for e in json.loads((root / "sessions.json").read_text())] == [path.stem]


def test_a_continue_install_that_cannot_write_its_file_leaves_the_index_as_it_was(tmp_path, monkeypatch):
    root = tmp_path / "sessions"
    root.mkdir()
    index = [{"sessionId": "else", "title": "t", "dateCreated": "1", "workspaceDirectory": "/w", "messageCount": 0}]
    (root / "sessions.json").write_text(json.dumps(index))
    real = os.link
    monkeypatch.setattr(os, "link", lambda src, dst: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")))
    with pytest.raises(OSError, match="No space"):
        api.install(_written("continue_cli", 1), "continue_cli", root)
    assert sorted(p.name for p in root.iterdir()) == ["sessions.json"]
    assert json.loads((root / "sessions.json").read_text()) == index
    monkeypatch.setattr(os, "link", real)
    api.install(_written("continue_cli", 1), "continue_cli", root)
    assert len(json.loads((root / "sessions.json").read_text())) == 2


# --- item 18: a failed cline install leaves no empty session folder -------------------------


def test_a_failed_cline_install_leaves_no_session_folder(tmp_path):
    root = tmp_path / "cline"
    db = root / "db" / "sessions.db"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE sessions (session_id TEXT, something_else TEXT NOT NULL)")  # another cline's shape
    con.commit()
    con.close()
    written = _written("cline", 1)
    with pytest.raises(StoreError, match="another shape"):
        api.install(written, "cline", root)
    assert not (root / "sessions").exists(), list(root.rglob("*"))
