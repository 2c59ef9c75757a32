"""``txcodec list``, ``sample``, ``inspect`` and ``verify`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from support.paths import CORPUS
from support.paths import GOLDEN

import txcodec.verify
from txcodec.cli import main

SID = "11111111-2222-4333-8444-555555555555"
SAMPLE_ID = "4f6c1d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    proj = tmp_path / "projects" / "-home-dev-shop"
    proj.mkdir(parents=True)
    lines = [
        {"type": "custom-title", "customTitle": "cart fix", "sessionId": SID},
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": SID,
            "cwd": "/home/dev/shop",
            "timestamp": "2026-09-18T10:00:00.000Z",
            "message": {"role": "user", "content": "hi"},
        },
    ]
    (proj / f"{SID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (proj / "memory").mkdir()
    return tmp_path / "projects"


def test_sample_prints_a_bundled_session():
    result = run("sample")
    assert result.exit_code == 0
    path = Path(result.stdout.strip())
    assert path.name == f"{SAMPLE_ID}.jsonl" and path.is_file()
    assert run("sample", "--harness", "no_such").exit_code == 2  # a usage error listing the choices


def test_list_text_and_json(store_root):
    result = run("list", "--root", str(store_root))
    assert result.exit_code == 0, result.output
    assert SID[:8] in result.stdout and SID not in result.stdout  # the shortest unique prefix
    assert "cart fix" in result.stdout and "claude_code" in result.stdout
    result = run("list", "--root", str(store_root), "--harness", "claude_code", "--json")
    items = json.loads(result.stdout)
    assert [(i["session_id"], i["status"], i["title"], i["cwd"]) for i in items] == [
        (SID, "ok", "cart fix", "/home/dev/shop")
    ]


def test_list_reports_problems_without_traceback(store_root, tmp_path):
    result = run("list", "--root", str(store_root), "--harness", "jsonl")
    assert result.exit_code == 1 and "has no session store" in result.output
    result = run("list", "--root", str(store_root), "--harness", "claude_cod")  # ("claude" means claude_code)
    assert result.exit_code == 1 and "did you mean 'claude_code'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (tmp_path / "bare").mkdir()
    result = run("list", "--root", str(tmp_path / "bare"), "--harness", "claude_code")
    assert result.exit_code == 0 and "no sessions found" in result.stderr


def test_inspect_sample_census_and_json():
    sample = run("sample").stdout.strip()
    result = run("inspect", sample)
    assert result.exit_code == 0
    assert "harness:   claude_code" in result.stdout and "system:local_command" in result.stdout
    info = json.loads(run("inspect", sample, "--json").stdout)
    assert info["harness"] == "claude_code" and info["lines"] == 19 and info["diagnostics"] == []
    assert info["census"]["assistant"] == 8


def test_inspect_diagnostics_have_line_numbers():
    path = CORPUS / "claude_code" / "claude-code-log" / "edge_cases.jsonl"
    result = run("inspect", str(path))
    assert "line 13: not a JSON object: str" in result.stdout
    info = json.loads(run("inspect", str(path), "--json").stdout)
    assert {d["line"] for d in info["diagnostics"]} == {11, 13, 14, 15, 16}
    assert info["final_newline"] is False


def test_inspect_shows_side_files():
    case = GOLDEN / "claude_code" / "workflow"
    (main_file,) = case.glob("*.jsonl")
    info = json.loads(run("inspect", str(main_file), "--json").stdout)
    assert set(info["side_files"]) == {
        "subagent_meta",
        "workflow_agents",
        "journals",
        "workflow_runs",
        "workflow_scripts",
    }
    journal = next(case.rglob("journal.jsonl"))
    info = json.loads(run("inspect", str(journal), "--json").stdout)
    assert info["census"] == {"result": 1, "started": 1}
    meta = next(case.rglob("*.meta.json"))
    assert json.loads(run("inspect", str(meta), "--json").stdout)["census"] == {"AgentMeta": 1}


def test_inspect_missing_file_is_one_clear_line(tmp_path):
    result = run("inspect", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2 and "no such file" in result.output  # like every command taking a session
    assert "nope.jsonl" in result.output and "Traceback" not in result.output


def test_verify_directories_recursively():
    result = run("verify", str(GOLDEN / "claude_code"), str(CORPUS / "claude_code" / "spotter"))
    assert result.exit_code == 0, result.output
    assert "all byte-identical" in result.output
    report = json.loads(run("verify", str(GOLDEN / "claude_code"), "--json").stdout)
    assert report["ok"] and report["failed"] == 0 and report["files"] >= 30
    # not native: the expected outputs and a scenario's description (tests/support/scenarios)
    native = [
        r
        for r in report["results"]
        if not Path(r["path"]).name.startswith("expected") and Path(r["path"]).name != "scenario.json"
    ]
    assert {r["harness"] for r in native} == {"claude_code"}


def test_verify_compressed_and_odd_files(tmp_path):
    import zstandard

    data = b'\xef\xbb\xbf{"type":"user","uuid":"a"}\r\n\n\xff\n{"type":"user","uuid":"b","message":{"role":"us'
    (tmp_path / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    (tmp_path / "b.jsonl").write_bytes(data)
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "doc.json").write_bytes(b'{\n  "agentType": "x"\n}\n')
    (tmp_path / "skipped.txt").write_bytes(b"not checked")
    report = json.loads(run("verify", str(tmp_path), "--json").stdout)
    assert report["ok"], report
    assert sorted(Path(r["path"]).name for r in report["results"]) == [
        "a.jsonl.zst",
        "b.jsonl",
        "doc.json",
        "empty.jsonl",
    ]
    sizes = {Path(r["path"]).name: r["bytes"] for r in report["results"]}
    assert sizes["a.jsonl.zst"] == sizes["b.jsonl"] == len(data)


def test_verify_names_the_first_difference(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"mode","mode":"a"}\n{"type":"mode","mode":"b"}\n')
    real_emit = txcodec.verify.NativeSession.emit

    def broken(self, line):
        out = bytes(real_emit(self, line))
        return out.replace(b'"b"', b'"B"')

    monkeypatch.setattr(txcodec.verify.NativeSession, "emit", broken)
    result = run("verify", str(path))
    assert result.exit_code == 1
    assert "line 2 differs from byte offset 50" in result.output
    report = json.loads(run("verify", str(path), "--json").stdout)
    assert report["results"][0]["first_difference"] == 50 and not report["ok"]


def test_verify_errors_are_reported(tmp_path):
    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(b"not zstd")
    result = run("verify", str(bad))
    assert result.exit_code == 1 and "ERROR" in result.output and "Traceback" not in result.output
    missing = run("verify", str(tmp_path / "missing"), str(GOLDEN / "claude_code" / "thinking"))
    assert missing.exit_code == 1 and "Traceback" not in missing.output
    assert f"ERROR  {tmp_path / 'missing'}: No such file or directory" in missing.output
    assert "ok     " in missing.output  # the other path was still checked
    assert run("verify").exit_code == 2  # usage errors
    unknown = run("verify", "--harness", "nope", str(GOLDEN / "claude_code" / "thinking"))
    assert unknown.exit_code == 2 and "unknown harness 'nope'" in unknown.output
    (tmp_path / "nothing").mkdir()
    result = run("verify", str(tmp_path / "nothing"))
    assert result.exit_code == 2 and "no .jsonl" in result.output and "all byte-identical" not in result.output


def test_list_reads_other_stores_names():
    """Stores of other harnesses name things differently (codex: id, last_timestamp): one row type."""
    from txcodec.harnesses.codex.store import SessionInfo
    from txcodec.sessions import _row

    item = SessionInfo(
        id="019a-x",
        path="/r.jsonl",
        last_timestamp="2026-09-18T10:00:00Z",
        user_messages=2,
        assistant_messages=3,
        cwd="/w/shop",
        model="gpt-5",
    )
    row = _row("codex", item)
    assert (row.session_id, row.updated, row.messages, row.project, row.models) == (
        "019a-x",
        "2026-09-18T10:00:00Z",
        5,
        "shop",
        ["gpt-5"],
    )


def test_list_survives_a_failing_store(monkeypatch, store_root):
    from txcodec.harnesses.codex import HARNESS as codex
    from txcodec.kit import registry

    class Broken:  # a Store whose listing fails (no describe_item: it has no per-file listing)
        describe_item = None
        discover_files = None

        @staticmethod
        def default_root():
            return store_root

        @staticmethod
        def discover(root=None):
            raise OSError("store exploded")

    monkeypatch.setitem(registry._cache, "codex", msgspec.structs.replace(codex, store=Broken))
    result = run("list", "--root", str(store_root))
    assert result.exit_code == 0 and SID[:8] in result.stdout and "codex: store exploded" in result.stderr


def test_verify_walk_skips_non_regular_files_and_reports_dangling_links(tmp_path):
    """A FIFO under a directory would block verify forever: only regular files (and
    dangling symlinks, to report them) are picked up."""
    import os

    (tmp_path / "ok.jsonl").write_bytes(b'{"type":"mode","mode":"a"}\n')
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    assert [p.name for p in txcodec.verify.collect([tmp_path])] == ["gone.jsonl", "ok.jsonl"]
    result = run("verify", str(tmp_path))
    assert result.exit_code == 1
    assert "ERROR" in result.output and "gone.jsonl" in result.output and "pipe.jsonl" not in result.output


def test_verify_counts_lines_kept_as_bytes(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"mode","mode":"a"}\nnot json\n{"type":"brand-new"}\n{"type":"mode"')
    result = run("verify", str(path))
    assert result.exit_code == 0 and "3 kept as bytes only" in result.output
    assert json.loads(run("verify", "--json", str(path)).stdout)["results"][0]["opaque"] == 3


def test_list_missing_root_is_a_usage_error(tmp_path):
    result = run("list", "--root", str(tmp_path / "nowhere"))
    assert result.exit_code == 2 and "does not exist" in result.output


def test_verify_reports_a_folder_it_cannot_list(tmp_path, monkeypatch):
    import os

    (tmp_path / "a.jsonl").write_bytes(b'{"type":"mode","mode":"a"}\n')
    (tmp_path / "locked").mkdir()
    real_scandir, real_listdir = os.scandir, os.listdir

    def refuse(path, real):
        if str(path) == str(tmp_path / "locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", lambda path=".": refuse(path, real_scandir))
    monkeypatch.setattr(os, "listdir", lambda path=".": refuse(path, real_listdir))
    result = run("verify", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert f"ERROR  {tmp_path / 'locked'}: Permission denied" in result.output
    assert "ok     " in result.output and "Traceback" not in result.output


def test_verify_and_inspect_survive_json_nested_too_deeply(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b'{"type":"mode","mode":"a","sessionId":"s"}\n' + b"[" * 5000 + b"\n")
    result = run("verify", str(path))
    assert result.exit_code == 0 and "1 kept as bytes only" in result.output, result.output
    result = run("inspect", str(path))
    assert result.exit_code == 0 and "line 2: not decoded: JSON nested too deeply" in result.output
