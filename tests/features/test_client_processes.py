"""Real clients run sandboxed, and nothing they start outlives their run (issue 10, item 7).

A stand-in "client" (a shell script) shows what the runner promises for any binary: the
``--version`` probes of every client module see only the scrubbed environment and a
throw-away HOME and cwd, and a child in the process group or a daemon that left it
(``setsid``, as ``codex app-server`` does) is gone when the run returns, on a timeout
too. With the real Codex CLI installed, a resume check leaves no process behind either.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support.paths import GOLDEN

from txcodec.resume_check import claude_code as claude
from txcodec.resume_check import codex
from txcodec.resume_check import gemini_cli as gemini
from txcodec.resume_check import pi
from txcodec.resume_check import process
from txcodec.resume_check import qwen_code as qwen
from txcodec.resume_check.report import find_client


def _alive(pid: int) -> bool:
    """Running: the pid exists and is not a zombie (reaped later by whoever adopted it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def _fake_client(tmp_path: Path, *, hang: bool = False) -> tuple[Path, Path]:
    """A script that records its environment and cwd, leaves a child in its group and a
    daemon in a session of its own, prints a version and exits (or hangs)."""
    out = tmp_path / "seen"
    out.mkdir()
    script = tmp_path / "fake-client"
    script.write_text(
        "#!/bin/sh\n"
        f"env > {out}/env.txt\n"
        f"pwd > {out}/cwd.txt\n"
        f"sleep 300 >/dev/null 2>&1 &\necho $! > {out}/child.pid\n"
        f"setsid sleep 300 >/dev/null 2>&1 &\necho $! > {out}/daemon.pid\n"
        # the daemon's own pid once setsid has exec'd sleep: same pid, new session
        "echo 1.2.3\n" + ("sleep 300\n" if hang else "")
    )
    script.chmod(0o755)
    return script, out


def _pids(out: Path) -> list[int]:
    return [int((out / name).read_text()) for name in ("child.pid", "daemon.pid")]


@pytest.mark.parametrize("module", [claude, codex, gemini, qwen, pi], ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_version_probe_is_sandboxed_and_leaves_nothing(module, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "caller-secret")
    monkeypatch.setenv("NODE_OPTIONS", "--require /caller/hook.js")
    monkeypatch.setenv("HTTPS_PROXY", "http://caller-proxy:3128")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "caller-store"))
    script, out = _fake_client(tmp_path)
    if hasattr(module.client_version, "cache_clear"):
        module.client_version.cache_clear()
    assert "1.2.3" in module.client_version(script)
    env = dict(line.split("=", 1) for line in (out / "env.txt").read_text().splitlines() if "=" in line)
    assert not {"ANTHROPIC_API_KEY", "NODE_OPTIONS", "HTTPS_PROXY", "CLAUDE_CONFIG_DIR"} & set(env), env
    assert env["HOME"] != os.environ.get("HOME") and Path(env["HOME"]).name.startswith("txcodec-version-")
    assert (out / "cwd.txt").read_text().strip() == env["HOME"]
    assert not Path(env["HOME"]).exists()  # the throw-away HOME is gone too
    for pid in _pids(out):
        assert not _alive(pid), f"pid {pid} outlived the --version run"


def test_a_timed_out_client_is_killed_with_everything_it_started(tmp_path):
    script, out = _fake_client(tmp_path, hang=True)
    started = time.monotonic()
    code, stdout, stderr = process.run_client([str(script)], tmp_path, process.client_env(tmp_path), 3, "fake")
    assert code == -9 and "[txcodec: fake timed out]" in stderr and "1.2.3" in stdout
    assert time.monotonic() - started < 60
    for pid in _pids(out):
        assert not _alive(pid), f"pid {pid} outlived the timed-out run"


def test_only_the_scrubbed_environment_reaches_a_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "caller-secret")
    script, out = _fake_client(tmp_path)
    env = process.client_env(tmp_path / "home", {"EXTRA": "1"})
    code, _, _ = process.run_client([str(script)], tmp_path, env, 30)
    seen = dict(line.split("=", 1) for line in (out / "env.txt").read_text().splitlines() if "=" in line)
    assert code == 0
    assert set(seen) - {"PWD", "SHLVL", "_", "OLDPWD"} == {"PATH", "HOME", "LANG", "NO_COLOR", "EXTRA", process.MARKER}
    assert seen["HOME"] == str(tmp_path / "home")


@pytest.mark.real_client
def test_codex_resume_check_leaves_no_process_behind():
    """The Codex CLI starts ``codex app-server`` daemons: after a resume check not one of
    the processes its runs started is alive."""
    if find_client("codex") is None:
        pytest.fail("the codex CLI is not installed: run `npm install --prefix clients`")
    process.recent.clear()
    source = GOLDEN / "codex" / "hand_built" / "written.jsonl"
    report = codex.check_resume(source, timeout=120)
    assert report.exit_code == 0, report.stderr
    assert len(process.recent) >= 2  # the version probe and the resume run
    left = {token: process.marked(token) for token in process.recent}
    assert not any(left.values()), f"processes outlived their run: {left}"


@pytest.mark.real_client
def test_the_codex_picker_leaves_no_process_behind():
    """``codex resume`` (the TUI) is a launcher whose native child and daemons outlived
    a kill of the launcher alone."""
    if find_client("codex") is None:
        pytest.fail("the codex CLI is not installed: run `npm install --prefix clients`")
    process.recent.clear()
    with codex.Sandbox() as box:
        screen = codex.picker_screen(box, timeout=30)
    assert "resume" in screen and process.recent
    left = {token: process.marked(token) for token in process.recent}
    assert not any(left.values()), f"processes outlived the picker: {left}"


def _hiding_client(tmp_path: Path, *, hang: bool = False) -> tuple[Path, Path]:
    """A script whose grandchild hides from the process group and from the marker: it
    calls ``setsid`` and clears its environment (``env -i``), then sleeps; the script waits
    until the grandchild has written its pid, prints a version and exits (or hangs)."""
    pid_file = tmp_path / "hidden.pid"
    script = tmp_path / "hiding-client"
    script.write_text(
        "#!/bin/sh\n"
        f"( setsid env -i /bin/sh -c 'echo $$ > {pid_file}; exec sleep 300' >/dev/null 2>&1 & )\n"
        f"while [ ! -s {pid_file} ]; do sleep 0.05; done\n"
        "echo 1.2.3\n" + ("sleep 300\n" if hang else "")
    )
    script.chmod(0o755)
    return script, pid_file


@pytest.mark.parametrize("hang", [False, True], ids=["exits", "times-out"])
def test_a_descendant_that_calls_setsid_and_clears_its_environment_is_reaped(tmp_path, hang):
    """Issue 33, item 15: neither the group nor the marker finds such a process; the
    subreaper the client runs under adopts it and ends it."""
    script, pid_file = _hiding_client(tmp_path, hang=hang)
    code, stdout, _ = process.run_client([str(script)], tmp_path, process.client_env(tmp_path), 5 if hang else 60)
    assert "1.2.3" in stdout and code == (-9 if hang else 0)
    hidden = int(pid_file.read_text())
    try:
        assert not _alive(hidden), f"pid {hidden} (setsid, empty environment) outlived the run"
    finally:
        if _alive(hidden):
            os.kill(hidden, 9)


def test_the_subreaper_passes_the_exit_status_through(tmp_path):
    code, out, err = process.run_client(
        ["sh", "-c", "echo out; echo err >&2; exit 7"], tmp_path, process.client_env(tmp_path), 30
    )
    assert (code, out, err) == (7, "out\n", "err\n")
    code, _, _ = process.run_client(["sh", "-c", "kill -TERM $$"], tmp_path, process.client_env(tmp_path), 30)
    assert code == -15
    with pytest.raises(FileNotFoundError):
        process.run_client(["no-such-client-here"], tmp_path, process.client_env(tmp_path), 30)
