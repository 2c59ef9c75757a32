"""Continue CLI (``cn``): ``~/.continue/sessions/<sessionId>.json``.

``records`` (the session document), ``codec`` (bytes <-> document), ``store`` (discovery,
install with the newest mtime), ``read`` (-> Common) and ``write`` (Common -> a file ``cn
--resume`` / ``cn --fork <id>`` loads).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store


def detect(sample: list[Any]) -> int:
    """A document with a string ``sessionId`` and a ``history`` list whose items hold a
    ``message`` and ``contextItems`` (no other harness has ``contextItems``)."""
    for value in sample[:1]:
        if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str):
            continue
        history = value.get("history")
        if not isinstance(history, list):
            continue
        items = [h for h in history if isinstance(h, dict) and isinstance(h.get("message"), dict)]
        if items and all("contextItems" in h for h in items):
            return 30
        if not history:
            return 5
    return 0


HARNESS = package_harness(
    __name__,
    title="Continue CLI",
    detect=detect,
    store=store.STORE,
    resume=("cn", "--fork", "{id}"),
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
