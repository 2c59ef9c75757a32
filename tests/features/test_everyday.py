"""Everyday consistency: a sample per harness, resume into every client, install hints that
work for pip users, one harness option name, documented shell completion."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support.paths import ROOT
from test_sessions import STORE_ENV

from txcodec import api
from txcodec.cli import main
from txcodec.kit import registry

WRITABLE = sorted(n for n, h in registry.harnesses().items() if h.write is not None)


def run(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.mark.parametrize("harness", WRITABLE)
def test_sample_for_every_harness(harness):
    assert harness in api.samples()
    result = run("sample", "--harness", harness)
    assert result.exit_code == 0, result.output
    session = api.load(result.stdout.strip())
    assert session.harness == harness
    messages = api.to_common(session).messages
    assert messages and messages[0].role == "user"


# opencode and Kilo install through their own client (`opencode import`), so with no client
# on PATH there is nothing to install with: tests/harnesses/opencode/test_opencode_real.py covers their resume
@pytest.mark.parametrize(
    "harness", [n for n in WRITABLE if registry.get(n).store is not None and n not in ("opencode", "kilo")]
)
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
    from txcodec.core import programs

    monkeypatch.setattr(programs.shutil, "which", lambda name: None)
    monkeypatch.setenv("TXCODEC_CLIENTS", "/nonexistent")
    monkeypatch.setattr(programs, "__file__", "/nonexistent/a/b/programs.py")  # not a checkout
    with pytest.raises(programs.ClientMissing) as missing:
        programs.require_client("codex")
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


def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in STORE_ENV:
        monkeypatch.delenv(name, raising=False)
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    return here


def _common_file(tmp_path, cwd: str | None, name: str) -> str:
    """The bundled sample as Common JSON, recording ``cwd`` as its project folder."""
    import msgspec

    from txcodec.kit.changes import to_json

    conversation = api.to_common(api.load(run("sample").stdout.strip()))
    conversation.meta.cwd = msgspec.UNSET if cwd is None else cwd
    conversation.meta.id = f"{name}-0000"
    path = tmp_path / f"{name}.json"
    path.write_bytes(to_json(conversation))
    return str(path)


def test_install_and_resume_file_a_session_under_its_own_folder(tmp_path, monkeypatch):
    """One rule for convert --install (one session or many) and resume: the session's own
    project folder, else the current one; --cwd overrides. The printed line goes there
    first (quoted), because the client looks the session up by that folder."""
    here = _isolated_home(tmp_path, monkeypatch)
    sample = run("sample", "--harness", "codex").stdout.strip()
    assert api.to_common(api.load(sample)).meta.cwd == "/home/dev/shop"
    single = run("convert", sample, "--to", "claude_code", "--install")
    assert single.exit_code == 0, single.output
    sid = single.stdout.split()[-1]
    assert single.stdout == f"cd /home/dev/shop && claude --resume {sid}\n"
    assert (tmp_path / ".claude/projects/-home-dev-shop" / f"{sid}.jsonl").is_file()
    assert "/home/dev/shop (the session's project folder) does not exist here" in single.stderr

    # a batch: the same rule, session by session
    project = tmp_path / "it's a project"  # a quote and a space: the printed cd stays one argument
    project.mkdir()
    own, none = _common_file(tmp_path, str(project), "own"), _common_file(tmp_path, None, "none")
    many = run("convert", own, none, "--from", "common", "--to", "qwen_code", "--install")
    assert many.exit_code == 0, many.output
    qwen = tmp_path / ".qwen/projects"
    munged = {p.parent.parent.name for p in qwen.rglob("*.jsonl")}
    assert munged == {re.sub(r"[^A-Za-z0-9]", "-", str(project)), re.sub(r"[^A-Za-z0-9]", "-", str(here))}

    # resume: the session's folder, checked before anything is installed
    missing = run("resume", sample, "--to", "pi", env={"PATH": str(tmp_path / "no-bin")})
    assert missing.exit_code == 1 and "/home/dev/shop: not a folder here" in missing.stderr
    assert "--cwd" in missing.stderr and not (tmp_path / ".pi").exists()
    resumed = run(
        "resume",
        own,
        "--from",
        "common",
        "--to",
        "pi",
        "--session-id",
        "resumed-1",
        env={"PATH": str(tmp_path / "no-bin")},
    )
    assert resumed.exit_code == 0, resumed.output
    line = resumed.stdout.removeprefix("pi is not on PATH; run: ").strip()
    assert shlex.split(line)[:3] == ["cd", str(project), "&&"] and line.endswith("pi --session resumed-1")
    echoed = subprocess.run(["sh", "-c", line.split(" && ")[0] + " && pwd"], capture_output=True, text=True)
    assert echoed.stdout.strip() == str(project)
    # --cwd still overrides, and a session installed here needs no cd
    local = run(
        "convert",
        none,
        "--from",
        "common",
        "--to",
        "claude_code",
        "--install",
        "--session-id",
        "00000000-0000-4000-8000-000000000001",
    )
    assert local.stdout == "claude --resume 00000000-0000-4000-8000-000000000001\n"
    override = run(
        "convert",
        sample,
        "--to",
        "claude_code",
        "--install",
        "--cwd",
        str(project),
        "--session-id",
        "00000000-0000-4000-8000-000000000002",
    )
    assert override.stdout.startswith(f"cd {shlex.quote(str(project))} && claude --resume ")


ACME_ID = "00000000-0000-4000-8000-00000000ac0e"


def test_resume_takes_the_command_from_the_harness_registration(tmp_path, monkeypatch):
    """A harness plugs into ``resume`` by registering its command: nothing in the CLI
    names it. A made-up harness (Qwen Code's writer and store, its own client) resumes."""
    import msgspec

    here = _isolated_home(tmp_path, monkeypatch)
    acme = msgspec.structs.replace(
        registry.get("qwen_code"), name="acme", title="Acme", resume=("acme-agent", "--continue-session", "{id}")
    )
    registry.harnesses()  # every harness loaded first: the made-up one is added to them
    monkeypatch.setitem(registry._cache, "acme", acme)
    to = next(p for p in main.get_command(click.Context(main), "resume").params if p.name == "to")
    monkeypatch.setattr(to.type, "choices", [*to.type.choices, "acme"])
    bin_dir, seen = tmp_path / "bin", tmp_path / "seen.txt"
    bin_dir.mkdir()
    (bin_dir / "acme-agent").write_text(f'#!/bin/sh\nprintf "%s\\n" "$(pwd)" "$@" > "{seen}"\nexit 5\n')
    (bin_dir / "acme-agent").chmod(0o755)
    resumed = run(
        "resume",
        _common_file(tmp_path, None, "plain"),
        "--from",
        "common",
        "--to",
        "acme",
        "--session-id",
        ACME_ID,
        env={"PATH": str(bin_dir)},
    )
    assert resumed.exit_code == 5, resumed.output  # the client's own status
    assert seen.read_text().splitlines() == [str(here), "--continue-session", ACME_ID]
    assert list((tmp_path / ".qwen").rglob(f"{ACME_ID}.jsonl"))
    stored = [n for n, h in registry.harnesses().items() if h.store is not None]
    assert all(registry.get(n).resume_argv("x") for n in stored), "a harness with a store registers its resume command"


def test_verify_prints_each_result_as_it_comes_with_a_progress_bar(tmp_path, monkeypatch):
    """Seen: verify printed nothing until it finished, and showed no progress. Each file's
    line now comes out before the next file is read, and the bar advances per file."""
    import contextlib

    from txcodec.cli import verify as verify_cli

    events: list[tuple[str, str]] = []
    real_verify = verify_cli.verify_file

    def verify_file(path, harness=None):
        events.append(("read", Path(path).name))
        return real_verify(path, harness)

    @contextlib.contextmanager
    def progress(total, what, enabled=True):
        events.append(("bar", f"{total} {what} {enabled}"))
        yield lambda: events.append(("advance", ""))

    monkeypatch.setattr(verify_cli, "verify_file", verify_file)
    monkeypatch.setattr(verify_cli, "progress", progress)
    monkeypatch.setattr(verify_cli.click, "echo", lambda text="", err=False, **_: events.append(("print", str(text))))
    files = []
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(b'{"type":"mode","mode":"a"}\n')
        files.append(str(tmp_path / name))
    result = run("verify", *files)
    assert result.exit_code == 0, result.output
    kinds = [
        (kind, text.split("/")[-1].split()[0] if kind == "print" and "/" in text else text) for kind, text in events
    ]
    assert kinds[0] == ("bar", "2 verifying True")
    assert [k for k in kinds[1:] if k[0] != "advance"][:4] == [
        ("read", "a.jsonl"),
        ("print", "a.jsonl"),
        ("read", "b.jsonl"),
        ("print", "b.jsonl"),
    ]
    assert kinds.count(("advance", "")) == 2
