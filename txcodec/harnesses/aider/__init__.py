"""aider: ``.aider.chat.history.md`` in the project folder (Markdown, no ids, no tool calls).

``records`` (a Markdown line), ``codec`` (bytes <-> lines), ``store`` (the project's history,
install), ``read`` (-> Common, text turns) and ``write`` (Common -> a history
``aider --restore-chat-history`` restores).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Harness, Later, lazy
from .. import codec_on_demand
from . import store


def detect(sample: list[Any]) -> int:
    """Never from the bytes: the history is Markdown, not JSON, and any text is a valid
    one. A file is aider's by its name (``store.FILE_NAMES``) or by ``--from aider``."""
    return 0


HARNESS = Harness(
    name="aider",
    title="aider",
    codec=Later(f"{__name__}.codec", "CODEC"),
    detect=detect,
    read=lazy(f"{__name__}.read", "read"),
    write=lazy(f"{__name__}.write", "write"),
    store=store.STORE,
    check_resume=lazy("txcodec.resume_check.aider", "check_resume"),
    resume=("aider", "--restore-chat-history"),
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
