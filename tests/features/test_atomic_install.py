"""``--install`` is all or nothing, for real (issue 10, item 5).

The kill test forks a process that installs a large multi-file session and SIGKILLs it
at a random moment, 50 times per harness (``TXCODEC_KILL_RUNS`` for more), for every
harness whose install has more than one step (side files, a registry file, a database
row; issue 33, item 3). After every kill the store holds nothing a client would load:
the main transcript is absent, or it is there with every side file, each byte-identical
(a file under its final name is never partial), and registered where the client needs
it. A retry then finishes the install (or, when the kill came after the session was
whole and registered, refuses a complete session), and leaves no temporary of ours anywhere.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from txcodec import api
from txcodec.core import atomic
from txcodec.core.atomic import TargetExists
from txcodec.core.atomic import clean_stale
from txcodec.core.atomic import install_files
from txcodec.core.errors import StoreError
from txcodec.harnesses.gemini_cli import store as gemini_store
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.model.loss import LossReport

STORES = ["claude_code", "codex", "gemini_cli", "qwen_code", "pi"]
# the harnesses whose install has more than one step (issue 33, item 3): a registry file
# (kimi.json, sessions.json), a database row (cline) or several files (vibe, openhands)
KILL_STORES = [*STORES, "kimi_cli", "continue_cli", "cline", "mistral_vibe", "openhands"]
REGISTRIES = {"kimi_cli": "kimi.json", "continue_cli": "sessions.json", "gemini_cli": "projects.json"}
KILLS = int(os.environ.get("TXCODEC_KILL_RUNS", "50"))
SID = "0d0d0d0d-1111-4222-8333-444444444444"


def _big(turns: int, size: int, tag: str) -> list[Message]:
    rng = random.Random(tag)
    out = []
    for n in range(turns):
        blob = "".join(rng.choice("abcdefghij ") for _ in range(64)) * (size // 64)
        out += [
            Message("user", [Text(f"{tag} question {n}: {blob}")]),
            Message(
                "assistant", [Text(f"{tag} answer {n}"), ToolUse(f"call_{tag}_{n}", "Bash", {"command": blob[:200]})]
            ),
            Message("user", [ToolResult(f"call_{tag}_{n}", blob)]),
            Message("assistant", [Text(f"{tag} done {n}")]),
        ]
    return out


def _conversation() -> Conversation:
    """About 3 MB: a main transcript and, for Claude Code, six subagents of 150 KB."""
    children = [
        Child(
            link=ChildLink(via="meta.toolUseId", agent_id=f"a{n:016x}", tool_use_id=f"call_main_{n}"),
            conversation=Conversation(meta=Meta(id=f"child-{n}"), messages=_big(10, 4000, f"child{n}")),
        )
        for n in range(6)
    ]
    return Conversation(
        meta=Meta(id=SID, cwd="/tmp/kill-project", started_at="2026-01-02T03:04:05.000Z"),
        messages=_big(60, 6000, "main"),
        children=children,
    )


def _written(harness: str) -> registry.Written:
    return registry.get(harness).write(_conversation(), LossReport(), WriteOptions(cwd="/tmp/kill-project"))


def _installed(harness: str, written: registry.Written, root: Path) -> dict[Path, bytes]:
    """Where each file of ``written`` lands (Gemini: the chat only, in the store's slug)."""
    if harness == "gemini_cli":
        slug = gemini_store.project_slug(root, "/tmp/kill-project")
        ((rel, data),) = [(r, d) for r, d in written.files.items() if "/chats/" in r]
        return {root / "tmp" / slug / "chats" / rel.rsplit("/", 1)[1]: data}
    skip = {REGISTRIES.get(harness), ".project_root"}
    return {root / rel: data for rel, data in written.files.items() if rel not in skip}


def _cline_registered(root: Path) -> bool:
    db = root / "db" / "sessions.db"
    if not db.exists():
        return False
    con = sqlite3.connect(db)
    try:
        return bool(con.execute("SELECT count(*) FROM sessions").fetchone()[0])
    except sqlite3.OperationalError:  # no table yet
        return False
    finally:
        con.close()


def _temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if atomic._TEMP.fullmatch(p.name)]


def _check_consistent(harness: str, written: registry.Written, root: Path) -> bool:
    """Nothing a client would load unless all of it is there; returns whether the session
    is visible to its client (the main file in place; for cline, its database row)."""
    expected = _installed(harness, written, root)
    main = next(iter(expected))
    for path, data in expected.items():
        if path.exists():
            assert path.read_bytes() == data, f"{path} is in place but not whole"
    visible = _cline_registered(root) if harness == "cline" else main.exists()
    if not visible:
        return False
    missing = [p for p in expected if not p.exists()]
    assert not missing, f"the session is visible without {missing}"
    if harness == "gemini_cli":
        registered = json.loads((root / "projects.json").read_text())["projects"]
        assert registered.get("/tmp/kill-project") == main.parent.parent.name
    if harness == "kimi_cli":  # unregistered, kimi -r would empty the file
        dirs = json.loads((root / "kimi.json").read_text())["work_dirs"]
        assert [d["path"] for d in dirs] == ["/tmp/kill-project"], dirs
    if harness == "continue_cli":
        index = json.loads((root / "sessions.json").read_text())
        assert [e["sessionId"] for e in index] == [json.loads(expected[main])["sessionId"]], index
    return True


def _install_in_child(written: registry.Written, harness: str, root: Path, delay: float | None) -> None:
    """Install in a forked child, killed after ``delay`` seconds (None: let it finish)."""
    pid = os.fork()
    if pid == 0:  # the child: install, and never return into pytest
        try:
            api.install(written, harness, root)
        finally:
            os._exit(0)
    if delay is not None:
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


@pytest.mark.parametrize("harness", KILL_STORES)
def test_sigkill_at_any_moment_leaves_nothing_half_installed(harness, tmp_path):
    written = _written(harness)
    assert sum(map(len, written.files.values())) > 500_000
    started = time.monotonic()  # timed as the kills see it: a forked child's whole install
    _install_in_child(written, harness, tmp_path / "timing", None)
    took = time.monotonic() - started
    rng = random.Random(f"kill-{harness}")
    outcomes = {"nothing": 0, "complete": 0}
    for n in range(KILLS):
        root = tmp_path / f"store{n}"
        _install_in_child(written, harness, root, rng.uniform(0, took * 1.3))
        complete = _check_consistent(harness, written, root)
        outcomes["complete" if complete else "nothing"] += 1
        if complete:
            with pytest.raises(TargetExists):  # a whole session is not debris: refused, nothing touched
                api.install(written, harness, root)
        else:
            api.install(written, harness, root)  # the retry finishes what the kill cut short
        assert _check_consistent(harness, written, root)
        assert not _temporaries(root), f"temporaries left after the retry: {_temporaries(root)}"
    assert sum(outcomes.values()) == KILLS


def test_the_main_file_is_linked_last(tmp_path, monkeypatch):
    order = []
    real = os.link
    monkeypatch.setattr(os, "link", lambda src, dst: (order.append(Path(dst).name), real(src, dst))[1])
    install_files(tmp_path, {"main.jsonl": b"m", "main/subagents/agent-a.jsonl": b"a", "main/tool-results/t.txt": b"t"})
    assert order == ["agent-a.jsonl", "t.txt", "main.jsonl"]


def test_a_failure_takes_back_what_this_install_put_in_place(tmp_path, monkeypatch):
    real = os.link

    def failing(src, dst):
        if Path(dst).name == "main.jsonl":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "link", failing)
    with pytest.raises(OSError, match="No space"):
        install_files(tmp_path, {"main.jsonl": b"m", "side/a.jsonl": b"a"})
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_retry_reuses_our_side_files_and_refuses_other_content(tmp_path):
    files = {"main.jsonl": b"m", "side/a.jsonl": b"a", "side/b.jsonl": b"b"}
    (tmp_path / "side").mkdir()
    (tmp_path / "side" / "a.jsonl").write_bytes(b"a")  # what a killed install left
    (tmp_path / "side" / ".b.jsonl.txcodec-999999999-0123abcd.tmp").write_bytes(b"half")
    install_files(tmp_path, files)
    assert {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()} == set(files)
    other = tmp_path / "other"
    (other / "side").mkdir(parents=True)
    (other / "side" / "a.jsonl").write_bytes(b"not ours")
    with pytest.raises(TargetExists, match="other content"):
        install_files(other, files)
    assert not (other / "main.jsonl").exists() and not (other / "side" / "b.jsonl").exists()


def test_stale_temporaries_of_live_processes_and_other_files_are_kept(tmp_path):
    live = tmp_path / f".x.jsonl.txcodec-{os.getppid()}-0123abcd.tmp"
    mine = tmp_path / f".y.jsonl.txcodec-{os.getpid()}-0123abcd.tmp"
    other = tmp_path / ".z.jsonl.tmp"
    dead = tmp_path / ".w.jsonl.txcodec-999999999-0123abcd.tmp"
    for path in (live, mine, other, dead):
        path.write_bytes(b"x")
    assert clean_stale(tmp_path) == [dead]
    assert live.exists() and mine.exists() and other.exists()


@pytest.mark.parametrize("harness", STORES)
def test_a_symlinked_folder_out_of_the_store_is_refused(harness, tmp_path):
    written = _written(harness)
    root, outside = tmp_path / "store", tmp_path / "outside"
    outside.mkdir()
    target = next(iter(_installed(harness, written, root)))
    target.parent.parent.mkdir(parents=True)
    target.parent.symlink_to(outside, target_is_directory=True)
    with pytest.raises(StoreError, match="leads out"):
        api.install(written, harness, root)
    assert list(outside.iterdir()) == []
    if harness == "gemini_cli":
        assert not (root / "projects.json").exists()


@pytest.mark.parametrize("where", ["write", "link"])
def test_gemini_leaves_no_registration_behind_on_failure(where, tmp_path, monkeypatch):
    written = _written("gemini_cli")
    root = tmp_path / "gemini"
    (root / "tmp").mkdir(parents=True)
    (root / "projects.json").write_text(json.dumps({"projects": {"/else": "else"}}))

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "write":
        monkeypatch.setattr(atomic, "_write_temp", no_space)
    else:
        real = os.link
        monkeypatch.setattr(os, "link", lambda src, dst: no_space() if "/chats/" in str(dst) else real(src, dst))
    with pytest.raises(OSError, match="No space"):
        api.install(written, "gemini_cli", root)
    assert json.loads((root / "projects.json").read_text()) == {"projects": {"/else": "else"}}
    assert not list(root.rglob(".project_root")) and not list(root.rglob("*.jsonl"))
    assert not (root / "projects.json.lock").exists()


def test_a_lock_left_by_a_killed_install_does_not_block_the_next(tmp_path):
    root = tmp_path / "gemini"
    lock = root / "projects.json.lock"
    lock.mkdir(parents=True)
    (lock / "txcodec.999999999").touch()
    started = time.monotonic()
    (path,) = api.install(_written("gemini_cli"), "gemini_cli", root)
    assert path.exists() and time.monotonic() - started < 5 and not lock.exists()
