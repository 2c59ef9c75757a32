"""Running a real client CLI once, headless, sandboxed, and leaving nothing behind.

Every run (the ``--version`` probes included) gets:

- a scrubbed environment (:func:`client_env`): ``PATH``, a throw-away ``HOME``, a locale,
  and what the caller names; nothing else of the caller's (API keys, proxies,
  ``NODE_OPTIONS``, a ``CLAUDE_CONFIG_DIR`` pointing at a real store);
- a session and process group of its own, and a marker in its environment
  (``TXCODEC_RUN=<token>``) that every descendant inherits;
- on Linux, a parent of its own that is a child subreaper (:mod:`.subreaper`): a
  descendant that loses its parent is adopted by it, not by init, so even a daemon that
  called ``setsid`` and cleared its environment is found and killed when the client exits;
- when the client exits or times out, that parent ends every descendant, then the whole
  group is killed, then every process still carrying the marker (a daemon that moved to a
  group of its own, such as ``codex app-server``; where there is no subreaper, the marker
  is all there is), and :func:`run_client` waits until none is left.
"""

from __future__ import annotations

import collections
import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

MARKER = "TXCODEC_RUN"
_REAP_SECONDS = 10.0
SUBREAPER = Path(__file__).with_name("subreaper.py")
# the tokens of the latest runs, newest last: a test checks that none is still marked
recent: collections.deque[str] = collections.deque(maxlen=256)


def client_env(home: str | os.PathLike[str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a client runs with: nothing is inherited but ``PATH``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        **(extra or {}),
    }


def marked(token: str) -> list[int]:
    """The live processes whose environment carries ``TXCODEC_RUN=token`` (zombies,
    already dead and waiting to be reaped, are left out)."""
    needle = f"{MARKER}={token}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if state not in (b"Z", b"X") and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def reaped(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """``argv`` run under :mod:`.subreaper` (on Linux; elsewhere ``argv`` itself). A
    command not found on ``env``'s ``PATH`` raises FileNotFoundError here, as Popen would."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    return [sys.executable, "-I", "-S", str(SUBREAPER), *argv]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def stop(pid: int, seconds: float = 5.0) -> None:
    """Ask the subreaper ``pid`` (still running: the caller checks) to end its client and
    every descendant, and wait until it has exited (a zombie until its parent collects it)."""
    _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def _kill(pid: int, how: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, how)
    except (ProcessLookupError, PermissionError):
        pass


def reap(token: str, group: int | None = None, seconds: float = _REAP_SECONDS) -> list[int]:
    """Kill the process group ``group`` and every process marked with ``token``, and wait
    until they are gone; returns the ones still alive after ``seconds`` (none, normally)."""
    if group is not None:
        _kill(group, signal.SIGKILL, group=True)
    deadline = time.monotonic() + seconds
    # One scan can miss a process that is in the middle of an exec (a daemon on its way
    # through ``setsid``): its environment reads empty for that moment. So the run is over
    # only when two scans a pause apart both find none.
    left, clear = marked(token), 0
    while clear < 2 and time.monotonic() < deadline:
        for pid in left:
            _kill(pid, signal.SIGKILL)
        time.sleep(0.05)
        left = marked(token)
        clear = clear + 1 if not left else 0
    return left


def run_client(
    argv: list[str],
    cwd: str | os.PathLike[str],
    env: dict[str, str],
    timeout: float,
    name: str = "",
    input: bytes | None = None,
) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``argv`` in ``env`` (used as it is: build it with
    :func:`client_env`), with no stdin unless ``input`` is given (a client must never wait
    on a terminal). A timeout is exit code -9 with ``[txcodec: <name> timed out]`` after
    what was written so far; output is decoded as UTF-8, bad bytes replaced. When this
    returns, no process the client started is left running."""
    code, out, err = run_bytes(argv, cwd, env, timeout, name, input)
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run_bytes(
    argv: list[str],
    cwd: str | os.PathLike[str],
    env: dict[str, str],
    timeout: float,
    name: str = "",
    input: bytes | None = None,
) -> tuple[int, bytes, bytes]:
    """:func:`run_client`, its output as bytes."""
    token = uuid.uuid4().hex
    recent.append(token)
    proc = subprocess.Popen(
        reaped(argv, env),
        cwd=cwd,
        env={**env, MARKER: token},
        start_new_session=True,
        stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        try:
            out, err = proc.communicate(input, timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            stop(proc.pid)
            reap(token, proc.pid)
            out, err = proc.communicate()
            note = f"{name} timed out" if name else "timed out"
            code, err = -9, (err or b"") + f"\n[txcodec: {note}]".encode()
    finally:
        if proc.poll() is None:  # interrupted
            stop(proc.pid)
        reap(token, proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, out or b"", err or b""


def version_of(
    binary: str | os.PathLike[str],
    extra: Mapping[str, str] | None = None,
    timeout: float = 60,
    home_vars: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    """``binary --version``, sandboxed like any run: a throw-away HOME (even ``--version``
    may write there: Gemini CLI registers a project) as home and cwd, a scrubbed
    environment; ``home_vars`` name variables that point at that HOME too."""
    with tempfile.TemporaryDirectory(prefix="txcodec-version-") as home:
        env = client_env(home, {**(extra or {}), **{name: home for name in home_vars}})
        return run_client([str(binary), "--version"], Path(home), env, timeout, Path(binary).name)
