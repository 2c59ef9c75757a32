"""``txcodec convert SRC... -o DIR``: many sessions at once, in parallel, a bad one never stopping the rest."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from test_sessions import HARNESSES  # noqa: F401  (the fixture: a HOME with five stores)
from test_sessions import home  # noqa: F401  (the fixture: a HOME with five stores)

from txcodec import api
from txcodec import batch
from txcodec.cli import main
from txcodec.cli.store import sample_path
from txcodec.kit import registry


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_convert_all_in_parallel_with_summary_and_loss_reports(home, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    result = run("convert", "--all", "--to", "codex", "-o", str(out), "--jobs", "2", "--loss")
    assert result.exit_code == 0, result.output
    written = sorted(out.rglob("rollout-*.jsonl"))
    # the Gemini subagent chat goes with its session, not alone; the Codex session is Codex already
    assert len(written) == len(HARNESSES) - 1 and "skipped (already codex)" in result.stderr
    for path in written:
        assert api.load(path).harness == "codex" and api.to_common(api.load(path)).messages
    assert any(line.split() == ["converted", "4"] for line in result.stderr.splitlines()), result.stderr
    reports = sorted((out / "loss").glob("*.loss.json"))
    assert reports and all("counts" in json.loads(p.read_text()) for p in reports)
    # again: everything exists; skipped with --skip-existing, failed (never overwritten) without
    again = run("convert", "--all", "--to", "codex", "-o", str(out), "--skip-existing")
    assert again.exit_code == 0 and "skipped (already done)" in again.stderr
    refused = run("convert", "--all", "--to", "codex", "-o", str(out), "-j", "1")
    assert refused.exit_code == 1 and "exists" in refused.stderr


def test_a_folder_with_a_bad_session_converts_the_others(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(3):
        shutil.copy(sample_path("claude_code"), folder / f"s{i}.jsonl")
    (folder / "broken.jsonl").write_bytes(
        b'{"type":"user","message":{"role":"user","content":"x"}}\n\xff\xfe not json\n'
    )
    (folder / "garbage.jsonl.zst").write_bytes(b"not zstd")
    (folder / "notes.json").write_text('{"a side file": true}')  # a JSON document is no session: not taken
    result = run("convert", str(folder), "--to", "pi", "-o", str(tmp_path / "out"), "-j", "2")
    assert result.exit_code == 1
    assert "notes.json" not in result.stderr
    (failed,) = [line for line in result.stderr.splitlines() if "garbage.jsonl.zst" in line]
    assert failed == f"failed  {folder / 'garbage.jsonl.zst'}: not a readable zstd file" or (
        failed.startswith(f"failed  {folder / 'garbage.jsonl.zst'}: not a readable zstd file (")
    ), failed
    assert "Traceback" not in result.output
    # the three copies share the sample's id: one is written, the two others are refused as existing
    assert len(list((tmp_path / "out").rglob("*.jsonl"))) >= 1


def test_batch_run_keeps_going_after_a_crash():
    outcomes = list(batch.run(["ok", "boom", "ok2"], _work, jobs=2))
    assert sorted(o.status for o in outcomes) == ["converted", "converted", "failed"]
    (failed,) = [o for o in outcomes if o.status == "failed"]
    assert failed.source == "boom" and failed.reason == "RuntimeError: exploded"


def _work(item: str) -> batch.Outcome:
    if item == "boom":
        raise RuntimeError("exploded")
    return batch.Outcome(source=item, status="converted")


def test_batch_needs_an_output_and_single_options_are_refused(home, tmp_path):  # noqa: F811
    assert "needs -o DIR or --install" in run("convert", "--all", "--to", "pi").output
    refused = run("convert", "--all", "--to", "pi", "-o", str(tmp_path / "o"), "--session-id", "x")
    assert refused.exit_code == 2 and "--session-id: for one session only" in refused.output
    assert run("convert", "--to", "pi").exit_code == 2
    assert run("convert", "--all", "--to", "pi", "--project", "elsewhere", "-o", str(tmp_path / "o")).exit_code == 2


def test_one_session_prints_one_loss_line_and_quiet_silences_it(tmp_path):
    sample = str(sample_path("claude_code"))
    result = run("convert", sample, "--to", "codex", "-o", str(tmp_path / "a.jsonl"))
    assert result.exit_code == 0
    loss_lines = [line for line in result.stderr.splitlines() if line.startswith("loss:")]
    assert len(loss_lines) == 1 and loss_lines[0].endswith("(details: --loss)")
    assert "metadata fields/records not carried" in loss_lines[0]
    quiet = run("convert", sample, "--to", "codex", "-o", str(tmp_path / "b.jsonl"), "-q")
    assert quiet.exit_code == 0 and "loss" not in quiet.stderr


def test_to_lists_and_completes_its_choices():
    from click.shell_completion import ShellComplete

    help_text = run("convert", "--help").output
    writable = sorted(n for n, h in registry.harnesses().items() if h.write is not None)
    assert "[" + "|".join(writable) + "]" in " ".join(help_text.split())
    complete = ShellComplete(main, {}, "txcodec", "_TXCODEC_COMPLETE")
    assert [c.value for c in complete.get_completions(["convert", "x", "--to"], "q")] == ["qwen_code"]


def _echo(item: int) -> batch.Outcome:
    return batch.Outcome(source=str(item), status="converted")


def test_a_pool_holds_a_few_chunks_in_flight_not_every_one(monkeypatch):
    """issue 37: every chunk was submitted at once and every finished one kept to the end,
    so a slow consumer (the Parquet export, writing) held the rows of every session."""
    from concurrent.futures import ProcessPoolExecutor

    submitted = []
    real = ProcessPoolExecutor.submit

    def counting(self, fn, *args):
        submitted.append(args)
        return real(self, fn, *args)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", counting)
    outcomes = batch.run(range(200), _echo, jobs=2, chunk=1)
    first = next(outcomes)
    assert len(submitted) <= 2 * 2 + 1  # was 200
    assert sorted(int(o.source) for o in [first, *outcomes]) == list(range(200))


@pytest.mark.parametrize("to", ["gemini_cli", "kimi_cli", "continue_cli"])
def test_sessions_of_two_projects_share_the_targets_registry_in_one_output_folder(tmp_path, to):
    # these stores keep one registry file for every session (projects.json, kimi.json,
    # sessions.json): a batch merges it as the store's own install does, never refuses it
    folder = tmp_path / "in"
    folder.mkdir()
    sample = sample_path("claude_code").read_text()
    sample_id = sample_path("claude_code").stem  # the file is named by its session id
    cwds = {"/work/alpha", "/work/beta"}
    for i, cwd in enumerate(sorted(cwds)):
        text = sample.replace(sample_id, f"{i + 1}" * 8 + sample_id[8:]).replace(
            '"cwd":"/home/dev/src/shop-api"', f'"cwd":"{cwd}"'
        )
        (folder / f"s{i}.jsonl").write_text(text)
    out = tmp_path / "out"
    result = run("convert", str(folder), "--to", to, "-o", str(out), "-j", "2")
    assert result.exit_code == 0, result.output
    found = [item.path for item in registry.get(to).store.discover(out)]
    assert len(found) == 2, found
    assert {api.to_common(api.load(path)).meta.cwd for path in found} == cwds
