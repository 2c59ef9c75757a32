"""aider: ``.aider.chat.history.md`` in the project folder (Markdown, no ids, no tool calls).

``records`` (a Markdown line), ``codec`` (bytes <-> lines), ``store`` (the project's history,
install), ``read`` (-> Common, text turns) and ``write`` (Common -> a history
``aider --restore-chat-history`` restores).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store


def detect(sample: list[Any]) -> int:
    """Never from the bytes: the history is Markdown, not JSON, and any text is a valid
    one. A file is aider's by its name (``store.FILE_NAMES``) or by ``--from aider``."""
    return 0


HARNESS = package_harness(
    __name__,
    title="aider",
    detect=detect,
    store=store.STORE,
    resume=("aider", "--restore-chat-history"),
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
