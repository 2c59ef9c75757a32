"""Regenerate golden/claude_code/lineage_genuine/ with the real ``claude`` (the pinned
client) against the mock model on 127.0.0.1:

    TXCODEC_CLIENTS=clients python golden/claude_code/make_lineage_genuine.py

It runs, in a throw-away HOME with the project at /tmp/txcodec-lineage/work:

1. ``claude -p first``                                  -> the source session S
2. ``claude -p --resume S second``                      -> appends to S (same file)
3. ``claude -p --resume S --fork-session third``        -> a new session F (copies S)
4. ``claude -p --resume S /clear``                      -> a new session C (the /clear chain)
5. ``claude --resume S``, then ``/branch`` typed in the TUI -> a new session B whose copied
   records carry ``forkedFrom`` (``/branch`` is not available in print mode; the TUI runs
   on a pseudo-terminal, with onboarding and the dummy API key accepted in ~/.claude.json)

and keeps the store under ``lineage_genuine/store/`` and C, the case's main file, at the
top of the folder. Session ids are new on every run.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import termios
import time
from pathlib import Path

from txcodec.clients.anthropic import AnthropicMock
from txcodec.clients.claude import claude_binary, claude_env, munge_cwd, run_claude
from txcodec.clients.mockserver import MockServer

CASE = Path(__file__).resolve().parent / "lineage_genuine"
WORK = Path("/tmp/txcodec-lineage/work")


def main() -> None:
    shutil.rmtree(WORK.parent, ignore_errors=True)
    WORK.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="txcodec-lineage-home-") as tmp:
        home = Path(tmp)
        project = home / ".claude" / "projects" / munge_cwd(str(WORK))
        with MockServer(AnthropicMock([], strict=True)) as server:
            def claude(*args: str) -> set[Path]:
                before = set(project.glob("*.jsonl"))
                run = run_claude(["-p", *args], WORK, home, server, timeout=180)
                if run.exit_code != 0:
                    raise SystemExit(f"claude {' '.join(args)}: exit {run.exit_code}\n{run.stdout}{run.stderr}")
                return set(project.glob("*.jsonl")) - before

            (source,) = claude("first")
            assert not claude("--resume", source.stem, "second"), "a resume appends to its own file"
            (fork,) = claude("--resume", source.stem, "--fork-session", "third")
            (clear,) = claude("--resume", source.stem, "/clear")
            before = set(project.glob("*.jsonl"))
            branch_in_tui(source.stem, home, server)
            (branch,) = set(project.glob("*.jsonl")) - before
        shutil.rmtree(CASE / "store", ignore_errors=True)
        for old in CASE.glob("*.jsonl"):
            old.unlink()
        store = CASE / "store" / project.name
        store.mkdir(parents=True)
        for path in (source, fork, clear, branch):
            shutil.copyfile(path, store / path.name)
        shutil.copyfile(clear, CASE / clear.name)
        (CASE / "ids.txt").write_text(
            f"source {source.stem}\nfork-session {fork.stem}\nclear {clear.stem}\nbranch {branch.stem}\n")
    shutil.rmtree(WORK.parent, ignore_errors=True)


def branch_in_tui(session_id: str, home: Path, server: MockServer) -> None:
    """``claude --resume ID`` on a pseudo-terminal, ``/branch`` typed and entered."""
    config = home / ".claude.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data.update(hasCompletedOnboarding=True, theme="dark", customApiKeyResponses={"approved": ["dummy"], "rejected": []})
    data.setdefault("projects", {})[str(WORK)] = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
    config.write_text(json.dumps(data))
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    proc = subprocess.Popen([str(claude_binary()), "--resume", session_id], cwd=WORK,
                            env={**claude_env(home, server), "TERM": "xterm-256color"},
                            stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    screen = b""

    def pump(seconds: float, until: bytes | None = None) -> None:
        nonlocal screen
        end = time.monotonic() + seconds
        while time.monotonic() < end and proc.poll() is None and not (until and until in screen):
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    return
                if b"\x1b[6n" in chunk:  # the TUI asks where the cursor is
                    os.write(leader, b"\x1b[1;1R")
                screen += chunk

    try:
        pump(30, b"/effort")  # the prompt line is drawn
        os.write(leader, b"/branch")
        pump(2)
        os.write(leader, b"\r")
        pump(30, b"Branched")
        if b"Branched" not in screen:
            raise SystemExit("claude did not branch:\n" + screen[-2000:].decode("utf-8", "replace"))
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)


if __name__ == "__main__":
    main()
