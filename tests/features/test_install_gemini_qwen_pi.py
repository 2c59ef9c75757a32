"""``txcodec convert --to gemini_cli|qwen_code|pi --install`` into a fake HOME: the file
lands where the client looks, atomically, never over an existing one, and the command
that resumes it is printed (the real clients run it in test_install_gemini_qwen_pi_real)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.harnesses.gemini_cli.store import project_hash

SOURCE = GOLDEN / "pi" / "tool_call" / "session.jsonl"
OVERRIDES = ("GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR")
RESUME = {"gemini_cli": "gemini --resume {}", "qwen_code": "qwen --resume {}", "pi": "pi --session {}"}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in OVERRIDES:
        monkeypatch.delenv(name, raising=False)
    return home


def install(target: str, cwd: Path, source: Path = SOURCE, *extra: str):
    return CliRunner().invoke(main, ["convert", "--to", target, "--install", "--cwd", str(cwd), str(source), *extra])


def store_files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def expected_path(target: str, home: Path, cwd: Path, session_id: str) -> Path:
    if target == "gemini_cli":
        (path,) = (home / ".gemini" / "tmp" / "project" / "chats").glob(f"session-*-{session_id[:8]}.jsonl")
        return path
    if target == "qwen_code":
        return home / ".qwen" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd)) / "chats" / f"{session_id}.jsonl"
    folder = home / ".pi" / "agent" / "sessions" / ("--" + str(cwd).lstrip("/").replace("/", "-") + "--")
    (path,) = folder.glob(f"*_{session_id}.jsonl")
    return path


@pytest.mark.parametrize("target", ["gemini_cli", "qwen_code", "pi"])
def test_install_into_the_store_prints_the_resume_command_and_never_overwrites(target, home, tmp_path):
    cwd = tmp_path / "project"
    cwd.mkdir()
    first = install(target, cwd)
    assert first.exit_code == 0, first.output
    (command,) = first.stdout.splitlines()
    session_id = command.split()[-1]
    # these clients look for it by its project folder: the line goes there first
    assert command == f"cd {shlex.quote(str(cwd))} && " + RESUME[target].format(session_id)
    path = expected_path(target, home, cwd, session_id)
    assert f"installed {path}" in first.stderr
    session = api.load(path)
    assert session.harness == target and not session.diagnostics
    assert api.to_common(session).meta.cwd == str(cwd)
    before = store_files(home)
    assert not [name for name in before if name.endswith(".tmp")]  # temp files renamed or removed

    again = install(target, cwd)
    assert again.exit_code == 1 and "already exists" in again.output and "Traceback" not in again.output
    assert store_files(home) == before  # nothing touched, nothing half-written


def test_gemini_install_registers_the_project_beside_others(home, tmp_path):
    cwd = tmp_path / "project"
    cwd.mkdir()
    gemini = home / ".gemini"
    (gemini / "tmp" / "project").mkdir(parents=True)
    (gemini / "tmp" / "project" / ".project_root").write_text("/somewhere/else/project")
    (gemini / "projects.json").write_text(json.dumps({"projects": {"/somewhere/else/project": "project"}}))
    result = install("gemini_cli", cwd)
    assert result.exit_code == 0, result.output
    registry = json.loads((gemini / "projects.json").read_text())
    assert registry == {"projects": {"/somewhere/else/project": "project", str(cwd): "project-1"}}
    (chat,) = (gemini / "tmp" / "project-1" / "chats").glob("session-*.jsonl")
    assert json.loads(chat.read_bytes().split(b"\n")[0])["projectHash"] == project_hash(str(cwd))


def test_gemini_install_refuses_an_unreadable_registry_before_writing(home, tmp_path):
    (home / ".gemini").mkdir()
    (home / ".gemini" / "projects.json").write_text("{not json")
    before = store_files(home)
    result = install("gemini_cli", tmp_path)
    assert result.exit_code == 1 and "projects.json" in result.output and "Traceback" not in result.output
    assert store_files(home) == before


def test_home_overrides_are_honoured(home, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "q"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "p"))
    for target in ("gemini_cli", "qwen_code", "pi"):
        assert install(target, tmp_path).exit_code == 0
    assert list((tmp_path / "g" / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))
    assert list((tmp_path / "q" / "projects").glob("*/chats/*.jsonl"))
    assert list((tmp_path / "p" / "sessions").glob("*/*.jsonl"))
    assert store_files(home) == {}
