"""Run the real ``qwen`` CLI (Qwen Code) offline against the mock Chat Completions API.

docs/qwen_code.md#how-the-real-client-is-driven: a throw-away ``HOME`` whose ``~/.qwen/settings.json`` selects the
``openai`` auth type, then ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL``
point it at the loopback mock; ``qwen -p PROMPT --yolo --output-format stream-json``,
later turns ``--resume <sid>``.

:func:`check_resume` installs a session file as ``~/.qwen/projects/<munged cwd>/chats/
<sid>.jsonl`` (its records' ``cwd`` pointed at the throw-away project, since Qwen Code
only resumes a session from its own project folder), runs ``qwen --resume <sid> -p
continue`` and reports the history the first model request carried. A request that
carries nothing but the new prompt counts as not resumed, even with exit 0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.ids import check_id
from ..core.zst import read_bytes
from ..model.common import Text
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

__all__ = ["ClientMissing", "Qwen", "check_resume", "client_version", "qwen_binary"]

SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def qwen_binary() -> Path:
    return binary("qwen", "@qwen-code/qwen-code")


def client_version(path: Path | None = None) -> str:
    _, out, _ = version_of(path or qwen_binary())
    return f"qwen {out.strip() or '(unknown version)'}"


def injected(text: Text) -> bool:
    """Qwen Code adds ``<system-reminder>`` parts (skills, tools, date) to user turns."""
    return text.text.lstrip().startswith("<system-reminder>")


class Qwen(Sandbox):
    NAME, STORE = "qwen", ".qwen"

    def __enter__(self) -> Qwen:
        super().__enter__()
        self.store.mkdir(exist_ok=True)
        (self.store / "settings.json").write_text(json.dumps(SETTINGS))
        return self

    def qwen(
        self, prompt: str, script: list[Reply] | None = None, resume: str | None = None, timeout: float = 90
    ) -> Run:
        argv = [str(qwen_binary()), "-p", prompt, "--yolo", "--output-format", "stream-json"]
        if resume:
            argv += ["--resume", resume]
        env = lambda url: {  # noqa: E731
            "OPENAI_BASE_URL": f"{url}/v1",
            "OPENAI_API_KEY": "dummy",
            "OPENAI_MODEL": MODEL,
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        }
        return self.run(argv, script, env, timeout=timeout)

    def sessions(self) -> list[Path]:
        return sorted((self.store / "projects").glob("*/chats/*.jsonl"))


def check_resume(path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 90, **_: Any) -> ResumeReport:
    from ..harnesses.qwen_code.store import session_relpath

    path = Path(path)
    data = read_bytes(path)
    session_id = check_id(_session_id(data) or path.stem, f"{path}: session id")  # it names the file installed
    exe = qwen_binary()
    with Qwen() as box:
        write_atomic(box.store / session_relpath(str(box.cwd), session_id), rewrite_cwd(data, str(box.cwd)))
        run = box.qwen(prompt, resume=session_id, timeout=timeout)
        sent = run.history(prompt, injected)
        return resume_report("qwen_code", client_version(exe), session_id, run, sent, "qwen", output=run.stderr)


def _session_id(data: bytes) -> str | None:
    for line in data.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
            return value["sessionId"]
    return None
