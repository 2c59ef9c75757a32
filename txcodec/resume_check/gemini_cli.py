"""The real ``gemini`` CLI run offline against the mock Gemini API
(:mod:`txcodec.resume_check.mock.gemini`).

:func:`check_resume` installs a session file into a throw-away ``HOME`` (the store is
``$HOME/.gemini``; ``GEMINI_CLI_HOME`` is set to the same folder, so the caller's setting
can never send the run to their real store), runs ``gemini -p continue --resume <sid>`` and
reports the history of the first chat request. The CLI exits 0 and starts a *new* session
when it does not find the file only in some paths (it mostly exits 1 with "Invalid
session identifier"), so "resumed" also requires that the request carried history.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ..core.ids import check_id
from ..model.common import Message
from ..model.common import Text

# the mock's public names, as the module they came from (txcodec.clients.gemini) offered them
from .mock.gemini import COMPRESSION_MARKER as COMPRESSION_MARKER
from .mock.gemini import Reply as Reply
from .mock.gemini import call as call
from .mock.gemini import chat_requests as chat_requests
from .mock.gemini import contents_to_messages as contents_to_messages
from .mock.gemini import handler as handler
from .mock.gemini import is_compression as is_compression
from .mock.gemini import part_to_block as part_to_block
from .mock.gemini import response_text as response_text
from .mock.gemini import stream_events as stream_events
from .mock.gemini import text as text
from .mock.server import MockServer
from .mock.server import Request
from .process import run_client
from .process import version_of
from .report import ClientMissing as ClientMissing
from .report import ResumeReport
from .report import require_client
from .sandbox import TempFolders
from .sandbox import temp_root

MODEL = "gemini-2.5-pro"
RESUME_PROMPT = "continue"


# --- running the CLI -------------------------------------------------------------------


def gemini_binary() -> Path:
    return require_client("gemini")


@functools.lru_cache(maxsize=4)
def client_version(binary: Path | None = None) -> str:
    # sandboxed like every run: even --version registers a project under ~/.gemini
    code, out, _ = version_of(binary or gemini_binary(), timeout=60, home_vars=("GEMINI_CLI_HOME",))
    version = out.strip().splitlines()[-1] if out.strip() else ""
    return f"gemini {version}" if code == 0 and version else "gemini (unknown version)"


SETTINGS: dict[str, Any] = {
    # without it the CLI picks a "gateway" auth and -p exits 41 (docs/gemini_cli.md#how-the-real-client-is-driven)
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        # the default deletes sessions older than 30 days: a converted old session would vanish
        "sessionRetention": {"enabled": False},
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    requests: list[Request]
    gemini_home: Path  # the ~/.gemini folder of the run
    cwd: Path

    @property
    def events(self) -> list[dict[str, Any]]:
        """The ``--output-format stream-json`` events."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    @property
    def session_id(self) -> str | None:
        for event in self.events:
            if event.get("type") == "init":
                return event.get("session_id")
        return None

    def sessions(self) -> list[Path]:
        """Main session files (``tmp/<slug>/chats/session-*.jsonl``), oldest name first."""
        return sorted((self.gemini_home / "tmp").glob("*/chats/session-*.json*"))

    @property
    def contents(self) -> list[list[Any]]:
        return [(r.json() or {}).get("contents", []) for r in chat_requests_of(self.requests)]


def chat_requests_of(requests: list[Request]) -> list[Request]:
    return [r for r in requests if ":streamGenerateContent" in r.path]


@dataclass
class Sandbox(TempFolders):
    """A throw-away HOME (its ``.gemini`` is the store) and project folder."""

    root: Path = field(default_factory=lambda: temp_root("gemini"))
    model: str = MODEL

    @property
    def gemini_home(self) -> Path:
        return self.home / ".gemini"

    def folders(self) -> list[Path]:
        return [self.gemini_home, self.cwd]

    def __enter__(self) -> Sandbox:
        super().__enter__()
        settings = self.gemini_home / "settings.json"
        if not settings.exists():
            settings.write_text(json.dumps(SETTINGS, indent=2))
        return self

    def env(self, url: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GEMINI_CLI_HOME": str(self.home),
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": "dummy",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "CI": "1",
        }

    def run(
        self,
        prompt: str,
        *args: str,
        script: list[Reply] | None = None,
        timeout: float = 90,
        summary: Reply | None = None,
    ) -> Run:
        binary = gemini_binary()
        with MockServer(handler(script or [], summary)) as server:
            command = [
                str(binary),
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--yolo",
                "--model",
                self.model,
                *args,
            ]
            code, out, err = run_client(command, self.cwd, self.env(server.url), timeout, "gemini")
            requests = list(server.requests)
        return Run(code, out, err, requests, self.gemini_home, self.cwd)


def check_resume(
    path: str | os.PathLike[str], prompt: str = RESUME_PROMPT, timeout: float = 90, **_: Any
) -> ResumeReport:
    """Install the Gemini session at ``path`` for a throw-away project, run
    ``gemini -p <prompt> --resume <sid>`` and report the history the CLI sent."""
    from ..core.zst import read_bytes
    from ..harnesses.gemini_cli.store import install_session
    from ..harnesses.gemini_cli.store import session_id_of

    path = Path(path)
    data = read_bytes(path)
    session_id = session_id_of(data) or ""
    if session_id:
        check_id(session_id, f"{path}: session id")  # the --resume argument
    binary = gemini_binary()
    with Sandbox() as box:
        name = path.name[: -len(".zst")] if path.name.endswith(".zst") else path.name
        install_session(box.gemini_home, str(box.cwd), name, data)
        run = box.run(prompt, "--resume", session_id, timeout=timeout)
        first = run.contents[0] if run.contents else []
        sent = contents_to_messages(first)
        if sent and sent[-1].role == "user" and _is_prompt(sent[-1], prompt):
            sent = sent[:-1]  # the new turn, not history
        rejected = []
        if run.exit_code == 0 and run.requests and not sent:
            rejected.append("gemini started a new session: the request carried no history from the file")
        if run.session_id and session_id and run.session_id != session_id:
            rejected.append(f"gemini ran session {run.session_id}, not {session_id}")
        return ResumeReport(
            harness="gemini_cli",
            client=client_version(binary),
            session_id=session_id,
            exit_code=run.exit_code,
            requests=len(chat_requests_of(run.requests)),
            sent=sent,
            rejected=rejected,
            stderr=run.stderr[-4000:],
        )


def _is_prompt(message: Message, prompt: str) -> bool:
    texts = [b.text for b in message.content if isinstance(b, Text)]
    return bool(texts) and texts[-1].strip() == prompt
