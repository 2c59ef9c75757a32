"""The generic CLI commands on Codex rollouts: list (a CODEX_HOME store with a live, an
archived and a compressed rollout), inspect, verify, show, export, usage, convert
--install and check-resume (real ``codex``)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner
from support.paths import CORPUS
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.harnesses.codex.store import rollout_relpath
from txcodec.model.common_json import from_json

GENUINE = CORPUS / "codex/generated/codex_exec_2turns.jsonl"  # codex 0.171.0, offline run
GENUINE_ID = "01a22ae0-e16d-7811-83e2-df24d1fd6624"
HAND_BUILT = GOLDEN / "codex/hand_built/rollout.jsonl"
MIGRATE = CORPUS / "codex/session-migrate/codex-0.144.4/basic.jsonl"


def run(*args: str, env: dict | None = None):
    result = CliRunner().invoke(main, list(args), env=env)
    return result


@pytest.fixture
def store(tmp_path: Path) -> dict:
    """A CODEX_HOME with one live, one archived and one zstd-compressed rollout, and an
    empty HOME so no other harness's real store is listed."""
    home = tmp_path / "codex_home"
    ids = {}
    for source, sub, compress in (
        (GENUINE, "sessions", False),
        (HAND_BUILT, "archived_sessions", False),
        (MIGRATE, "sessions", True),
    ):
        data = source.read_bytes()
        session = api.to_common(api.load(data))
        rel = rollout_relpath(session.meta.started_at, session.meta.id).replace("sessions/", f"{sub}/", 1)
        target = home / (rel + (".zst" if compress else ""))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(zstandard.ZstdCompressor().compress(data) if compress else data)
        ids[source] = (session.meta.id, target)
    env = {"CODEX_HOME": str(home), "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": None, "GEMINI_CLI_HOME": None}
    return {"home": home, "ids": ids, "env": env}


def test_list_finds_live_archived_and_compressed(store):
    result = run("list", "--harness", "codex", "--json", env=store["env"])
    assert result.exit_code == 0, result.output
    rows = {r["session_id"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {sid for sid, _ in store["ids"].values()}
    genuine = rows[GENUINE_ID]
    assert (genuine["models"], genuine["harness"]) == (["gpt-5.1-codex"], "codex")
    assert rows[store["ids"][HAND_BUILT][0]]["status"] == "archived"
    assert rows[store["ids"][MIGRATE][0]]["path"].endswith(".jsonl.zst")
    # the store's own description keeps the codex-only details
    from txcodec.harnesses.codex.store import discover

    info = {i.id: i for i in discover(store["home"])}
    assert (info[GENUINE_ID].cli_version, info[GENUINE_ID].tool_calls) == ("0.171.0", 3)
    assert info[store["ids"][MIGRATE][0]].compressed is True
    # the plain listing (every harness) shows the codex sessions too
    plain = run("list", "--full-id", env=store["env"])
    assert plain.exit_code == 0 and GENUINE_ID in plain.stdout and "codex" in plain.stdout


def test_files_listing_is_the_listing_without_reading(store):
    """``discover_files`` (the Parquet export's listing) finds the rollouts ``discover``
    finds, under the ids their names give, without reading an uncompressed one; a broken
    compressed rollout is still read, and left out as ``discover`` leaves it out."""
    from txcodec.harnesses.codex.store import discover
    from txcodec.harnesses.codex.store import discover_files

    name = f"rollout-2026-01-02T03-04-05-{'0' * 8}-0000-7000-8000-{'0' * 12}.jsonl.zst"
    broken = store["home"] / "sessions/2026/01/02" / name
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(b"not zstd")
    described = {(i.path, i.id, i.archived) for i in discover(store["home"])}
    files = {(i.path, i.id, i.archived) for i in discover_files(store["home"])}
    assert files == described and len(files) == len(store["ids"])
    assert str(broken) not in {path for path, _, _ in files}


def test_list_root_option(store):
    result = run("list", "--harness", "codex", "--root", str(store["home"]), "--json", env={"CODEX_HOME": None})
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 3


def test_inspect_census_by_payload_type(store):
    _, path = store["ids"][GENUINE]
    result = run("inspect", str(path), "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["harness"] == "codex" and info["lines"] == 43
    census = info["census"]
    lines = [json.loads(l) for l in GENUINE.read_bytes().splitlines()]
    expected: dict[str, int] = {}
    for l in lines:
        inner = l["payload"].get("type") if l["type"] in ("response_item", "event_msg") else None
        key = f"{l['type']}:{inner}" if inner else l["type"]
        expected[key] = expected.get(key, 0) + 1
    assert census == dict(sorted(expected.items(), key=lambda kv: (-kv[1], kv[0])))


def test_inspect_names_a_broken_line():
    path = CORPUS / "codex/claude-code-log/malformed/rollout-66666666-6666-4666-8666-666666666666.jsonl"
    info = json.loads(run("inspect", str(path), "--json").stdout)
    assert info["harness"] == "codex" and [d["line"] for d in info["diagnostics"]] == [3]


def test_verify_every_codex_file_byte_identical(store):
    paths = [str(p) for _, p in store["ids"].values()] + [str(p) for p in sorted((CORPUS / "codex").rglob("*.jsonl"))]
    result = run("verify", "--json", *paths)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["files"] == len(paths) and report["failed"] == 0
    assert all(r["ok"] and r["harness"] == "codex" for r in report["results"])


def test_show_marks_preludes_and_shows_tools(store):
    _, path = store["ids"][GENUINE]
    result = run("show", str(path))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "What is in notes.txt?" in text and "Write answer.py printing 42 and run it" in text
    assert text.count("▸ exec_command") == 3 and text.count("◂ exec_command result") == 3
    # a prelude is shown as injected context, not as a prompt
    (line,) = [l for l in text.splitlines() if "<environment_context>" in l]
    assert line.startswith("· injected:")


def test_export_common_and_markdown(store, tmp_path):
    _, path = store["ids"][MIGRATE]  # compressed: read through zstd
    out = tmp_path / "c.json"
    result = run("export", str(path), "--to", "common", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert from_json(out.read_bytes()) == api.to_common(api.load(MIGRATE.read_bytes()))
    md = run("export", str(store["ids"][GENUINE][1]), "--to", "markdown")
    assert md.exit_code == 0, md.output
    assert "What is in notes.txt?" in md.stdout and "exec_command" in md.stdout and "hello world" in md.stdout


def test_usage_counts_each_model_call_once(store):
    _, path = store["ids"][GENUINE]
    result = run("usage", "--json", str(path))
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["rows"]
    # independently: each token_count's last call, repeats (same running total) skipped;
    # Common's input excludes the cached part
    seen, calls, inputs, outputs, cached = None, 0, 0, 0, 0
    for line in GENUINE.read_bytes().splitlines():
        value = json.loads(line)
        payload = value.get("payload", {})
        if value["type"] != "event_msg" or payload.get("type") != "token_count" or not payload.get("info"):
            continue
        total = json.dumps(payload["info"]["total_token_usage"], sort_keys=True)
        if total == seen:
            continue
        seen = total
        last = payload["info"]["last_token_usage"]
        calls += 1
        inputs += last["input_tokens"] - last.get("cached_input_tokens", 0)
        cached += last.get("cached_input_tokens", 0)
        outputs += last["output_tokens"]
    assert (row["model"], row["calls"]) == ("gpt-5.1-codex", calls)
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_input_tokens"]) == (inputs, outputs, cached)


def test_convert_install_into_codex_home(store):
    src = CORPUS / "claude_code/session-migrate/claude-2.1.209/basic.jsonl"
    result = run(
        "convert", str(src), "--from", "claude_code", "--to", "codex", "--install", "--cwd", "/work", env=store["env"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1
    *cd, client, verb, session_id = shlex.split(result.stdout)
    assert cd in (["cd", "/work", "&&"], []) and [client, verb] == ["codex", "resume"], result.stdout
    (installed,) = [p for p in (store["home"] / "sessions").rglob(f"*{session_id}*")]
    # the date folder and name come from the session's start (its first record, 2026-08-17T12:00:00Z)
    assert installed == store["home"] / f"sessions/2026/08/17/rollout-2026-08-17T12-00-00-{session_id}.jsonl"
    assert all(
        p.name.startswith("rollout-") and p.name.endswith((".jsonl", ".zst")) for p in installed.parent.iterdir()
    )  # no temp file left
    before = installed.read_bytes()
    assert api.load(before).harness == "codex"
    listed = json.loads(run("list", "--harness", "codex", "--json", env=store["env"]).stdout)
    assert session_id in {r["session_id"] for r in listed}
    again = run(
        "convert", str(src), "--from", "claude_code", "--to", "codex", "--install", "--cwd", "/work", env=store["env"]
    )
    assert again.exit_code != 0 and "exists" in again.output + again.stderr
    assert installed.read_bytes() == before  # never overwritten


@pytest.mark.real_client
def test_check_resume_cli(tmp_path):
    from txcodec.resume_check.codex import codex_binary

    codex_binary()  # fails with the install command when the CLI is missing
    result = run("check-resume", str(GENUINE), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["resumed"] and report["harness"] == "codex" and report["session_id"] == GENUINE_ID
    texts = json.dumps(report["sent"])
    assert "What is in notes.txt?" in texts and "Created answer.py; it prints 42." in texts
    # a file codex cannot resume by id: it starts a new session with exit 0; the check says no
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(GENUINE.read_bytes().replace(GENUINE_ID.encode(), b"not-a-uuid-session"))
    result = run("check-resume", str(bad))
    assert result.exit_code == 1 and "NOT resumed" in result.stdout


def test_zst_written_compressed_and_read_back(tmp_path):
    """``-o X.jsonl.zst`` writes zstd (not plain text under a .zst name); every command
    reads it back; ``verify`` checks the decompressed bytes."""
    out = tmp_path / "rollout-x.jsonl.zst"
    result = run("convert", str(HAND_BUILT), "--to", "codex", "-o", str(out))
    assert result.exit_code == 0, result.output
    data = zstandard.ZstdDecompressor().stream_reader(out.read_bytes()).read()
    assert api.load(data).harness == "codex" and out.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"  # zstd magic
    report = json.loads(run("verify", "--json", str(out)).stdout)
    assert report["ok"] and report["results"][0]["bytes"] == len(data)
    shown = run("show", str(out))
    assert shown.exit_code == 0 and "Fix the greeting nonce ZETA-7" in shown.stdout


def test_corrupt_zst_is_one_error_line(tmp_path):
    bad = tmp_path / "rollout-bad.jsonl.zst"
    bad.write_bytes(b"\x28\xb5\x2f\xfd not really zstd")
    for args in (["show"], ["usage"], ["inspect"], ["export", "--to", "markdown"], ["convert", "--to", "claude_code"]):
        result = run(*args, str(bad))
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (args, result.exception)
        assert f"{bad}: not a readable zstd file" in result.output, (args, result.output)
        assert "Traceback" not in result.output
    report = json.loads(run("verify", "--json", str(bad)).stdout)
    assert not report["ok"] and "zstd" in report["results"][0]["error"].lower()
