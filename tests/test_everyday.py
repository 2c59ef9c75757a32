"""Everyday consistency: a sample per harness, resume into every client, install hints that
work for pip users, one harness option name, documented shell completion."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import ROOT
from test_sessions import STORE_ENV

from txcodec import api, registry
from txcodec.cli import main
from txcodec.cli.store import SAMPLES

WRITABLE = sorted(n for n, h in registry.harnesses().items() if h.write is not None)


def run(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.mark.parametrize("harness", WRITABLE)
def test_sample_for_every_harness(harness):
    assert harness in SAMPLES
    result = run("sample", "--harness", harness)
    assert result.exit_code == 0, result.output
    session = api.load(result.stdout.strip())
    assert session.harness == harness
    messages = api.to_common(session).messages
    assert messages and messages[0].role == "user"


# opencode and Kilo install through their own client (`opencode import`), so with no client
# on PATH there is nothing to install with: tests/test_opencode_real.py covers their resume
@pytest.mark.parametrize("harness", [n for n in WRITABLE if registry.get(n).store is not None
                                     and n not in ("opencode", "kilo")])
def test_resume_installs_into_every_client_with_a_store(harness, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in STORE_ENV:
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "shop"
    project.mkdir()
    sample = run("sample").stdout.strip()
    result = run("resume", sample, "--to", harness, "--cwd", str(project), env={"PATH": str(tmp_path / "no-bin")})
    assert result.exit_code == 0, result.output
    assert "is not on PATH; run:" in result.stdout
    installed = [line.split(" ", 1)[1] for line in result.stderr.splitlines() if line.startswith("installed ")]
    assert installed and str(tmp_path) in installed[0]
    assert api.load(installed[0]).harness == harness


def test_resume_refuses_a_target_without_a_store():
    result = run("resume", run("sample").stdout.strip(), "--to", "stream_json")
    assert result.exit_code == 1 and "has no store" in result.output


def test_missing_client_hint_speaks_to_pip_users(monkeypatch):
    from txcodec.clients import report

    monkeypatch.setattr(report.shutil, "which", lambda name: None)
    monkeypatch.setenv("TXCODEC_CLIENTS", "/nonexistent")
    monkeypatch.setattr(report, "__file__", "/nonexistent/a/b/report.py")  # not a checkout
    with pytest.raises(report.ClientMissing) as missing:
        report.require_client("codex")
    message = str(missing.value)
    assert "PATH" in message and "npm install -g @openai/codex" in message and "TXCODEC_CLIENTS" in message


def test_input_harness_is_from_everywhere_and_old_name_still_works():
    sample = run("sample").stdout.strip()
    for command in ("show", "export", "inspect", "verify", "check-resume"):
        help_text = run(command, "--help").output
        assert "--from" in help_text and "--harness" not in help_text, command
    assert run("inspect", sample, "--harness", "claude_code", "--json").exit_code == 0
    assert json.loads(run("inspect", sample, "--from", "claude_code", "--json").stdout)["harness"] == "claude_code"


def test_shell_completion_is_documented():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "_TXCODEC_COMPLETE=bash_source txcodec" in readme
