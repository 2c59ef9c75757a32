"""Run the real ``copilot`` CLI (GitHub Copilot CLI) offline against the mock Chat Completions API.

docs/copilot_cli.md#how-the-real-client-is-driven and ``copilot help environment`` (1.0.102):
``COPILOT_OFFLINE=true`` skips
GitHub authentication, telemetry and auto-update and needs a BYOK provider;
``COPILOT_PROVIDER_BASE_URL`` / ``COPILOT_PROVIDER_API_KEY`` / ``COPILOT_MODEL`` point it at
the loopback mock (provider type ``openai``, wire API ``completions``: the defaults);
``COPILOT_HOME`` replaces ``~/.copilot``. Then ``copilot -p PROMPT --allow-all
--output-format json``, later turns ``--resume <sessionId>``.

The first run of a fresh HOME unpacks the CLI's JavaScript into the cache folder
(``$COPILOT_CACHE_HOME``, else ``$XDG_CACHE_HOME/copilot``); the sandbox keeps that
cache inside its own folder, so nothing is left outside it.

:func:`check_resume` installs a session as ``$COPILOT_HOME/session-state/<id>/events.jsonl``,
runs ``copilot -p continue --resume <id>`` and reports the history the first model request
carried. A request that carries nothing but the new prompt counts as not resumed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.ids import check_id
from ..core.zst import read_bytes
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import binary
from .chat_cli import history_sent
from .chat_cli import resume_report
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .report import ResumeReport

__all__ = ["ClientMissing", "Copilot", "check_resume", "client_version", "copilot_binary"]


def copilot_binary() -> Path:
    return binary("copilot", "@github/copilot")


def client_version(path: Path | None = None) -> str:
    # in a throw-away home: even --version unpacks the CLI into the cache folder
    with tempfile.TemporaryDirectory(prefix="txcodec-copilot-v-") as home:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_HOME": f"{home}/.copilot",
            "COPILOT_CACHE_HOME": f"{home}/cache",
            "XDG_CACHE_HOME": f"{home}/cache",
            "TMPDIR": home,
        }
        out = subprocess.run(
            [str(path or copilot_binary()), "--version"], capture_output=True, text=True, timeout=120, env=env
        )
    first = (out.stdout or "").strip().splitlines()[:1]
    words = first[0].rstrip(".").split() if first else []
    return f"copilot {words[-1] if words else '(unknown version)'}"


# Copilot sends each user turn as its ``transformedContent``: the prompt after a
# ``<current_datetime>`` block it adds (the event keeps both)
_DATETIME = re.compile(r"\A<current_datetime>[^<]*</current_datetime>\n\n")


def without_datetime(text: str) -> str:
    return _DATETIME.sub("", text, count=1)


class Copilot(Sandbox):
    NAME, STORE = "copilot", ".copilot"

    def copilot(
        self, prompt: str, script: list[Reply] | None = None, resume: str | None = None, timeout: float = 180
    ) -> Run:
        argv = [str(copilot_binary()), "-p", prompt, "--allow-all", "--output-format", "json"]
        if resume:
            argv += ["--resume", resume]
        env = lambda url: {  # noqa: E731
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
            "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": MODEL,
            "COPILOT_HOME": str(self.store),
            "COPILOT_CACHE_HOME": str(self.root / "cache"),
            "XDG_CACHE_HOME": str(self.root / "cache"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "TMPDIR": str(self.root / "tmp"),
        }
        (self.root / "tmp").mkdir(exist_ok=True)
        return self.run(argv, script, env, timeout=timeout)

    def sessions(self) -> list[Path]:
        return sorted((self.store / "session-state").glob("*/events.jsonl"))


def sent_history(run: Run, prompt: str) -> list:
    """The history the first request carried, in Common, without the prompt's own turn
    and without the ``<current_datetime>`` block before each user turn."""
    if not run.bodies:
        return []
    body = copy.deepcopy(run.bodies[0])
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] = without_datetime(message["content"])
    return history_sent(body, prompt)


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 180, **_: Any
) -> ResumeReport:
    from ..harnesses.copilot_cli.store import session_relpath

    path = Path(path)
    data = read_bytes(path)
    # it names the folder installed and is the --resume argument
    session_id = check_id(_session_id(data) or path.parent.name, f"{path}: session id")
    exe = copilot_binary()
    with Copilot() as box:
        write_atomic(box.store / session_relpath(session_id), data)
        run = box.copilot(prompt, resume=session_id, timeout=timeout)
        sent = sent_history(run, prompt)
        return resume_report("copilot_cli", client_version(exe), session_id, run, sent, "copilot")


def _session_id(data: bytes) -> str | None:
    for line in data.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") == "session.start" and isinstance(value.get("data"), dict):
            sid = value["data"].get("sessionId")
            return sid if isinstance(sid, str) else None
    return None
