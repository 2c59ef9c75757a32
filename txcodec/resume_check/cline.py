"""Run the real ``cline`` CLI offline against the mock Chat Completions API.

docs/cline.md#how-the-real-client-is-driven (3.0.65): ``cline auth -p openai -k KEY -m MODEL -b URL`` writes
``~/.cline/data/settings/providers.json`` naming one ``openai-compatible`` provider; it
runs once per sandbox, and later runs only change the ``baseUrl`` in it to their own mock
port (a file written without ``cline auth`` was ignored: the TUI fell back to its default
``cline`` provider). ``cline --json PROMPT`` runs one prompt headless; a session is resumed only in
the interactive TUI, ``cline --id <id>``, which needs a terminal (``error: interactive
mode requires a TTY``): :meth:`Cline.tui` drives it in a pseudo-terminal (pexpect), types
the prompt once the input box (``Ask anything``) is drawn, and ends it when the model was
asked. Every run leaves a detached ``cline --cline-hub-daemon``; it inherits the run's
marker, so :func:`~.process.reap` ends it by PID with the rest. DNS lookups of
``data.cline.bot`` / ``otel.cline.bot`` happen and do not block; nothing else leaves
127.0.0.1.

:func:`check_resume` installs a session (its folder and its ``sessions.db`` row, as
:func:`txcodec.harnesses.cline.store.install` does), resumes it in the TUI with one prompt
and reports the history the first model request carried. A request that carries nothing
but the new prompt counts as not resumed: that is what cline does, exit status and all,
when the row is missing.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.ids import check_id
from ..core.zst import read_bytes
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import document_session_id
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .mock.openai_chat import MODEL
from .mock.openai_chat import ChatMock
from .mock.openai_chat import Reply
from .mock.openai_chat import chat_requests
from .mock.server import MockServer
from .process import MARKER
from .process import client_env
from .process import reap
from .process import reaped
from .process import recent
from .process import run_client
from .process import stop
from .process import version_of
from .report import ResumeReport
from .report import require_client

__all__ = ["ClientMissing", "Cline", "check_resume", "client_version", "cline_binary"]

READY = "Ask anything"  # the TUI's empty input box
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")


def cline_binary() -> Path:
    return require_client("cline")


def client_version(path: Path | None = None) -> str:
    code, out, err = version_of(path or cline_binary())
    return f"cline {(out.strip().splitlines() or ['(unknown version)'])[-1]}"


def auth_argv(url: str) -> list[str]:
    return [str(cline_binary()), "auth", "-p", "openai", "-k", "dummy", "-m", MODEL, "-b", f"{url}/v1"]


def screen_text(raw: str) -> str:
    """The TUI's output without terminal escapes (for messages and checks)."""
    return _ANSI.sub("", raw)


class Cline(Sandbox):
    NAME, STORE = "cline", ".cline/data"

    def _prepare(self, url: str) -> None:
        """Point cline at this run's mock: ``cline auth`` the first time, later only the
        ``baseUrl`` it wrote changes (each run has a mock port of its own)."""
        providers = self.store / "settings" / "providers.json"
        if not providers.exists():
            code, out, err = run_client(auth_argv(url), self.cwd, client_env(self.home), 120, "cline auth")
            if code != 0 or not providers.exists():
                raise ClientMissing(f"cline auth failed ({code}): {(err or out)[-500:]}")
            return
        value = json.loads(providers.read_bytes())
        value["providers"]["openai-compatible"]["settings"]["baseUrl"] = f"{url}/v1"
        write_atomic(providers, json.dumps(value, indent=2).encode(), overwrite=True)

    def prompt(self, text: str, script: list[Reply] | None = None, timeout: float = 120) -> Run:
        """``cline --json TEXT``: one prompt in a new session."""
        return self.run([str(cline_binary()), "--json", text], script, lambda url: {}, self._prepare, timeout)

    def sessions(self) -> list[Path]:
        from ..harnesses.cline.store import session_files

        return session_files(self.store / "sessions")

    def tui(
        self,
        session_id: str,
        prompt: str,
        script: list[Reply] | None = None,
        timeout: float = 120,
        done: Callable[[int], bool] | None = None,
    ) -> Run:
        """``cline --id SESSION`` in a pseudo-terminal: type ``prompt`` once the input box is
        drawn, wait until ``done(number of model requests)`` (default: one request), then
        end the TUI and its daemon. ``exit_code`` is 0 when ``done`` was reached, -9 when
        the time ran out (the TUI never exits by itself)."""
        try:
            import pexpect
        except ImportError as exc:  # pragma: no cover - the test extra installs it
            raise ClientMissing("driving cline's TUI needs pexpect (pip install pexpect)") from exc
        done = done or (lambda n: n >= 1)
        mock = ChatMock(list(script or []))
        token = uuid.uuid4().hex
        recent.append(token)
        with MockServer(mock) as server:
            self._prepare(server.url)
            env = client_env(self.home, {MARKER: token, "TERM": "xterm-256color"})
            command = reaped([str(cline_binary()), "--id", session_id], env)
            child = pexpect.spawn(
                command[0],
                command[1:],
                cwd=str(self.cwd),
                env=env,
                dimensions=(50, 160),
                encoding="utf-8",
                codec_errors="replace",
            )
            screen: list[str] = []
            deadline = time.monotonic() + timeout

            def pump(seconds: float) -> bool:
                """Read what the TUI draws for ``seconds``; whether it drew anything."""
                end, drew = time.monotonic() + seconds, False
                while (left := end - time.monotonic()) > 0:
                    try:
                        screen.append(child.read_nonblocking(1 << 16, timeout=left))
                        drew = True
                    except pexpect.TIMEOUT:
                        break
                    except pexpect.EOF:
                        time.sleep(max(left, 0))
                        break
                return drew

            def quiet(seconds: float, until: float) -> None:
                """Read until the screen has not changed for ``seconds``."""
                while time.monotonic() < until and pump(seconds):
                    pass

            code = -9
            try:
                while time.monotonic() < deadline and child.isalive() and READY not in screen_text("".join(screen)):
                    pump(0.5)
                if READY in screen_text("".join(screen)):
                    quiet(2.0, deadline)  # the history is drawn after the input box
                    child.send(prompt)
                    quiet(1.0, deadline)
                    child.send("\r")
                    pressed = time.monotonic()
                    while time.monotonic() < deadline and child.isalive() and not done(len(chat_requests(server))):
                        pump(0.5)
                        if not chat_requests(server) and time.monotonic() - pressed > 10:
                            child.send("\r")  # a key pressed while it was still drawing can be lost
                            pressed = time.monotonic()
                    if done(len(chat_requests(server))):
                        pump(1.5)  # the answer is written to the session file
                        code = 0
                if not child.isalive() and code != 0:
                    code = child.exitstatus if child.exitstatus is not None else -9
            finally:
                if child.isalive():
                    stop(child.pid)  # the subreaper ends the TUI, its daemon and what they started
                child.terminate(force=True)
                reap(token, child.pid)
                child.close(force=True)
            output = screen_text("".join(screen))
            if code == -9:
                output += "\n[txcodec: cline TUI timed out]"
            return Run(code, output, "", chat_requests(server), list(mock.rejected), self.home, self.cwd)


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 120, **_: Any
) -> ResumeReport:
    """Install the session (messages file, its record when beside it, and the database
    row) into a throw-away store and resume it in cline's TUI."""
    from ..harnesses.cline import store

    path = Path(path)
    if path.is_dir():
        path = path / f"{path.name}{store.MESSAGES}"
    data = read_bytes(path)
    # it names the session folder installed and is the --id argument
    session_id = check_id(document_session_id(data) or path.name.removesuffix(store.MESSAGES), f"{path}: session id")
    exe = cline_binary()
    with Cline() as box:
        record = store.read_record(path) or {}
        record.update(cwd=str(box.cwd), workspace_root=str(box.cwd))  # it resumes in the check's project folder
        record.pop("messages_path", None)
        store.install(
            {store.session_relpath(session_id): data, store.record_relpath(session_id): json.dumps(record).encode()},
            box.store,
        )
        run = box.tui(session_id, prompt, timeout=timeout)
        sent = run.history(prompt)
        rejected = list(run.rejected)
        if run.requests and not sent:
            rejected.append("cline started a new session: the request holds no history from the file")
        return ResumeReport(
            "cline",
            client_version(exe),
            session_id,
            run.exit_code,
            len(run.requests),
            sent,
            rejected,
            run.stdout[-4000:],
        )
