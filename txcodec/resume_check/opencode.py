"""Run the real ``opencode`` CLI (and its fork ``kilo``) offline against the mock Chat
Completions API.

docs/opencode.md#how-the-real-client-is-driven (opencode 1.18.33, Kilo 7.7.7): the provider comes from
``OPENCODE_CONFIG_CONTENT`` (``KILO_CONFIG_CONTENT``): ``@ai-sdk/openai-compatible`` at the
mock's ``/v1``, every permission allowed, only that provider enabled; the ``*_DISABLE_*``
switches turn off model fetch, auto-update, LSP download, share and default plugins (and
Kilo's telemetry, Claude Code import and session ingest). ``HOME`` and every XDG home are
throw-away; ``PWD`` is the project (the CLI reads ``$PWD``, not its process cwd); the
prompt goes on **stdin**: ``opencode run --format json [--session <id>]``. The CLI runs an
npm install of its plugin at start unless ``$XDG_CONFIG_HOME/opencode/node_modules`` and a
lock file exist, so the sandbox makes both.

:func:`check_resume` imports an export file with the client's own ``opencode import FILE``
(as :meth:`~txcodec.harnesses.opencode.store.Store.install` does, from the project folder),
runs ``opencode run --session <id> --model mock/mock-model`` (the
sandbox's only provider: a converted session names another) with ``continue`` on
stdin and reports the history of the first model request. A request that carries
nothing but the new prompt counts as not resumed.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ..core.ids import check_id
from ..core.zst import read_bytes
from ..harnesses.opencode.dialect import KILO
from ..harnesses.opencode.dialect import OPENCODE
from ..harnesses.opencode.dialect import Dialect
from ..model.common import Text
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import binary
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .chat_cli import resume_report
from .mock.openai_chat import MODEL
from .mock.openai_chat import ChatMock
from .mock.openai_chat import Reply
from .mock.openai_chat import chat_requests
from .mock.server import MockServer
from .report import ResumeReport
from .sandbox import TempFolders
from .sandbox import temp_root

__all__ = ["ClientMissing", "Opencode", "check_resume", "check_resume_kilo", "client_version"]


def client_binary(dialect: Dialect = OPENCODE) -> Path:
    return binary(dialect.binary, dialect.package)


def client_version(dialect: Dialect = OPENCODE, path: Path | None = None) -> str:
    with tempfile.TemporaryDirectory(prefix=f"txcodec-{dialect.app}-v-") as home:
        out = subprocess.run(
            [str(path or client_binary(dialect)), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            env=_base_env(dialect, Path(home)),
            cwd=home,
        )
    return f"{dialect.binary} {(out.stdout.strip().splitlines() or ['(unknown version)'])[-1]}"


def config(dialect: Dialect, url: str) -> dict[str, Any]:
    return {
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": f"{url}/v1", "apiKey": "dummy"},
                "models": {MODEL: {"tool_call": True, "reasoning": True}},
            }
        },
        "model": f"mock/{MODEL}",
        "small_model": f"mock/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"*": "allow"},
        "enabled_providers": ["mock"],
    }


def _base_env(dialect: Dialect, root: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "NO_COLOR": "1",
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "XDG_STATE_HOME": str(root / "state"),
        "TMPDIR": str(root / "tmp"),
    }
    for switch in (
        "DISABLE_MODELS_FETCH",
        "DISABLE_AUTOUPDATE",
        "DISABLE_LSP_DOWNLOAD",
        "DISABLE_SHARE",
        "DISABLE_DEFAULT_PLUGINS",
        "DISABLE_CLAUDE_CODE",
        "DISABLE_SESSION_INGEST",
    ):
        env[dialect.env(switch)] = "1"
    env[dialect.env("TELEMETRY_LEVEL")] = "off"
    for name in ("home", "data", "config", "cache", "state", "tmp"):
        (root / name).mkdir(parents=True, exist_ok=True)
    plugin = root / "config" / dialect.app
    (plugin / "node_modules").mkdir(parents=True, exist_ok=True)
    for lock in ("package-lock.json", "bun.lock"):
        (plugin / lock).touch()
    return env


@dataclass
class _AgentMock(ChatMock):
    """The client asks its small model for a session title, concurrently with the first
    turn: a request without ``tools`` is that one. It gets a title of its own and does not
    take a reply off the script (or count as a turn of the conversation)."""

    def __call__(self, request: Any, server: MockServer) -> Any:
        try:
            body = request.json()
        except ValueError:
            body = None
        if request.method == "POST" and isinstance(body, dict) and not body.get("tools"):
            saved, self.script = self.script, []
            try:
                return super().__call__(request, server)
            finally:
                self.script = saved
        return super().__call__(request, server)


def agent_requests(server: MockServer) -> list[Any]:
    """The conversation's model requests: those that offer tools (not title requests)."""
    return [r for r in chat_requests(server) if isinstance(r.json(), dict) and r.json().get("tools")]


@dataclass
class Opencode(TempFolders):
    """``with Opencode() as box: box.run(...)``: HOME, XDG homes and project under one temp dir."""

    dialect: Dialect = OPENCODE
    root: Path = field(init=False)

    def __post_init__(self) -> None:
        self.root = temp_root(self.dialect.app)

    @property
    def data(self) -> Path:
        """The client's data folder (``$XDG_DATA_HOME/<app>``), where the database lives."""
        return self.root / "data" / self.dialect.app

    @property
    def database(self) -> Path:
        return self.data / self.dialect.database

    def folders(self) -> list[Path]:
        return [self.cwd]  # the HOME and XDG folders are the client's to make

    def env(self, url: str | None = None) -> dict[str, str]:
        env = _base_env(self.dialect, self.root)
        env["PWD"] = str(self.cwd)
        if url is not None:
            env[self.dialect.env("CONFIG_CONTENT")] = json.dumps(config(self.dialect, url))
        return env

    def command(self, *args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
        """One CLI command that needs no model (``export``, ``import``, ``session list``)."""
        argv = [str(client_binary(self.dialect)), *args]
        try:
            return subprocess.run(
                argv, cwd=self.cwd, env=self.env(), input=stdin.encode(), capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            return subprocess.CompletedProcess(
                argv, -9, exc.stdout or b"", (exc.stderr or b"") + b"\n[txcodec: timed out]"
            )

    def run(
        self,
        prompt: str,
        script: list[Reply] | None = None,
        session: str | None = None,
        timeout: float = 180,
        model: str | None = None,
    ) -> Run:
        argv = [str(client_binary(self.dialect)), "run", "--format", "json"]
        if model:
            argv += ["--model", model]
        if session:
            argv += ["--session", session]
        mock = _AgentMock(list(script or []), default=Reply(text="Mock title"))
        with MockServer(mock) as server:
            try:
                done = subprocess.run(
                    argv,
                    cwd=self.cwd,
                    env=self.env(server.url),
                    input=prompt.encode(),
                    capture_output=True,
                    timeout=timeout,
                )
                code, out, err = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as exc:
                code, out, err = -9, exc.stdout or b"", (exc.stderr or b"") + b"\n[txcodec: timed out]"
            return Run(
                code,
                out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"),
                agent_requests(server),
                list(mock.rejected),
                self.root / "home",
                self.cwd,
            )

    def sessions(self) -> list[str]:
        """The session ids in the database (read-only)."""
        from ..harnesses.opencode.store import session_ids

        return session_ids(self.database) if self.database.exists() else []

    def export(self, session: str) -> bytes:
        done = self.command("export", session)
        if done.returncode != 0:
            raise RuntimeError(f"{self.dialect.binary} export failed: {done.stderr.decode(errors='replace')[-2000:]}")
        return done.stdout

    def import_file(self, path: Path) -> subprocess.CompletedProcess:
        return self.command("import", str(path))


def injected(dialect: Dialect):
    def strip(text: Text) -> bool:
        # Kilo adds an <environment_details> text part to each user message, and a
        # <system-reminder> when the session's agent is not its own (an opencode "build")
        head = text.text.lstrip()
        return dialect is KILO and (head.startswith("<environment_details>") or head.startswith("<system-reminder>"))

    return strip


def check_resume(
    path: str | os.PathLike[str],
    prompt: str = "continue",
    timeout: float = 180,
    *,
    dialect: Dialect = OPENCODE,
    **_: Any,
) -> ResumeReport:
    path = Path(path)
    data = read_bytes(path)
    session_id = check_id(_session_id(data) or path.stem, f"{path}: session id")  # the --session argument
    exe = client_binary(dialect)
    with Opencode(dialect) as box:
        target = box.root / "import.json"
        target.write_bytes(data)
        imported = box.import_file(target)
        if imported.returncode != 0:
            return ResumeReport(
                dialect.harness,
                client_version(dialect, exe),
                session_id,
                imported.returncode,
                0,
                [],
                [f"{dialect.binary} import failed"],
                imported.stderr.decode(errors="replace")[-4000:],
            )
        # the sandbox has one provider: a session recorded with another one runs on it
        run = box.run(prompt, session=session_id, timeout=timeout, model=f"mock/{MODEL}")
        sent = run.history(prompt, injected(dialect))
        return resume_report(dialect.harness, client_version(dialect, exe), session_id, run, sent, dialect.binary)


def check_resume_kilo(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 180, **options: Any
) -> ResumeReport:
    return check_resume(path, prompt, timeout, dialect=KILO, **options)


def _session_id(data: bytes) -> str | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    info = value.get("info") if isinstance(value, dict) else None
    return info.get("id") if isinstance(info, dict) and isinstance(info.get("id"), str) else None
