"""cline CLI: ``~/.cline/data/sessions/<id>/<id>.messages.json`` + a ``sessions.db`` row.

``records`` (the messages document), ``codec`` (bytes <-> document), ``store`` (discovery,
install with the database row), ``read`` (-> Common) and ``write`` (Common -> a session
folder ``cline --id <id>`` resumes in its TUI).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import package_harness
from .. import codec_on_demand
from . import store


def detect(sample: list[Any]) -> int:
    """A document with a string ``sessionId``, ``version`` 1 and a ``messages`` list of
    ``{role, content: [...]}`` (Gemini CLI's legacy document has ``type``, not ``role``)."""
    for value in sample[:1]:
        if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str) or value.get("version") != 1:
            continue
        messages = value.get("messages")
        if not isinstance(messages, list):
            continue
        if not messages:
            return 5
        if all(
            isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), list)
            for m in messages
        ):
            return 30
    return 0


# Its tools' kinds (model.tools.tool_kind), by the names cline 3.0.65 defines (``@cline/core``).
TOOL_KINDS = {
    "run_commands": "shell_exec",
    "read_files": "read_file",
    "editor": "modify_file",
    "apply_patch": "modify_file",
    "search_codebase": "code_search",
    "fetch_web_content": "http_request",
    "spawn_agent": "subagent_task",
}

HARNESS = package_harness(
    __name__,
    title="cline",
    detect=detect,
    store=store.STORE,
    resume=("cline", "--id", "{id}"),
    tool_kinds=TOOL_KINDS,
)

__getattr__ = codec_on_demand(__name__)  # CODEC, imported when asked for
