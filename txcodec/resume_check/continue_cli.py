"""Run the real ``cn`` CLI (Continue) offline against the mock Chat Completions API.

docs/continue_cli.md#how-the-real-client-is-driven (1.5.47): a ``config.yaml`` naming one ``openai`` model
whose ``apiBase`` is
the loopback mock, passed with ``--config``; ``cn --config FILE -p PROMPT --auto``; later
turns ``--resume`` (the newest session file by mtime) or ``--fork <sessionId>`` (a copy
under a new id). Its sessions folder is ``$CONTINUE_GLOBAL_DIR/sessions``, else
``~/.continue/sessions`` (``dist/index.js``). It looks up ``api.continue.dev`` once at
start (a version check that does not block); nothing else leaves 127.0.0.1.

:func:`check_resume` installs a session as ``<sessions>/<id>.json`` (the only file there,
so it is the newest), runs ``cn -p continue --auto --resume`` and reports the history the
first model request carried. A request that carries nothing but the new prompt counts as
not resumed.
"""

from __future__ import annotations

import os
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
from .chat_cli import document_session_id
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .chat_cli import resume_report
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .report import ResumeReport

__all__ = ["ClientMissing", "Continue", "check_resume", "client_version", "cn_binary"]


def cn_binary() -> Path:
    return binary("cn", "@continuedev/cli")


def client_version(path: Path | None = None) -> str:
    with tempfile.TemporaryDirectory(prefix="txcodec-cn-v-") as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
        out = subprocess.run(
            [str(path or cn_binary()), "--version"], capture_output=True, text=True, timeout=60, env=env
        )
    return f"cn {(out.stdout.strip().splitlines() or ['(unknown version)'])[-1]}"


def config_yaml(url: str) -> str:
    return "\n".join(
        [
            "name: mock",
            "version: 1.0.0",
            "schema: v1",
            "models:",
            f"  - name: {MODEL}",
            "    provider: openai",
            f"    model: {MODEL}",
            f"    apiBase: {url}/v1",
            "    apiKey: dummy",
            "    roles: [chat, edit, apply]",
            "    capabilities: [tool_use]",
            "",
        ]
    )


class Continue(Sandbox):
    NAME, STORE = "cn", ".continue"

    def cn(
        self,
        prompt: str,
        script: list[Reply] | None = None,
        *,
        resume: bool = False,
        fork: str | None = None,
        timeout: float = 120,
    ) -> Run:
        config = self.root / "config.yaml"
        argv = [str(cn_binary()), "--config", str(config), "-p", prompt, "--auto"]
        if resume:
            argv.append("--resume")
        if fork:
            argv += ["--fork", fork]

        def prepare(url: str) -> None:
            config.write_text(config_yaml(url))

        env = lambda url: {"XDG_CONFIG_HOME": str(self.root / "config"), "XDG_CACHE_HOME": str(self.root / "cache")}  # noqa: E731
        return self.run(argv, script, env, prepare, timeout)

    def sessions(self) -> list[Path]:
        return sorted(p for p in (self.store / "sessions").glob("*.json") if p.name != "sessions.json")


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 120, **_: Any
) -> ResumeReport:
    from ..harnesses.continue_cli.store import session_relpath

    path = Path(path)
    data = read_bytes(path)
    session_id = check_id(document_session_id(data) or path.stem, f"{path}: session id")  # it names the file installed
    exe = cn_binary()
    with Continue() as box:
        write_atomic(box.store / "sessions" / session_relpath(session_id), data)
        run = box.cn(prompt, resume=True, timeout=timeout)
        sent = run.history(prompt)
        return resume_report("continue_cli", client_version(exe), session_id, run, sent, "cn")
