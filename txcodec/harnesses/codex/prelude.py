"""Context that Codex injects into the conversation as ``user`` or ``developer``
messages: environment context, AGENTS.md / user instructions, skills, permissions, ...
The user never typed them, so a reader marks them ``meta`` with their kind, and the
resume checker does not count them as history."""

from __future__ import annotations

import re

# (kind, how the text starts) — observed in codex 0.77-0.171 rollouts and requests.
_MARKERS: tuple[tuple[str, str], ...] = (
    ("environment_context", "<environment_context>"),
    ("user_instructions", "<user_instructions>"),
    ("agents_md", "# AGENTS.md instructions for "),
    ("skills_instructions", "<skills_instructions>"),
    ("permissions_instructions", "<permissions instructions>"),
    ("collaboration_mode", "<collaboration_mode>"),
    ("developer_instructions", "<developer_instructions>"),
    ("personality", "<personality_spec>"),
    ("apps_instructions", "<apps_instructions>"),
    ("turn_aborted", "<turn_aborted>"),
    ("user_shell_command", "<user_shell_command>"),
    ("subagent_notification", "<subagent_notification>"),
)
# The kinds codex sends as ``developer`` messages: skills and permissions seen in 0.171
# requests, apps and collaboration mode are developer-instruction fragments in codex-rs.
# The rest (environment context, AGENTS.md, shell commands, ...) go as ``user`` messages.
DEVELOPER_KINDS = frozenset(
    {"skills_instructions", "permissions_instructions", "collaboration_mode", "apps_instructions"}
)
_TAG = re.compile(r"<([a-z_]+(?: [a-z_]+)?)>")


def prelude_kind(text: str) -> str | None:
    """The kind of injected context ``text`` is, or ``None`` for something a person typed."""
    head = text.lstrip()
    for kind, marker in _MARKERS:
        if head.startswith(marker):
            return kind
    return None
