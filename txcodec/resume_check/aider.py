"""Run the real aider CLI offline against the mock Chat Completions API.

docs/aider.md#how-the-real-client-is-driven (aider-chat 0.86.2): ``aider --model openai/mock-model --openai-api-base
URL/v1 --openai-api-key dummy --no-git --yes-always --no-check-update --analytics-disable
--no-show-model-warnings --no-pretty --no-stream --edit-format diff --message PROMPT``,
``--restore-chat-history`` to resume. Aider sends no tools: an edit is a SEARCH/REPLACE block
in the reply's text, which aider applies. litellm would fetch its model price list from
github.com: a pre-seeded ``~/.aider/caches/model_prices_and_context_window.json`` naming the
mock model and ``LITELLM_LOCAL_MODEL_COST_MAP=True`` keep every request on 127.0.0.1.

The history is ``.aider.chat.history.md`` in the folder aider runs in: there is no id.
:func:`check_resume` puts a history file in a throw-away project folder, runs aider there
with ``--restore-chat-history --message continue`` and reports the history the first
model request carried (aider's canned example turns and file notes left out). A run that
sends no history counts as not resumed.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from ..core.atomic import write_atomic
from ..core.zst import read_bytes
from ..model.common import Message
from ..model.common import Text
from .chat_cli import ClientMissing
from .chat_cli import Run
from .chat_cli import Sandbox
from .chat_cli import binary
from .mock.openai_chat import MODEL
from .mock.openai_chat import Reply
from .mock.openai_chat import request_messages
from .process import version_of
from .report import ResumeReport

__all__ = ["Aider", "ClientMissing", "check_resume", "client_version", "aider_binary", "history_sent"]

HISTORY = ".aider.chat.history.md"
# aider's own turns around the restored history (aider/coders/*_prompts.py): the canned
# example exchange, then "I switched to a new code base..."/"Ok." before the history, and a
# note on the files in the chat after it
_SWITCHED = "I switched to a new code base"
_FILE_NOTES = (
    "I have *added these files to the chat*",
    "I am not sharing any files",
    "I am not sharing the full contents",
    "Here are summaries of some files",
)


def aider_binary() -> Path:
    return binary("aider", "aider-chat")


@functools.cache
def client_version(path: Path | None = None) -> str:
    code, out, err = version_of(path or aider_binary())
    found = re.search(r"\d+\.\d+\.\d+", out + err)
    return f"aider {found.group(0) if found else '(unknown version)'}"


class Aider(Sandbox):
    NAME = "aider"

    @property
    def history(self) -> Path:
        return self.cwd / HISTORY

    def aider(
        self,
        prompt: str,
        script: list[Reply] | None = None,
        *,
        restore: bool = False,
        files: list[str] = (),
        timeout: float = 180,
    ) -> Run:
        argv = [
            str(aider_binary()),
            "--model",
            f"openai/{MODEL}",
            "--openai-api-key",
            "dummy",
            "--no-git",
            "--yes-always",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-pretty",
            "--no-stream",
            "--edit-format",
            "diff",
            "--no-show-release-notes",
        ]
        if restore:
            argv.append("--restore-chat-history")
        argv += ["--message", prompt, *files]

        def prepare(url: str) -> None:
            caches = self.home / ".aider" / "caches"
            caches.mkdir(parents=True, exist_ok=True)
            prices = {
                f"openai/{MODEL}": {
                    "max_input_tokens": 128000,
                    "max_output_tokens": 8192,
                    "litellm_provider": "openai",
                    "mode": "chat",
                }
            }
            (caches / "model_prices_and_context_window.json").write_text(json.dumps(prices))

        def env(url: str) -> dict[str, str]:
            return {
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "OPENAI_API_BASE": f"{url}/v1",
                "XDG_CONFIG_HOME": str(self.root / "config"),
                "XDG_CACHE_HOME": str(self.root / "cache"),
            }

        return self.run(argv, script, env, prepare, timeout)


def history_sent(body: Any, prompt: str) -> list[Message]:
    """The restored history a request carried: the messages after aider's "I switched to a
    new code base"/"Ok." pair and before its note on the chat's files and the new prompt."""
    messages = request_messages(body)
    start = next((i for i, m in enumerate(messages) if m.role == "user" and _text(m).startswith(_SWITCHED)), None)
    if start is None:
        return []
    out = []
    for message in messages[start + 2 :]:
        text = _text(message)
        if message.role == "user" and (text.startswith(_FILE_NOTES) or text == prompt):
            break
        out.append(message)
    return out


def _text(message: Message) -> str:
    return "".join(b.text for b in message.content if isinstance(b, Text))


def check_resume(
    path: str | os.PathLike[str], prompt: str = "continue", timeout: float = 180, **_: Any
) -> ResumeReport:
    data = read_bytes(path)
    exe = aider_binary()
    with Aider() as box:
        write_atomic(box.history, data)
        run = box.aider(prompt, [Reply(text="ok")], restore=True, timeout=timeout)
        sent = history_sent(run.bodies[0], prompt) if run.bodies else []
        rejected = list(run.rejected)
        if run.exit_code == 0 and not sent:
            rejected.append("aider sent no history from the file: it started anew")
        return ResumeReport(
            "aider",
            client_version(exe),
            str(Path(path).name),
            run.exit_code,
            len(run.requests),
            sent,
            rejected,
            (run.stderr + run.stdout)[-4000:],
        )
