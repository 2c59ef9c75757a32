"""aider: ``.aider.chat.history.md`` in the project folder (Markdown, no ids, no tool calls).

``records`` (a Markdown line), ``codec`` (bytes <-> lines), ``store`` (the project's history,
install), ``read`` (-> Common, text turns) and ``write`` (Common -> a history
``aider --restore-chat-history`` restores).
"""

from __future__ import annotations

from typing import Any

from ...registry import Harness, lazy
from . import store
from .codec import CODEC
from .read import read
from .write import write


def detect(sample: list[Any]) -> int:
    """Never from the bytes: the history is Markdown, not JSON, and any text is a valid
    one. A file is aider's by its name (``store.FILE_NAMES``) or by ``--from aider``."""
    return 0


HARNESS = Harness(
    name="aider",
    title="aider",
    codec=CODEC,
    detect=detect,
    read=read,
    write=write,
    store=store,
    check_resume=lazy("txcodec.clients.aider", "check_resume"),
    resume=("aider", "--restore-chat-history"),
)
