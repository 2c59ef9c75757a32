"""Running a real client CLI once, headless."""

from __future__ import annotations

import subprocess
from pathlib import Path


def run_client(argv: list[str], cwd: Path, env: dict[str, str], timeout: float, name: str = "") -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``argv`` with no stdin (a client must never
    wait on a terminal). A timeout is exit code -9 with ``[txcodec: <name> timed out]``
    after what was written so far; output is decoded as UTF-8, bad bytes replaced."""
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        note = f"{name} timed out" if name else "timed out"
        code, out, err = -9, exc.stdout or b"", (exc.stderr or b"") + f"\n[txcodec: {note}]".encode()
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
