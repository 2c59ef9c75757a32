"""Issue 34.10: resuming the same session twice reopens the installed copy; when the
source changed since, a new revision is installed, and the command says which."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from test_everyday import STORE_ENV
from test_everyday import WRITABLE

from txcodec import api
from txcodec.cli import main
from txcodec.kit import registry


def _resume(source, harness, project, tmp_path):
    result = CliRunner().invoke(
        main,
        ["resume", str(source), "--to", harness, "--cwd", str(project), "-q"],
        env={"PATH": str(tmp_path / "no-bin")},
    )
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in STORE_ENV:
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "shop"
    project.mkdir()
    return project


@pytest.mark.parametrize(
    "harness", [n for n in WRITABLE if registry.get(n).store is not None and n not in ("opencode", "kilo")]
)
def test_a_second_resume_reopens_the_installed_copy(harness, home, tmp_path):
    source = api.sample("codex" if harness == "claude_code" else "claude_code")
    first = _resume(source, harness, home, tmp_path)
    second = _resume(source, harness, home, tmp_path)
    assert "already: reopening it" in second.stderr and "installed " not in second.stderr
    assert second.stdout == first.stdout  # the same command, the same session


@pytest.mark.parametrize("harness", ["codex", "claude_code", "pi", "qwen_code"])
def test_a_changed_source_is_installed_as_a_new_revision(harness, home, tmp_path):
    source = tmp_path / "session.jsonl"
    original = api.sample("codex" if harness == "claude_code" else "claude_code")
    source.write_bytes(original.read_bytes())
    first = _resume(source, harness, home, tmp_path)
    text = "Checkout returns 500 for an empty cart"
    assert text.encode() in source.read_bytes()
    source.write_bytes(source.read_bytes().replace(text.encode(), b"Checkout returns 502 for an empty cart"))
    changed = _resume(source, harness, home, tmp_path)
    assert "the source changed since it was installed as" in changed.stderr
    assert "installed a new revision" in changed.stderr and changed.stdout != first.stdout
    again = _resume(source, harness, home, tmp_path)
    assert "has this revision already" in again.stderr and again.stdout == changed.stdout
