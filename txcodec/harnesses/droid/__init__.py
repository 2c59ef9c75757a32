"""Factory droid: ``~/.factory/sessions/<munged cwd>/<uuid>.jsonl``.

``records`` (typed lines), ``codec`` (bytes <-> records), ``store`` (discovery), ``read``
(-> Common) and ``write`` (Common -> a file ``droid exec --fork <id>`` continues).
"""

from __future__ import annotations

from typing import Any

from ...registry import Harness, lazy
from . import store
from .codec import CODEC
from .read import read
from .write import write


def detect(sample: list[Any]) -> int:
    """A ``session_start`` line with an ``id`` (pi's header is ``session``; its ``message``
    lines look like droid's, so they alone claim nothing)."""
    for value in sample:
        if isinstance(value, dict) and value.get("type") == "session_start" and isinstance(value.get("id"), str):
            return 30
    return 0


HARNESS = Harness(
    name="droid",
    title="Factory droid",
    codec=CODEC,
    detect=detect,
    read=read,
    write=write,
    store=store,
    check_resume=lazy("txcodec.clients.droid", "check_resume"),
    resume=("droid", "exec", "--fork", "{id}"),
)
