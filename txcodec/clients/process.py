"""Running a real client CLI once, headless."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def run_client(argv: list[str], cwd: Path, env: dict[str, str], timeout: float, name: str = "") -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``argv`` with no stdin (a client must never
    wait on a terminal). A timeout is exit code -9 with ``[txcodec: <name> timed out]``
    after what was written so far; output is decoded as UTF-8, bad bytes replaced.

    The client runs in a session of its own, and a timeout kills that whole process
    group: codex 0.171 starts helper processes that inherit its output pipes, and waiting
    for those pipes to close after killing only the client never returns."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out, err = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a helper in a session of its own keeps a pipe open
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
            process.wait()
            out, err = b"", b""
    note = f"{name} timed out" if name else "timed out"
    return -9, out.decode("utf-8", "replace"), err.decode("utf-8", "replace") + f"\n[txcodec: {note}]"
