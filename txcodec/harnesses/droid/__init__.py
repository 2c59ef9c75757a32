"""Factory droid: ``~/.factory/sessions/<munged cwd>/<uuid>.jsonl``.

``records`` (typed lines), ``codec`` (bytes <-> records), ``store`` (discovery), ``read``
(-> Common) and ``write`` (Common -> a file ``droid exec --fork <id>`` continues).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Later
from ...kit.registry import lazy
from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store


def detect(sample: list[Any]) -> int:
    """A ``session_start`` line with an ``id`` (pi's header is ``session``; its ``message``
    lines look like droid's, so they alone claim nothing)."""
    for value in sample:
        if isinstance(value, dict) and value.get("type") == "session_start" and isinstance(value.get("id"), str):
            return 30
    return 0


# Its tools' kinds (model.tools.tool_kind), by the tools droid 0.225.2's first request offered;
# names the shared table already knows (``Read``) keep their kind.
TOOL_KINDS = {"Execute": "shell_exec", "Create": "modify_file"}

HARNESS = package_harness(
    __name__,
    append_only=True,  # the client only appends to its JSONL files (txcodec.live)
    carry_on=lazy(f"{__name__}.read", "carry_on"),  # and a follow's reader carries on from its last line
    title="Factory droid",
    detect=detect,
    store=store.STORE,
    resume=("droid", "exec", "--fork", "{id}"),
    tool_kinds=TOOL_KINDS,
    fixtures=Later(f"{__name__}.fixtures", "FIXTURES"),  # txcodec fixtures: its comparable shapes
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
