"""Run the real ``pi`` CLI offline against the mock Chat Completions API.

docs/pi.md#how-the-real-client-is-driven: a throw-away ``HOME`` whose ``~/.pi/agent/models.json`` declares a
provider ``mock`` (``api: "openai-completions"``, the mock's base URL,
``compat.supportsDeveloperRole: false``), then ``PI_OFFLINE=1 pi --provider mock --model
mock-model --mode json -p PROMPT``; later turns ``--session <id or path>``.

:func:`check_resume` copies a session file into the throw-away sessions folder (its
header ``cwd`` pointed at the throw-away project: pi exits 1 when that folder does not
exist), runs ``pi --session <path> -p continue`` and reports the history of the first
model request. pi silently starts over in a file whose first line is not a valid
header, with exit 0: a request holding nothing but the new prompt counts as not resumed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.zst import read_bytes
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import binary
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .chat_cli import resume_report
from .chat_cli import rewrite_cwd
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .process import version_of
from .report import ResumeReport

__all__ = ["ClientMissing", "Pi", "check_resume", "client_version", "pi_binary"]


def pi_binary() -> Path:
    return binary("pi", "@mariozechner/pi-coding-agent")


def client_version(path: Path | None = None) -> str:
    _, out, err = version_of(path or pi_binary(), {"PI_OFFLINE": "1"})
    return f"pi {(out or err).strip() or '(unknown version)'}"


def models_json(url: str) -> dict[str, Any]:
    return {
        "providers": {
            "mock": {
                "baseUrl": f"{url}/v1",
                "api": "openai-completions",
                "apiKey": "dummy",
                "compat": {"supportsDeveloperRole": False},
                "models": [
                    {
                        "id": MODEL,
                        "name": "Mock",
                        "reasoning": False,
                        "input": ["text", "image"],
                        "contextWindow": 128000,
                        "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }


class Pi(Sandbox):
    NAME = "pi"

    @property
    def agent(self) -> Path:
        return self.home / ".pi" / "agent"

    @property
    def store(self) -> Path:
        return self.agent / "sessions"

    def pi(
        self, prompt: str, script: list[Reply] | None = None, session: str | None = None, timeout: float = 90
    ) -> Run:
        argv = [str(pi_binary()), "--provider", "mock", "--model", MODEL, "--mode", "json", "-p", prompt]
        if session:
            argv += ["--session", session]

        def prepare(url: str) -> None:
            self.agent.mkdir(parents=True, exist_ok=True)
            (self.agent / "models.json").write_text(json.dumps(models_json(url)))

        return self.run(argv, script, lambda url: {"PI_OFFLINE": "1"}, prepare, timeout)

    def sessions(self) -> list[Path]:
        return sorted(self.store.glob("*/*.jsonl"))


def check_resume(path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 90, **_: Any) -> ResumeReport:
    from ..harnesses.pi.store import project_folder

    path = Path(path)
    data = read_bytes(path)
    session_id = _session_id(data) or path.stem
    exe = pi_binary()
    with Pi() as box:
        target = (
            box.store / project_folder(str(box.cwd)) / (path.name[:-4] if path.name.endswith(".zst") else path.name)
        )
        first, sep, rest = data.partition(b"\n")
        write_atomic(target, rewrite_cwd(first, str(box.cwd)) + sep + rest)
        run = box.pi(prompt, session=str(target), timeout=timeout)
        sent = run.history(prompt)
        return resume_report("pi", client_version(exe), session_id, run, sent, "pi", output=run.stderr)


def _session_id(data: bytes) -> str | None:
    try:
        header = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return None
    return header.get("id") if isinstance(header, dict) and isinstance(header.get("id"), str) else None
