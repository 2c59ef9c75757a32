"""Run the real OpenHands CLI offline against the mock Chat Completions API.

docs/openhands.md#how-the-real-client-is-driven (OpenHands 1.16.0, SDK 1.21.0): with ``LLM_MODEL=openai/mock-model``,
``LLM_BASE_URL`` the loopback mock and ``--override-with-envs``, ``openhands --headless
--json -t PROMPT`` runs one task (a turn ends with a ``finish`` tool call) and prints
``openhands --resume <uuid>``; ``--resume <uuid>`` continues it. Conversations go to
``$OPENHANDS_CONVERSATIONS_DIR``, else ``$OPENHANDS_PERSISTENCE_DIR/conversations``, else
``~/.openhands/conversations`` (``openhands_cli/locations.py``). ``LITELLM_LOCAL_MODEL_COST_MAP``
keeps litellm from fetching its price list; the CLI still tries to clone its public skills
from github.com, which fails offline and is only logged.

:func:`check_resume` copies a conversation folder (from the folder or any file in it) into
a throw-away store, runs ``--resume <uuid> -t continue`` and reports the history the first
model request carried. A run that sends no history (a conversation the client starts
afresh, or refuses with exit 0) counts as not resumed.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import binary
from .chat_cli import history_sent as history_sent  # the tests read a run's history with it
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .process import version_of
from .report import ResumeReport

__all__ = ["ClientMissing", "OpenHands", "check_resume", "client_version", "openhands_binary"]

RESUME_LINE = re.compile(r"openhands --resume ([0-9a-f-]{32,36})")


def openhands_binary() -> Path:
    return binary("openhands", "openhands")


@functools.cache
def client_version(path: Path | None = None) -> str:
    code, out, err = version_of(path or openhands_binary(), {"OPENHANDS_SUPPRESS_BANNER": "1"})
    found = re.search(r"\d+\.\d+\.\d+", out + err)
    return f"openhands {found.group(0) if found else '(unknown version)'}"


class OpenHands(Sandbox):
    NAME, STORE = "openhands", ".openhands/conversations"

    def openhands(
        self, prompt: str, script: list[Reply] | None = None, *, resume: str | None = None, timeout: float = 180
    ) -> Run:
        argv = [str(openhands_binary()), "--headless", "--json", "--override-with-envs"]
        if resume:
            argv += ["--resume", resume]
        argv += ["-t", prompt]

        def env(url: str) -> dict[str, str]:
            return {
                "OPENHANDS_SUPPRESS_BANNER": "1",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "LLM_MODEL": f"openai/{MODEL}",
                "LLM_API_KEY": "dummy",
                "LLM_BASE_URL": f"{url}/v1",
                "XDG_CONFIG_HOME": str(self.root / "config"),
                "XDG_CACHE_HOME": str(self.root / "cache"),
            }

        return self.run(argv, script, env, None, timeout)

    def conversations(self) -> list[Path]:
        return sorted(p for p in self.store.iterdir() if p.is_dir()) if self.store.is_dir() else []


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 180, **_: Any
) -> ResumeReport:
    from ..harnesses.openhands.store import CONVERSATION
    from ..harnesses.openhands.store import dashed
    from ..harnesses.openhands.store import session_folder

    folder = session_folder(path)
    if folder is None:
        raise InputError(f"{path}: not an OpenHands conversation folder (or a file in one)")
    name = folder.name if CONVERSATION.match(folder.name) else None
    if name is None:
        raise InputError(f"{folder}: an OpenHands conversation folder is named by a UUID without dashes")
    exe = openhands_binary()
    with OpenHands() as box:
        box.store.mkdir(parents=True)
        shutil.copytree(folder, box.store / name)
        run = box.openhands(prompt, [_finish("ok")], resume=dashed(name), timeout=timeout)
        sent = run.history(prompt, _injected)
        rejected = list(run.rejected)
        if run.exit_code == 0 and not sent:
            rejected.append("openhands sent no history from the conversation: it started anew or refused it")
        return ResumeReport(
            "openhands",
            client_version(exe),
            dashed(name),
            run.exit_code,
            len(run.requests),
            sent,
            rejected,
            (run.stderr + run.stdout)[-4000:],
        )


def _finish(message: str) -> Reply:
    from .mock.openai_chat import tool_call

    return tool_call("finish", {"message": message}, id="call_finish_resume")


def _injected(text: Any) -> bool:
    """What the CLI adds to a user turn itself (none seen in 1.16.0 headless runs)."""
    return False
