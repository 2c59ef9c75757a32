"""Run the real ``kimi`` CLI (Kimi CLI) offline against the mock Chat Completions API.

docs/kimi_cli.md#how-the-real-client-is-driven (kimi-cli 1.51.0, in a Python 3.13 virtualenv of its own): a
``~/.kimi/config.toml`` whose provider is ``openai_legacy`` (Chat Completions) at the
loopback mock; ``kimi --print -p PROMPT --output-format stream-json --yolo``, later turns
``-r <id>``. The session of a work folder is ``~/.kimi/sessions/<md5 of cwd>/<id>/
context.jsonl``; the work folder must be listed in ``~/.kimi/kimi.json`` or ``-r <id>``
empties the file and starts a new session with exit 0.

:func:`check_resume` installs a session into a throw-away home the way ``convert
--install`` does (the file plus the ``kimi.json`` entry), runs ``kimi -p continue -r <id>``
from that work folder and reports the history the first model request carried. A request
with nothing but the new prompt counts as not resumed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.ids import check_id
from ..core.zst import read_bytes
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import binary
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .chat_cli import resume_report
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .process import version_of
from .report import ResumeReport

__all__ = ["ClientMissing", "Kimi", "check_resume", "client_version", "kimi_binary"]


def kimi_binary() -> Path:
    return binary("kimi", "kimi-cli")


def client_version(path: Path | None = None) -> str:
    code, out, _ = version_of(path or kimi_binary())
    words = out.strip().split()
    return f"kimi {words[-1] if code == 0 and words else '(unknown version)'}"


def config_toml(url: str) -> str:
    return "\n".join(
        [
            'default_model = "mock"',
            "telemetry = false",
            "[providers.mock]",
            'type = "openai_legacy"',
            f'base_url = "{url}/v1"',
            'api_key = "dummy"',
            "[models.mock]",
            'provider = "mock"',
            f'model = "{MODEL}"',
            "max_context_size = 128000",
            "",
        ]
    )


class Kimi(Sandbox):
    NAME, STORE = "kimi", ".kimi"

    def kimi(
        self, prompt: str, script: list[Reply] | None = None, resume: str | None = None, timeout: float = 180
    ) -> Run:
        argv = [str(kimi_binary()), "--print", "-p", prompt, "--output-format", "stream-json", "--yolo"]
        if resume:
            argv += ["-r", resume]

        def prepare(url: str) -> None:
            self.store.mkdir(parents=True, exist_ok=True)
            (self.store / "config.toml").write_text(config_toml(url))

        env = lambda url: {
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_CACHE_HOME": str(self.root / "cache"),  # noqa: E731
            "XDG_DATA_HOME": str(self.root / "data"),
            "TMPDIR": str(self.root / "tmp"),
        }
        (self.root / "tmp").mkdir(exist_ok=True)
        return self.run(argv, script, env, prepare, timeout)

    def sessions(self) -> list[Path]:
        return sorted((self.store / "sessions").glob("*/*/context.jsonl"))


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 180, *, register: bool = True, **_: Any
) -> ResumeReport:
    """``register=False`` installs the file without its ``kimi.json`` entry: the client then
    empties it and starts over, which must be reported as not resumed (a test proves it)."""
    from ..harnesses.kimi_cli.store import install_files_for

    path = Path(path)
    data = read_bytes(path)
    session_id = check_id(path.parent.name, f"{path}: session id (its folder's name)")  # the -r argument
    exe = kimi_binary()
    with Kimi() as box:
        install_files_for(box.store, str(box.cwd), session_id, {"context.jsonl": data}, register_dir=register)
        run = box.kimi(prompt, resume=session_id, timeout=timeout)
        sent = run.history(prompt)
        return resume_report("kimi_cli", client_version(exe), session_id, run, sent, "kimi")
