"""Run one client as a child subreaper, so that nothing it starts outlives it (Linux).

``python -I -S subreaper.py COMMAND [ARG...]`` marks itself a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``: no privileges needed), forks, and runs COMMAND in the
child. Every descendant of COMMAND that loses its parent is re-parented to this process
instead of to init: a daemon that called ``setsid`` and cleared its environment, which
neither the process group nor the ``TXCODEC_RUN`` marker of :mod:`.process` can find,
still descends from here. When COMMAND exits, or this process gets SIGTERM, SIGHUP or
SIGINT, every descendant is killed and waited for; then this process exits as COMMAND
did (its exit code, or the signal that ended it).

Where ``prctl`` is not available (not Linux, no ``/proc``), it runs COMMAND in its own
place (``exec``) and the caller's marker and process group are all there is. Only the
standard library: it runs with ``-I -S``, before and apart from txcodec.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
_CLEANUP_SECONDS = 10.0


def become_subreaper() -> bool:
    """Whether this process is now a child subreaper."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """The live (not zombie) descendants of ``root``, read from ``/proc``."""
    children: dict[int, list[int]] = {}
    live: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] not in (b"Z", b"X"):
            live.add(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in live:
            found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _reap_exited() -> bool:
    """Collect every child that has exited; whether any child is left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def end_all(me: int, seconds: float = _CLEANUP_SECONDS) -> None:
    """Kill every descendant of ``me`` and wait for them, until none is left."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = descendants(me)
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not _reap_exited() and not found:
            return
        time.sleep(0.02)


def main(argv: list[str]) -> None:
    if not argv:
        sys.stderr.write("usage: subreaper.py COMMAND [ARG...]\n")
        os._exit(2)
    if not become_subreaper():
        os.execvp(argv[0], argv)
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            sys.stderr.write(f"txcodec: cannot run {argv[0]}: {exc.strerror}\n")
        os._exit(127)

    running = [True]

    def stop(signum: int, frame: object) -> None:
        if running[0]:  # once COMMAND is collected, its pid may name another process
            os.kill(child, signal.SIGKILL)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, stop)
    status = 0
    while True:  # collect orphans adopted meanwhile, until COMMAND itself exits
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            running[0] = False
            break
    end_all(os.getpid())
    if os.WIFSIGNALED(status):
        how = os.WTERMSIG(status)
        if how not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(how, signal.SIG_DFL)
        os.kill(os.getpid(), how)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
