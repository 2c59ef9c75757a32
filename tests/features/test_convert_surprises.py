"""Issue 34.7, 34.8, 34.9, 34.11: the quick start runs twice (``--force``), a batch skips
sessions already in the target and says so, a wrong ``--from`` names the harness the file
is, and a folder target refuses an ``-o`` that names a file."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from support.paths import ROOT

from txcodec import api
from txcodec.cli import main


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_readme_quick_start_runs_twice(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in readme.splitlines() if ln.startswith("pip install . && txcodec show"))
    convert = line.split(" && ")[-1]
    args = convert.replace('"$(txcodec sample)"', str(api.sample())).split()[1:]
    assert "--force" in args
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        out = _run(*args)
        assert out.exit_code == 0, out.output
    assert (tmp_path / "sample-rollout.jsonl").stat().st_size
    without = _run(*[a for a in args if a != "--force"])
    assert without.exit_code == 1 and "--force replaces it" in without.output


def test_force_needs_an_output():
    out = _run("convert", str(api.sample()), "--to", "codex", "--force")
    assert out.exit_code == 2 and "give -o" in out.output


def test_a_batch_skips_sessions_already_in_the_target(tmp_path):
    codex = tmp_path / "rollout.jsonl"
    written, _ = api.convert(api.sample(), "codex")
    codex.write_bytes(written.files[written.main])
    out = _run("convert", str(codex), str(api.sample()), "--to", "codex", "-o", str(tmp_path / "out"))
    assert out.exit_code == 0, out.output
    assert re.search(r"skipped \(already codex\)\s+1", out.output), out.output
    assert re.search(r"converted\s+1", out.output) and re.search(r"failed\s+0", out.output)


@pytest.mark.parametrize("command", ["show", "convert"])
def test_a_wrong_from_names_the_harness_the_file_is(command, tmp_path):
    args = [command, "--from", "codex", str(api.sample())]
    if command == "convert":
        args += ["--to", "gemini_cli", "-o", str(tmp_path / "g")]
    out = _run(*args)
    assert out.exit_code == 1, out.output
    assert "looks like a Claude Code session: use --from claude_code" in out.output
    assert len(out.output.strip().splitlines()) == 1 and not (tmp_path / "g").exists()


@pytest.mark.parametrize("target", ["gemini_cli", "cline"])
def test_a_folder_target_refuses_a_file_name_and_says_what_it_made(target, tmp_path):
    named = tmp_path / "g.jsonl"
    out = _run("convert", str(api.sample()), "--to", target, "-o", str(named))
    assert out.exit_code == 2 and "writes a folder of" in out.output and "give -o a folder name" in out.output
    assert not named.exists()
    folder = tmp_path / "g"
    out = _run("convert", str(api.sample()), "--to", target, "-o", str(folder))
    assert out.exit_code == 0, out.output
    assert f"made the folder {folder}/ with" in out.output and "the session:" in out.output
