"""Finding the client programs (``claude``, ``gemini``, ``opencode``, ...) that txcodec runs:
for resume checks, and for the stores that install a session through the client itself."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from .errors import TxcodecError


class ClientMissing(TxcodecError, RuntimeError):
    """A real client CLI is not installed (``txcodec check-resume`` exits 2 on it)."""


def find_client(name: str) -> Path | None:
    """A client binary in ``$TXCODEC_CLIENTS``, then the repository's ``clients/`` folder, then
    PATH. In a clients folder npm's CLIs are in ``node_modules/.bin`` and the Python ones in
    their own virtualenvs, ``venvs/<venv>/bin`` (``clients/install-python.sh``)."""
    folders = [Path(os.environ["TXCODEC_CLIENTS"])] if os.environ.get("TXCODEC_CLIENTS") else []
    folders.append(Path(__file__).resolve().parents[2] / "clients")
    for folder in folders:
        candidates = [folder / "node_modules" / ".bin" / name, *sorted(folder.glob(f"venvs/*/bin/{name}"))]
        for c in candidates:
            if c.exists():
                return c
    found = shutil.which(name)
    return Path(found) if found else None


# The npm package of each client CLI (the versions tested are pinned in clients/package.json).
PACKAGES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "qwen": "@qwen-code/qwen-code",
    "pi": "@mariozechner/pi-coding-agent",
    "ccusage": "ccusage",
}


def install_hint(name: str) -> str:
    """How to make ``name`` findable, for a pip user and for a checkout alike."""
    package = PACKAGES.get(name, name)
    return (
        f": put it on PATH (npm install -g {package}), or set TXCODEC_CLIENTS to a folder where "
        f"npm installed it (node_modules/.bin/{name}); in a txcodec checkout: npm install --prefix clients"
    )


def require_client(name: str, hint: str | None = None, find: Callable[[str], Path | None] | None = None) -> Path:
    """The client's binary (``find``, else :func:`find_client`: TXCODEC_CLIENTS, the
    checkout's clients/, then PATH), or :class:`ClientMissing` saying how to install it."""
    found = (find or find_client)(name)
    if found is None:
        raise ClientMissing(f"the {name} CLI is not installed{hint if hint is not None else install_hint(name)}")
    return found
