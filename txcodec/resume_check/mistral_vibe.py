"""Run the real ``vibe`` CLI (Mistral Vibe) offline against the mock Chat Completions API.

docs/mistral_vibe.md#how-the-real-client-is-driven (mistral-vibe 3.0.2, in a virtualenv of its own):
a ``$VIBE_HOME/config.toml``
(``VIBE_HOME``, else ``~/.vibe``: ``vibe/utils/vibe_home.py``) naming one ``openai``-style
provider whose ``api_base`` is the loopback mock; ``vibe -p PROMPT --output json
--auto-approve --trust``, later turns ``--resume <sessionId>``.

:func:`check_resume` installs a legacy session folder (``meta.json`` + ``messages.jsonl``,
the form the client imports; :func:`legacy_files`) under ``$VIBE_HOME/logs/session/``, runs
``vibe -p continue --resume <id>`` and reports the history the first model request
carried. A request with nothing but the new prompt counts as not resumed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import api
from ..core.atomic import install_files
from ..core.ids import is_uuid
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

__all__ = ["ClientMissing", "Vibe", "check_resume", "client_version", "vibe_binary"]


def vibe_binary() -> Path:
    return binary("vibe", "mistral-vibe")


def client_version(path: Path | None = None) -> str:
    code, out, _ = version_of(path or vibe_binary())
    words = out.strip().split()
    return f"vibe {words[-1] if code == 0 and words else '(unknown version)'}"


def config_toml(url: str) -> str:
    return "\n".join(
        [
            'active_model = "mock"',
            "enable_telemetry = false",
            "enable_update_checks = false",
            "enable_auto_update = false",
            "[[providers]]",
            'name = "mock"',
            f'api_base = "{url}/v1"',
            'api_key_env_var = "MOCK_API_KEY"',
            'api_style = "openai"',
            'backend = "generic"',
            "[[models]]",
            f'name = "{MODEL}"',
            'provider = "mock"',
            'alias = "mock"',
            "",
        ]
    )


class Vibe(Sandbox):
    NAME, STORE = "vibe", ".vibe"

    def vibe(
        self, prompt: str, script: list[Reply] | None = None, resume: str | None = None, timeout: float = 240
    ) -> Run:
        argv = [str(vibe_binary()), "-p", prompt, "--output", "json", "--auto-approve", "--trust"]
        if resume:
            argv += ["--resume", resume]

        def prepare(url: str) -> None:
            self.store.mkdir(parents=True, exist_ok=True)
            (self.store / "config.toml").write_text(config_toml(url))

        env = lambda url: {
            "MOCK_API_KEY": "dummy",
            "VIBE_HOME": str(self.store),  # noqa: E731
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_CACHE_HOME": str(self.root / "cache"),
            "XDG_DATA_HOME": str(self.root / "data"),
            "TMPDIR": str(self.root / "tmp"),
        }
        (self.root / "tmp").mkdir(exist_ok=True)
        return self.run(argv, script, env, prepare, timeout)

    def sessions(self) -> list[Path]:
        return sorted(p for p in (self.store / "logs" / "session" / "unified").glob("*") if p.is_dir())


def legacy_files(path: str | os.PathLike[str]) -> tuple[str, dict[str, bytes]]:
    """The session id and the legacy files (paths relative to ``VIBE_HOME``) that resume
    ``path``: a legacy ``messages.jsonl`` with its own ``meta.json``, as they are (the folder
    renamed ``session_<…>_<id[:8]>`` when it is not, so ``--resume`` finds it); any other
    session, a unified one included, converted to the legacy form first (a unified folder
    resumes only with the plugin environment it pinned, docs/mistral_vibe.md#how-the-real-client-is-driven)."""
    from ..harnesses.mistral_vibe import store

    path = Path(path)
    if path.is_dir():
        path = store.session_file(path) or path
    meta = store.read_meta(path.parent) if path.name == store.LEGACY_MESSAGES else {}
    sid = meta.get("session_id")
    if isinstance(sid, str) and is_uuid(sid):
        name = path.parent.name
        if not (name.startswith("session_") and name.endswith(f"_{sid[:8]}")):
            name = f"session_txcodec_{sid[:8]}"
        return sid, {
            store.legacy_relpath(name, store.LEGACY_MESSAGES): read_bytes(path),
            store.legacy_relpath(name, store.META): (path.parent / store.META).read_bytes(),
        }
    written, _ = api.convert(path, "mistral_vibe")
    return written.session_id, written.files


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 240, **_: Any
) -> ResumeReport:
    exe = vibe_binary()
    session_id, files = legacy_files(path)
    with Vibe() as box:
        install_files(box.store, files)
        run = box.vibe(prompt, resume=session_id, timeout=timeout)
        sent = run.history(prompt)
        return resume_report("mistral_vibe", client_version(exe), session_id, run, sent, "vibe")
