"""Session lineage (docs/lineage.md): started_by and forked_from from what files record,
the graph across a store, and the link kept by conversions that have a slot for it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.homes import isolate
from support.paths import corpus_files

from tests.conftest import GOLDEN
from txcodec import api
from txcodec import lineage as lineage_module
from txcodec.cli import main
from txcodec.harnesses.claude_code.origin import is_clear_head
from txcodec.lineage import file_origin
from txcodec.lineage import lineage
from txcodec.lineage import origin
from txcodec.lineage import store_origins
from txcodec.model.common import ForkedFrom

GENUINE = GOLDEN / "claude_code" / "lineage_genuine"
LINEAGE_HARNESSES = ("claude_code", "codex", "pi")
IDS = dict(line.split() for line in (GENUINE / "ids.txt").read_text().splitlines())
STORE = GENUINE / "store"
FORKED = next((GOLDEN / "claude_code" / "session_lineage").glob("*.jsonl"))


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """store_origins keeps origins in the session index: one of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def genuine(name: str) -> Path:
    return next(STORE.glob(f"*/{IDS[name]}.jsonl"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- what the real client wrote (claude 2.1.332, make_lineage_genuine.py) -----------------


def test_genuine_clear_successor_is_started_by_clear_and_names_no_predecessor():
    found = origin(genuine("clear"))
    assert (found.started_by, found.forked_from, found.session_id) == ("clear", None, IDS["clear"])
    head = [r for r in records(genuine("clear")) if "uuid" in r][:3]
    assert [r["type"] for r in head] == ["user", "user", "system"]  # the seed's chain, as the client wrote it
    assert not any(IDS["source"] in line for line in genuine("clear").read_text().splitlines())


def test_genuine_source_and_fork_session_copy():
    assert origin(genuine("source")).started_by == "new"
    source_records = records(genuine("source"))
    # a resume appends to the session's own file: both prompts are in the source
    prompts = [
        r["message"]["content"]
        for r in source_records
        if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    ]
    assert prompts[:2] == ["first", "second"]
    # 2.1.332's --fork-session writes no forkedFrom: the copy reads as new. Its records
    # reuse the source's uuids, which txcodec does not take as a link (docs/lineage.md#what-is-measured)
    fork = records(genuine("fork-session"))
    assert not any("forkedFrom" in r for r in fork)
    assert origin(genuine("fork-session")).started_by == "new"
    assert {r["uuid"] for r in fork if "uuid" in r} & {r["uuid"] for r in source_records if "uuid" in r}


def test_genuine_branch_carries_forked_from_on_its_copied_records():
    """/branch in the TUI: every copied record keeps its uuid and gets forkedFrom
    {source, that uuid}; the session's link is the last copied record's."""
    branch = records(genuine("branch"))
    copied = [r for r in branch if "forkedFrom" in r]
    assert copied and all(r["forkedFrom"] == {"sessionId": IDS["source"], "messageUuid": r["uuid"]} for r in copied)
    assert {r["type"] for r in copied} >= {"user", "assistant"}
    found = origin(genuine("branch"))
    assert (found.started_by, found.forked_from) == ("fork", ForkedFrom(IDS["source"], copied[-1]["uuid"]))
    graph = lineage(origin(genuine("source")), store_origins("claude_code", STORE))
    assert [(d, o.session_id) for d, o in graph.descendants] == [(1, IDS["branch"])]  # --fork-session left no link
    assert api.to_common(api.load(genuine("branch"))).meta.forked_from == found.forked_from


def test_clear_chain_is_exact():
    head = [r for r in records(genuine("clear")) if "uuid" in r][:3]
    assert is_clear_head(head)
    caveat, command, local = head
    assert not is_clear_head([command, caveat, local])  # order
    assert not is_clear_head([{**caveat, "isMeta": False}, command, local])
    assert not is_clear_head([caveat, {**command, "parentUuid": "elsewhere"}, local])  # the chain is linked
    assert not is_clear_head([caveat, command, {**local, "subtype": "informational"}])
    other = {**command, "message": {"role": "user", "content": "<command-name>/compact</command-name>"}}
    assert not is_clear_head([caveat, other, local])
    assert not is_clear_head(head[:2])


# --- forkedFrom, forked_from_id, parentSession ------------------------------------------------


def test_forked_from_and_common_meta():
    found = origin(FORKED)
    assert found.started_by == "fork"
    assert found.forked_from == ForkedFrom(
        "0d5e2b8c-3f4a-4b6c-9d1e-7a8b9c0d1e2f", "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4"
    )
    meta = api.to_common(api.load(FORKED)).meta
    assert (meta.started_by, meta.forked_from) == ("fork", found.forked_from)
    assert api.to_common(api.load(genuine("clear"))).meta.started_by == "clear"


def test_codex_and_pi_links(tmp_path):
    meta = {
        "type": "session_meta",
        "payload": {
            "id": "01990000-0000-7000-8000-0000000000bb",
            "cwd": "/w",
            "cli_version": "0.171.0",
            "forked_from_id": "01990000-0000-7000-8000-0000000000aa",
        },
    }
    rollout = tmp_path / "rollout-2026-01-01T00-00-00-01990000-0000-7000-8000-0000000000bb.jsonl"
    rollout.write_text(json.dumps(meta) + "\n")
    assert origin(rollout).forked_from == ForkedFrom("01990000-0000-7000-8000-0000000000aa")
    # a fork that copies the parent's session_meta ahead of the replayed history
    del meta["payload"]["forked_from_id"]
    parent = {
        "type": "session_meta",
        "payload": {"id": "01990000-0000-7000-8000-0000000000cc", "cwd": "/w", "cli_version": "0.171.0"},
    }
    rollout.write_text(json.dumps(meta) + "\n" + json.dumps(parent) + "\n")
    assert (origin(rollout).started_by, origin(rollout).forked_from) == (
        "fork",
        ForkedFrom("01990000-0000-7000-8000-0000000000cc"),
    )
    parent_file = tmp_path / "2026-01-01T00-00-00-000Z_01a22b27-0000-7000-8000-0000000000aa.jsonl"
    parent_file.write_text(
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "01a22b27-0000-7000-8000-0000000000aa",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/w",
            }
        )
        + "\n"
    )
    child = tmp_path / "child.jsonl"
    child.write_text(
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "01a22b27-0000-7000-8000-0000000000bb",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/w",
                "parentSession": str(parent_file),
            }
        )
        + "\n"
    )
    assert origin(child, "pi").forked_from == ForkedFrom("01a22b27-0000-7000-8000-0000000000aa")


# --- the graph across a store -------------------------------------------------------------


def _fork_of(source: Path, new_id: str, folder: Path) -> Path:
    """A branch as 2.1.332's branch code writes it: every copied record gets the new
    sessionId and forkedFrom {source session, the record's own uuid}."""
    out = []
    for r in records(source):
        if r.get("type") in ("user", "assistant"):
            r = {**r, "forkedFrom": {"sessionId": r["sessionId"], "messageUuid": r["uuid"]}, "sessionId": new_id}
        elif "sessionId" in r:
            r = {**r, "sessionId": new_id}
        out.append(json.dumps(r))
    path = folder / f"{new_id}.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def test_store_graph_and_cli(tmp_path):
    root = tmp_path / "projects"
    shutil.copytree(STORE, root)
    folder = next(root.iterdir())
    child = _fork_of(genuine("source"), "11111111-1111-4111-8111-111111111111", folder)
    grandchild = _fork_of(child, "22222222-2222-4222-8222-222222222222", folder)
    found = store_origins("claude_code", root)
    assert {o.session_id: o.started_by for o in found} == {
        IDS["source"]: "new",
        IDS["fork-session"]: "new",
        IDS["clear"]: "clear",
        IDS["branch"]: "fork",
        "11111111-1111-4111-8111-111111111111": "fork",
        "22222222-2222-4222-8222-222222222222": "fork",
    }
    mid = next(o for o in found if o.session_id == "11111111-1111-4111-8111-111111111111")
    graph = lineage(mid, found)
    assert [a.session_id for a in graph.ancestors] == [IDS["source"]]
    assert [(d, o.session_id) for d, o in graph.descendants] == [(1, "22222222-2222-4222-8222-222222222222")]
    last_uuid = [r["uuid"] for r in records(genuine("source")) if r.get("type") in ("user", "assistant")][-1]
    assert mid.forked_from == ForkedFrom(IDS["source"], last_uuid)  # the fork point: the last copied message

    out = CliRunner().invoke(main, ["lineage", str(grandchild)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith(IDS["source"]) and lines[1].strip().startswith("11111111-")
    assert lines[2].strip().startswith("* 22222222-")
    data = json.loads(
        CliRunner().invoke(main, ["lineage", str(next(folder.glob(f"{IDS['source']}.jsonl"))), "--json"]).output
    )
    assert sorted(d["session_id"] for d in data["descendants"]) == sorted(
        ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", IDS["branch"]]
    )
    assert data["ancestors"] == []
    cleared = CliRunner().invoke(main, ["lineage", str(next(folder.glob(f"{IDS['clear']}.jsonl")))])
    assert "began with /clear" in cleared.output and len(cleared.output.splitlines()) == 2  # no guessed relative


def test_lineage_refuses_a_harness_without_lineage():
    gemini = next((GOLDEN / "gemini_cli" / "tool_call_resumed").glob("session-*.jsonl"))
    out = CliRunner().invoke(main, ["lineage", str(gemini)])
    assert out.exit_code == 1 and "records no session lineage" in out.output


# --- conversion keeps the link where the target has a slot --------------------------------


@pytest.mark.parametrize("target", ["claude_code", "codex", "pi", "gemini_cli", "qwen_code", "stream_json"])
def test_conversion_keeps_or_declares_the_fork_link(target, tmp_path):
    written, loss = api.convert(FORKED, target)
    body = written.files[written.main]
    if target == "claude_code":
        rec = [json.loads(line) for line in body.splitlines() if b'"forkedFrom"' in line]
        assert rec and all(
            r["forkedFrom"]
            == {
                "sessionId": "0d5e2b8c-3f4a-4b6c-9d1e-7a8b9c0d1e2f",
                "messageUuid": "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4",
            }
            for r in rec
        )
        saved = tmp_path / f"{written.session_id}.jsonl"
        saved.write_bytes(body)
        assert origin(saved).forked_from.session_id == "0d5e2b8c-3f4a-4b6c-9d1e-7a8b9c0d1e2f"
    elif target == "codex":
        assert json.loads(body.splitlines()[0])["payload"]["forked_from_id"] == "0d5e2b8c-3f4a-4b6c-9d1e-7a8b9c0d1e2f"
    else:
        assert "lineage:forked-from" in loss.counts()


@pytest.mark.real_client
@pytest.mark.parametrize("target", ["claude_code", "codex"])
def test_converted_fork_resumes_in_the_real_client(target, tmp_path):
    from txcodec.resume_check import claude_code as claude
    from txcodec.resume_check import codex

    written, _ = api.convert(FORKED, target)
    path = tmp_path / f"{written.session_id}.jsonl"
    path.write_bytes(written.files[written.main])
    report = (claude if target == "claude_code" else codex).check_resume(path)
    assert report.exit_code == 0 and report.resumed and report.rejected == [], report


# --- a store's origins read from bytes and kept in the session index ----------------------


def _session_files(harness: str) -> list[Path]:
    golden = sorted((GOLDEN / harness).rglob("*.jsonl"))
    corpus = [p for p in corpus_files(harness, (".jsonl",)) if p.exists()]
    return [p for p in golden + corpus if "/subagents/" not in str(p)]


@pytest.mark.parametrize("harness", LINEAGE_HARNESSES)
def test_an_origin_read_from_bytes_is_the_loaded_files(harness):
    """``store_origins`` reads each file's bytes, not its loaded session: the same origin for
    every golden and corpus file (the corpus is there in CI)."""
    checked = 0
    for path in _session_files(harness):
        try:
            loaded = origin(path, harness)
        except (OSError, ValueError):
            continue
        assert file_origin(path, harness) == loaded, path
        checked += 1
    assert checked >= 3


def _origins(root: Path, index: bool) -> list[dict]:
    return sorted(
        (o.to_dict() for o in lineage_module.store_origins("claude_code", root, index=index)), key=lambda d: d["path"]
    )


def test_the_index_keeps_each_origin_while_its_file_is_unchanged(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    root = tmp_path / "projects"
    shutil.copytree(STORE, root)
    folder = next(root.iterdir())
    assert _origins(root, True) == _origins(root, False)  # cold: read, then kept

    reads = []
    real = lineage_module.file_origin
    monkeypatch.setattr(lineage_module, "file_origin", lambda path, harness: reads.append(path) or real(path, harness))
    assert _origins(root, True) == _origins(root, False) and len(reads) == len(list(root.glob("*/*.jsonl")))
    reads.clear()
    _origins(root, True)
    assert reads == []  # warm: no file read

    child = _fork_of(genuine("source"), "11111111-1111-4111-8111-111111111111", folder)  # added
    branch = next(folder.glob(f"{IDS['branch']}.jsonl"))
    data = branch.read_bytes()
    kept = [line for line in data.splitlines(keepends=True) if b"forkedFrom" not in line]
    branch.write_bytes(b"".join(kept))  # changed: no longer a fork
    next(folder.glob(f"{IDS['clear']}.jsonl")).unlink()  # deleted
    source = next(folder.glob(f"{IDS['source']}.jsonl"))
    source.write_bytes(source.read_bytes()[:200])  # truncated
    reads.clear()
    found = _origins(root, True)
    assert sorted(map(str, reads)) == sorted(map(str, [child, branch, source]))
    assert found == _origins(root, False)
    by_id = {o["session_id"]: o["started_by"] for o in found}
    assert by_id[IDS["branch"]] == "new" and by_id["11111111-1111-4111-8111-111111111111"] == "fork"
    assert IDS["clear"] not in by_id

    out = CliRunner().invoke(main, ["lineage", str(child), "--json"])
    bypass = CliRunner().invoke(main, ["lineage", str(child), "--json", "--no-index"])
    assert out.exit_code == 0 and out.output == bypass.output
