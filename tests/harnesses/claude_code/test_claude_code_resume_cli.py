"""The user-facing Claude Code commands: ``convert --to claude_code --install`` into a
CLAUDE_CONFIG_DIR store, ``resume`` with and without ``claude`` on PATH, and
``check-resume`` on good, rejected and non-resumable files (real ``claude`` 2.1.332)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import uuid
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner
from support.paths import CORPUS

from txcodec import api
from txcodec.cli import main
from txcodec.core.atomic import TargetExists
from txcodec.core.atomic import install_files
from txcodec.resume_check import claude_code as claude_client
from txcodec.resume_check.claude_code import claude_binary
from txcodec.resume_check.claude_code import claude_env
from txcodec.resume_check.claude_code import comparable
from txcodec.resume_check.claude_code import munge_cwd
from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.anthropic import request_messages
from txcodec.resume_check.mock.server import MockServer
from txcodec.resume_check.process import run_client

SRC = CORPUS / "claude_code/session-migrate/claude-2.1.209/basic.jsonl"
SRC_ID = "10000000-0000-4000-8000-000000000000"  # its sessionId (a UUID), kept by the writer


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture
def store(tmp_path: Path) -> dict:
    config = tmp_path / "config"
    project = tmp_path / "my project"
    project.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path / "home")}
    return {"config": config, "project": project, "env": env}


def _installed(store: dict, session_id: str = SRC_ID) -> Path:
    return store["config"] / "projects" / munge_cwd(str(store["project"])) / f"{session_id}.jsonl"


def test_install_writes_the_converted_bytes_once_and_prints_the_command(store):
    result = run(
        "convert", str(SRC), "--to", "claude_code", "--install", "--cwd", str(store["project"]), env=store["env"]
    )
    assert result.exit_code == 0, result.output
    # run from its project folder: the printed line goes there first
    assert result.stdout == f"cd {shlex.quote(str(store['project']))} && claude --resume {SRC_ID}\n"
    target = _installed(store)
    written, _ = api.convert(SRC, "claude_code", cwd=str(store["project"]))
    assert target.read_bytes() == written.files[written.main]
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temp file left behind
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # as the CLI writes its own files

    again = run(
        "convert", str(SRC), "--to", "claude_code", "--install", "--cwd", str(store["project"]), env=store["env"]
    )
    assert again.exit_code == 1 and "already exists" in again.stderr and "--session-id" in again.stderr
    assert target.read_bytes() == written.files[written.main]  # never overwritten

    fresh = str(uuid.UUID(int=7))
    other = run(
        "convert",
        str(SRC),
        "--to",
        "claude_code",
        "--install",
        "--cwd",
        str(store["project"]),
        "--session-id",
        fresh,
        env=store["env"],
    )
    assert other.exit_code == 0 and other.stdout.endswith(f" && claude --resume {fresh}\n")
    assert _installed(store, fresh).exists()


def test_a_relative_cwd_names_the_absolute_project_folder(store, monkeypatch):
    monkeypatch.chdir(store["project"].parent)
    result = run(
        "convert", str(SRC), "--to", "claude_code", "--install", "--cwd", store["project"].name, env=store["env"]
    )
    assert result.exit_code == 0, result.output
    target = _installed(store)
    assert {json.loads(line).get("cwd") for line in target.read_bytes().splitlines()} - {None} == {
        str(store["project"])
    }


def test_install_is_all_or_nothing(tmp_path):
    (tmp_path / "b").write_bytes(b"a file where a folder is needed")
    with pytest.raises(OSError):
        install_files(tmp_path, {"a.jsonl": b"1\n", "b/c.jsonl": b"2\n"})
    assert not (tmp_path / "a.jsonl").exists()  # the first file was taken back
    (tmp_path / "a.jsonl").write_bytes(b"mine")
    with pytest.raises(TargetExists):
        install_files(tmp_path, {"new.jsonl": b"x", "a.jsonl": b"y"})
    assert not (tmp_path / "new.jsonl").exists() and (tmp_path / "a.jsonl").read_bytes() == b"mine"
    with pytest.raises(ValueError, match="escapes"):
        install_files(tmp_path, {"../out.jsonl": b"x"})


def test_resume_without_claude_on_path_prints_the_command(store, tmp_path):
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    env = store["env"] | {"PATH": str(empty_bin)}
    result = run("resume", str(SRC), "--cwd", str(store["project"]), env=env)
    assert result.exit_code == 0, result.output
    assert (
        result.stdout
        == f"claude is not on PATH; run: cd {shlex.quote(str(store['project']))} && claude --resume {SRC_ID}\n"
    )
    assert _installed(store).exists()


def test_resume_runs_claude_in_the_project_folder(store, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "seen.txt"
    fake = bin_dir / "claude"  # stands in for the interactive client: records how it was run
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$(pwd)" "$@" > "{seen}"\nexit 3\n')
    fake.chmod(0o755)
    env = store["env"] | {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = run("resume", str(SRC), "--cwd", str(store["project"]), env=env)
    assert result.exit_code == 3  # the client's own status
    assert seen.read_text().splitlines() == [str(store["project"]), "--resume", SRC_ID]
    assert _installed(store).exists()


def test_resume_refuses_a_missing_folder_before_installing(store):
    missing = store["project"].parent / "nowhere"
    result = run("resume", str(SRC), "--cwd", str(missing), env=store["env"])
    assert result.exit_code == 1 and "not a folder" in result.stderr
    assert not store["config"].exists()


# --- with the real client ---------------------------------------------------------------


class Done(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def _claude_resume(session_id: str, cwd: Path, config: Path, home: Path):
    """``claude -p --resume ID continue`` in ``cwd`` with the store at ``config``."""
    mock = AnthropicMock(strict=True)
    with MockServer(mock) as server:
        env = claude_env(home, server) | {"CLAUDE_CONFIG_DIR": str(config)}
        done = Done(
            *run_client(
                [str(claude_binary()), "-p", "--resume", session_id, "continue", "--dangerously-skip-permissions"],
                cwd,
                env,
                60,
                "claude",
            )
        )
        bodies = [r.json() for r in server.requests if r.path.split("?")[0] == "/v1/messages"]
    return done, bodies, mock.rejected


@pytest.mark.real_client
def test_the_printed_command_resumes_with_the_real_client(store, tmp_path):
    claude_binary()  # fails with the install command when the CLI is missing
    result = run(
        "convert", str(SRC), "--to", "claude_code", "--install", "--cwd", str(store["project"]), env=store["env"]
    )
    cd, folder, also, *command = shlex.split(result.stdout)
    assert [cd, folder, also, *command[:2]] == ["cd", str(store["project"]), "&&", "claude", "--resume"], result.output
    expected = api.to_common(api.load(_installed(store)))  # before the client appends its turn
    home = tmp_path / "home"
    home.mkdir()
    done, bodies, rejected = _claude_resume(command[2], store["project"], store["config"], home)
    assert done.returncode == 0 and rejected == [], done.stderr
    first_epoch = expected.epochs[-1].start if expected.epochs else 0  # the client resumes from the last compaction
    assert comparable(request_messages(bodies[0])) == comparable(expected.messages[first_epoch:], prompt=None)
    # 2.1.332 finds a UUID session in any project folder of the store (observed, -p and
    # the TUI alike); --cwd still matters: the resumed agent works in the folder it runs in
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done, bodies, rejected = _claude_resume(command[2], elsewhere, store["config"], home)
    assert done.returncode == 0 and rejected == [] and bodies, done.stderr


def _write(tmp_path: Path, name: str, lines: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


SID = "22222222-2222-4222-8222-222222222222"


def _record(n: int, kind: str, content, parent: int | None = None) -> dict:
    uid = f"11111111-1111-4111-8111-{n:012d}"
    return {
        "type": kind,
        "uuid": uid,
        "parentUuid": None if parent is None else f"11111111-1111-4111-8111-{parent:012d}",
        "sessionId": SID,
        "message": {"role": kind, "content": content},
    }


@pytest.mark.real_client
def test_check_resume_json_and_exit_codes(tmp_path, monkeypatch):
    claude_binary()
    good = run("check-resume", str(SRC), "--json")
    assert good.exit_code == 0, good.output
    report = json.loads(good.stdout)
    assert report["resumed"] and report["client"] == "claude 2.1.332" and report["session_id"] == SRC_ID
    assert "Continue after the synthetic compaction." in json.dumps(report["sent"])

    # a string tool input: the client passes it through, the real API answers 400
    bad = _write(
        tmp_path,
        "bad.jsonl",
        [
            _record(1, "user", "hi"),
            _record(2, "assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": "ls"}], 1),
            _record(3, "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}], 2),
        ],
    )
    rejected = run("check-resume", str(bad), "--json")
    assert rejected.exit_code == 1, rejected.output
    report = json.loads(rejected.stdout)
    assert not report["resumed"] and report["requests"] >= 1
    assert (
        len(report["rejected"]) == 1 and "Input should be a valid dictionary" in report["rejected"][0]
    )  # retries counted once

    # a UUID session with no conversation: the client runs and finds nothing
    empty = _write(tmp_path, f"{SID}.jsonl", [{"type": "custom-title", "customTitle": "T", "sessionId": SID}])
    nothing = run("check-resume", str(empty), "--json", "--harness", "claude_code")
    assert nothing.exit_code == 1 and "No conversation found" in json.loads(nothing.stdout)["stderr"]

    # cannot be checked at all: exit 2 with one line naming the file
    no_id = _write(tmp_path, "no-id.jsonl", [{"type": "summary", "summary": "x", "leafUuid": "a"}])
    result = run("check-resume", str(no_id), "--json")
    assert result.exit_code == 2 and "no-id.jsonl" in result.stderr and "Traceback" not in result.output
    (tmp_path / "garbage.jsonl").write_bytes(b"garbage\n{{{\n")
    result = run("check-resume", str(tmp_path / "garbage.jsonl"))
    assert result.exit_code == 2 and "garbage.jsonl" in result.stderr
    monkeypatch.setattr(claude_client, "find_client", lambda name: None)
    result = run("check-resume", str(SRC))
    assert result.exit_code == 2 and "not installed" in result.stderr


@pytest.mark.parametrize("data", [b"", b"garbage\n{{{\n", b'{"no": "harness"}\n'])
def test_convert_refuses_unrecognised_input_in_one_line(tmp_path, data):
    src = tmp_path / "in.jsonl"
    src.write_bytes(data)
    out = tmp_path / "out.jsonl"
    result = run("convert", str(src), "--to", "claude_code", "-o", str(out))
    assert (
        result.exit_code == 1
        and result.stderr.startswith(f"Error: {src}: not a session")
        and result.stderr.count("\n") == 1
    )
    assert not out.exists()
