"""Claude Code store discovery on a constructed tree: one test per seed rule
(docs/claude_code.md#discovery)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from txcodec.harnesses.claude_code import store
from txcodec.harnesses.claude_code.sidefiles import script_run_id

S1 = "11111111-2222-4333-8444-555555555555"
S2 = "22222222-3333-4444-8555-666666666666"
S3 = "33333333-4444-4555-8666-777777777777"
S4 = "44444444-5555-4666-8777-888888888888"
UPPER = "ABCDEF01-2345-4678-89AB-CDEF01234567"
LOWER = UPPER.lower()


def rec(kind: str, sid: str, n: int, **extra) -> dict:
    base = {
        "type": kind,
        "uuid": f"u{n}",
        "sessionId": sid,
        "timestamp": f"2026-09-18T10:00:{n:02d}.000Z",
        "cwd": "/home/dev/shop",
        "gitBranch": "main",
        "version": "2.1.276",
    }
    if kind in ("user", "assistant"):
        base["message"] = {"role": kind, "content": "hi"}
    base.update(extra)
    return base


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def conversation(sid: str) -> list[dict]:
    return [rec("user", sid, 3), rec("assistant", sid, 1), rec("user", sid, 7)]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    proj = root / "-home-dev-shop"
    write_jsonl(proj / f"{S1}.jsonl", conversation(S1))
    side = proj / S1
    write_jsonl(
        side / "subagents" / "agent-a0000000000000001.jsonl",
        [rec("user", S1, 1, isSidechain=True, agentId="a0000000000000001")],
    )
    (side / "subagents" / "agent-a0000000000000001.meta.json").write_text('{"agentType":"Explore","spawnDepth":1}')
    (side / "subagents" / "agent-a0000000000000009.meta.json").write_text('{"agentType":"Explore"}')  # orphan
    wf = side / "subagents" / "workflows" / "wf_ab12-cd3"
    write_jsonl(wf / "agent-a0000000000000002.jsonl", [rec("user", S1, 1, isSidechain=True)])
    write_jsonl(wf / "journal.jsonl", [{"type": "started", "key": "k", "agentId": "a0000000000000002"}])
    (side / "workflows").mkdir()
    (side / "workflows" / "wf_ab12-cd3.json").write_text('{"runId":"wf_ab12-cd3"}')
    (side / "tool-results" / "pdf-9f").mkdir(parents=True)
    (side / "tool-results" / "b7x2k9q1m.txt").write_text("out")
    (side / "tool-results" / "pdf-9f" / "1.jpg").write_bytes(b"\xff\xd8")
    # the workflow's script travelled to the folder of another cwd (docs/claude_code.md#discovery)
    other = root / "-home-dev-shop-docs"
    (other / S1 / "workflows" / "scripts").mkdir(parents=True)
    (other / S1 / "workflows" / "scripts" / "sweep-wf_notes-wf_ab12-cd3.js").write_text("return 1")
    # not sessions: memory/, a folder and files not named like a session id
    (proj / "memory").mkdir()
    (proj / "memory" / "notes.md").write_text("# notes")
    write_jsonl(proj / "memory" / f"{S4}.jsonl", conversation(S4))
    write_jsonl(proj / "scratch.jsonl", conversation(S4))
    (proj / "not-a-session").mkdir()
    return root


def by_id(root: Path) -> dict[str, store.SessionInfo]:
    return {s.session_id: s for s in store.discover(root)}


def test_default_root(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert store.default_root() == tmp_path / "cfg" / "projects"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")  # set but empty: the default
    assert store.default_root() == tmp_path / ".claude" / "projects"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert store.default_root() == tmp_path / ".claude" / "projects"


def test_discover_uses_default_root(monkeypatch, tree):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tree.parent))
    assert [s.session_id for s in store.discover()] == [S1]


def test_munge_cwd():
    assert store.munge_cwd("/tmp/my_proj.v2 x") == "-tmp-my-proj-v2-x"
    assert store.munge_cwd("C:\\Users\\a:b") == "C--Users-a-b"
    assert store.munge_cwd("/home/dév") == "-home-d-v"


def test_munge_cwd_counts_utf16_units_and_hashes_a_long_name():
    # 2.1.332 replaces per UTF-16 unit: a character beyond U+FFFF gives two dashes
    assert store.munge_cwd("/w/日本-\U0001f680") == "-w-" + "--" + "-" + "--"
    # over 200 units: cut to 200, then "-" and the path's string hash in base 36; the folder
    # the real client made for this very path (tests/harnesses/claude_code/test_claude_code_project_folder_real.py)
    long = "/tmp/tmpm22n60lz/" + "ä" * 40 + "-\U0001f680" * 20 + "/" + "x" * 20 + "/y" * 80
    name = store.munge_cwd(long)
    assert name.endswith("-q94a87") and len(name) == 207
    assert name[:200] == ("-tmp-tmpm22n60lz-" + "-" * 100 + "-" + "x" * 20 + "-y" * 80)[:200]


def test_script_run_id_splits_on_last_wf():
    assert script_run_id("sweep-wf_notes-wf_ab12-cd3.js") == "wf_ab12-cd3"
    assert script_run_id("docs-sweep-wf_afa31e47-f6c.js") == "wf_afa31e47-f6c"
    assert script_run_id("wf_only.js") is None


def test_session_first_grouping_and_side_files(tree):
    sessions = by_id(tree)
    assert list(sessions) == [S1]  # memory/, scratch.jsonl, not-a-session are not sessions
    s = sessions[S1]
    assert s.status == "ok"
    assert s.path == tree / "-home-dev-shop" / f"{S1}.jsonl"
    assert s.project_dirs == [tree / "-home-dev-shop", tree / "-home-dev-shop-docs"]  # primary first
    assert s.workflow_scripts == {
        "wf_ab12-cd3": [tree / "-home-dev-shop-docs" / S1 / "workflows" / "scripts" / "sweep-wf_notes-wf_ab12-cd3.js"]
    }
    assert s.counts == {
        "subagents": 1,
        "workflow_agents": 1,
        "workflows": 1,
        "tool_results": 2,
        "lines": 3,
        "messages": 3,
        "metadata": 0,
        "unparsed": 0,
    }
    agents = {a.agent_id: a for a in s.files.agents}
    assert agents["a0000000000000001"].meta().agent_type == "Explore"
    assert agents["a0000000000000002"].workflow == "wf_ab12-cd3"
    assert [p.name for p in s.files.orphan_metas] == ["agent-a0000000000000009.meta.json"]
    assert list(s.files.journals) == ["wf_ab12-cd3"]
    assert [p.name for p in s.files.workflow_runs] == ["wf_ab12-cd3.json"]


def test_shallow_scan_fields(tree):
    s = by_id(tree)[S1]
    assert (s.cwd, s.git_branch, s.version) == ("/home/dev/shop", "main", "2.1.276")
    assert (s.started, s.updated) == ("2026-09-18T10:00:01.000Z", "2026-09-18T10:00:07.000Z")  # not line order


def test_title_precedence(tmp_path):
    proj = tmp_path / "p"
    titles = [
        {"type": "summary", "summary": "first summary", "leafUuid": "u1"},
        {"type": "summary", "summary": "second summary", "leafUuid": "u1"},
        {"type": "agent-name", "agentName": "agent", "sessionId": S1},
        {"type": "custom-title", "customTitle": "old", "sessionId": S1},
        {"type": "custom-title", "customTitle": "renamed", "sessionId": S1},
    ]
    write_jsonl(proj / f"{S1}.jsonl", conversation(S1) + titles)
    write_jsonl(proj / f"{S2}.jsonl", conversation(S2) + titles[:3])
    write_jsonl(proj / f"{S3}.jsonl", conversation(S3) + titles[:2])
    sessions = by_id(tmp_path)
    assert (sessions[S1].title, sessions[S1].title_source) == ("renamed", "custom-title")
    assert (sessions[S2].title, sessions[S2].title_source) == ("agent", "agent-name")
    assert (sessions[S3].title, sessions[S3].title_source) == ("first summary", "summary")


def test_pruned_main_is_listed_as_pruned(tree):
    write_jsonl(
        tree / "-home-dev-shop" / S2 / "subagents" / "agent-a0000000000000003.jsonl",
        [rec("user", S2, 4, isSidechain=True, cwd="/home/dev/other")],
    )
    s = by_id(tree)[S2]
    assert s.status == "pruned" and s.path is None
    assert s.counts["subagents"] == 1
    assert s.cwd == "/home/dev/other"  # context from the surviving child


def test_folder_without_collectable_files_is_not_a_session(tree):
    (tree / "-home-dev-shop" / S3 / "subagents").mkdir(parents=True)  # nothing inside
    (tree / "-home-dev-shop-docs" / S1 / "empty").mkdir()
    sessions = by_id(tree)
    assert S3 not in sessions
    assert sessions[S1].project_dirs == [tree / "-home-dev-shop", tree / "-home-dev-shop-docs"]


def test_metadata_only_and_empty_files(tmp_path):
    proj = tmp_path / "p"
    write_jsonl(
        proj / f"{S1}.jsonl",
        [
            {"type": "summary", "summary": "s", "leafUuid": "x"},
            {"type": "last-prompt", "sessionId": S1, "leafUuid": "x"},
        ],
    )
    (proj / f"{S2}.jsonl").write_bytes(b"")
    sessions = by_id(tmp_path)
    assert sessions[S1].status == "metadata-only"
    assert sessions[S1].counts["messages"] == 0 and sessions[S1].counts["metadata"] == 2
    assert sessions[S2].status == "empty"


def test_a_file_of_garbage_is_unparsed_not_metadata_only(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / f"{S1}.jsonl").write_bytes(b"garbage\n\xff\xfe\n")
    s = by_id(tmp_path)[S1]
    assert s.status == "unparsed" and s.counts["unparsed"] == 2 and s.counts["metadata"] == 0


def test_a_line_nested_too_deeply_is_unparsed(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / f"{S1}.jsonl").write_bytes(b"[" * 5000 + b"\n" + json.dumps(rec("user", S1, 1)).encode())
    s = by_id(tmp_path)[S1]
    assert (s.status, s.counts["unparsed"], s.counts["messages"]) == ("ok", 1, 1)


def test_session_named_entries_that_are_not_files_are_reported(tmp_path):
    import os

    proj = tmp_path / "p"
    write_jsonl(proj / f"{S1}.jsonl", conversation(S1))
    (proj / f"{S2}.jsonl").symlink_to(tmp_path / "gone.jsonl")
    os.mkfifo(proj / f"{S3}.jsonl")
    (proj / f"{S4}.jsonl").mkdir()
    found = store.discover(tmp_path)
    assert [s.session_id for s in found] == [S1]
    assert found.errors == [
        f"{proj / f'{S2}.jsonl'}: a dangling symlink",
        f"{proj / f'{S3}.jsonl'}: not a regular file",
        f"{proj / f'{S4}.jsonl'}: not a regular file",
    ]


def test_symlinked_directories_are_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    write_jsonl(elsewhere / f"{S1}.jsonl", conversation(S1))
    write_jsonl(elsewhere / S2 / "subagents" / "agent-a0000000000000004.jsonl", [rec("user", S2, 1)])
    root = tmp_path / "projects"
    (root / "real").mkdir(parents=True)
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (root / "real" / S2).symlink_to(elsewhere / S2, target_is_directory=True)
    write_jsonl(tmp_path / "target.jsonl", conversation(S3))
    (root / "real" / f"{S3}.jsonl").symlink_to(tmp_path / "target.jsonl")  # a symlinked *file* still lists
    assert list(by_id(root)) == [S3]
    # the root itself is followed when it is a symlink: it was named, not stumbled upon
    (tmp_path / "moved").symlink_to(root, target_is_directory=True)
    assert list(by_id(tmp_path / "moved")) == [S3]


def test_unreadable_file_is_reported_not_fatal(tree, monkeypatch):
    bad = tree / "-home-dev-shop" / f"{S2}.jsonl"
    write_jsonl(bad, conversation(S2))
    real_open = os.open  # the store opens a file with os.open, to check that it is a regular one

    def guarded(path, *args, **kwargs):
        if Path(path) == bad:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded)
    sessions = by_id(tree)
    assert sessions[S1].status == "ok"
    assert sessions[S2].status == "unreadable"
    assert sessions[S2].errors == [f"{bad}: Permission denied"]


def test_unreadable_session_subfolders_are_reported(tree, monkeypatch):
    """A session folder part that cannot be listed is noted on the session; the rest of
    the session and of the store is still found."""
    real_iterdir = Path.iterdir

    def guarded(self):
        if self.name in ("workflows", "tool-results"):
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", guarded)
    s = by_id(tree)[S1]
    side = tree / "-home-dev-shop" / S1
    assert s.errors == [
        f"{side / 'subagents' / 'workflows'}: Permission denied",
        f"{side / 'workflows'}: Permission denied",
        f"{side / 'tool-results'}: Permission denied",
        f"{tree / '-home-dev-shop-docs' / S1 / 'workflows'}: Permission denied",
    ]
    assert s.status == "ok" and s.counts["subagents"] == 1 and s.counts["tool_results"] == 0


def test_unreadable_project_folder(tree, monkeypatch):
    folder = tree / "-home-dev-shop-docs"
    real_iterdir, real_scandir = Path.iterdir, os.scandir

    def guarded(self):
        if self == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    def guarded_scandir(path="."):  # the listing may use either way to read a folder
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(Path, "iterdir", guarded)
    monkeypatch.setattr(os, "scandir", guarded_scandir)
    found = store.discover(tree)
    assert found.errors == [f"{folder}: Permission denied"]
    assert [s.session_id for s in found] == [S1]


def test_ids_are_compared_byte_exactly(tmp_path):
    write_jsonl(tmp_path / "a" / f"{UPPER}.jsonl", conversation(UPPER))
    write_jsonl(tmp_path / "b" / f"{LOWER}.jsonl", conversation(LOWER))
    write_jsonl(tmp_path / "b" / UPPER / "subagents" / "agent-a0000000000000005.jsonl", [rec("user", UPPER, 1)])
    sessions = by_id(tmp_path)
    assert set(sessions) == {UPPER, LOWER}
    assert sessions[UPPER].counts["subagents"] == 1 and sessions[LOWER].counts["subagents"] == 0


def test_flat_agent_files_join_their_session(tmp_path):
    """CC 2.0.x wrote agent-<id>.jsonl beside the sessions (corpus: claude-code-viewer)."""
    write_jsonl(tmp_path / "p" / f"{S1}.jsonl", conversation(S1))
    write_jsonl(tmp_path / "p" / "agent-test-hash-1.jsonl", [rec("user", S1, 1, isSidechain=True)])
    write_jsonl(tmp_path / "p" / "agent-test-hash-2.jsonl", [rec("user", S4, 1, isSidechain=True)])  # no parent
    s = by_id(tmp_path)[S1]
    assert [p.name for p in s.legacy_agents] == ["agent-test-hash-1.jsonl"]
    assert s.counts["subagents"] == 1


def test_missing_root_and_garbage_lines(tmp_path):
    assert store.discover(tmp_path / "nowhere") == []
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / f"{S1}.jsonl").write_bytes(b'\xef\xbb\xbf{"type":"user","cwd":"/x","message":{}}\nnot json\n{"type":"us')
    s = by_id(tmp_path)[S1]
    assert (s.status, s.cwd, s.counts["unparsed"], s.counts["messages"]) == ("ok", "/x", 2, 1)


def test_sessions_sorted_newest_first(tmp_path):
    write_jsonl(tmp_path / "p" / f"{S1}.jsonl", [rec("user", S1, 5)])
    write_jsonl(tmp_path / "p" / f"{S2}.jsonl", [rec("user", S2, 9)])
    assert [s.session_id for s in store.discover(tmp_path)] == [S2, S1]


def test_side_files_of_a_transcript(tree):
    main = tree / "-home-dev-shop" / f"{S1}.jsonl"
    sides = store.side_files(main)
    assert set(sides) == {
        "subagents",
        "subagent_meta",
        "workflow_agents",
        "journals",
        "workflow_runs",
        "tool_results",
        "orphan_meta",
    }
    agent = tree / "-home-dev-shop" / S1 / "subagents" / "workflows" / "wf_ab12-cd3" / "agent-a0000000000000002.jsonl"
    assert store.side_files(agent) == {"journal": [agent.with_name("journal.jsonl")]}


def test_to_dict_is_json_ready(tree):
    import msgspec

    item = by_id(tree)[S1].to_dict()
    assert msgspec.json.decode(msgspec.json.encode(item)) == item
    assert item["workflow_scripts"] == {
        "wf_ab12-cd3": [
            str(tree / "-home-dev-shop-docs" / S1 / "workflows" / "scripts" / "sweep-wf_notes-wf_ab12-cd3.js")
        ]
    }


# -- a session described with its details, from one read (list, cold) --------------------------------


def _described_both(root: Path) -> list[tuple[dict, dict]]:
    """Each session as ``describe_item`` describes it, and as ``describe_lean`` does."""
    alone = [store.describe_item(info).to_dict() for info in store.discover_files(root)]
    lean = [store.describe_lean(info)[0].to_dict() for info in store.discover_files(root)]
    return list(zip(alone, lean, strict=True))


def _lines(*records: dict | bytes) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)


_ODD_LINES = {
    # the codec strips a BOM on any line and types it; the scan only on the first line
    "a BOM mid-file": b"\xef\xbb\xbf" + json.dumps(rec("user", S1, 59, cwd="/bom")).encode(),
    # the codec repairs a lone surrogate escape and types the line; the scan cannot decode it
    "a lone surrogate": json.dumps(rec("user", S1, 58)).replace('"hi"', '"\\ud800"').encode(),
    "a blank line": b"",
    "a CR before the LF": json.dumps(rec("assistant", S1, 57)).encode() + b"\r",
    "two objects on a line": json.dumps(rec("user", S1, 56)).encode() + b" {}",
    "not an object": b"[1]",
    "a field of another type": json.dumps(rec("user", S1, 55, timestamp=5, cwd=None)).encode(),
    "a progress line": json.dumps(rec("progress", S1, 54, data={"type": "hook"})).encode(),
    "a title": json.dumps({"type": "custom-title", "customTitle": "named", "sessionId": S1}).encode(),
}


@pytest.mark.parametrize("odd", sorted(_ODD_LINES))
@pytest.mark.parametrize("where", [0, 1, 3])
def test_a_session_described_with_its_details_is_described_as_alone(tmp_path, odd, where):
    """``describe_lean`` takes the scan from the records its details are read from: the same
    status, counts, times, cwd and titles as the store's own scan, whatever the odd line."""
    records: list[dict | bytes] = [rec("system", S1, 2, cwd="/first"), *conversation(S1)]
    records.insert(where, _ODD_LINES[odd])
    path = tmp_path / "projects" / "-p" / f"{S1}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(_lines(*records))
    for alone, lean in _described_both(tmp_path / "projects"):
        assert lean == alone


def test_a_session_described_lean_has_the_details_summarize_reads(tmp_path):
    path = write_jsonl(tmp_path / "projects" / "-p" / f"{S1}.jsonl", [rec("system", S1, 2), *conversation(S1)])
    (info,) = store.discover_files(tmp_path / "projects")
    described, details = store.describe_lean(info)
    assert details == store.summarize(path) and details.messages == 3
    assert described.status == "ok" and described.counts["messages"] == 3
