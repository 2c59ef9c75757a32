"""A home of the test's own: HOME and the cache folder in ``tmp_path``, and no store
variable of the caller's environment pointing elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from txcodec import api
from txcodec.cli.store import sample_path

STORE_VARIABLES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "PI_CODING_AGENT_DIR")


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in STORE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def install_sample_copies(harnesses=("claude_code", "codex", "pi", "qwen_code")) -> dict[str, Path]:
    """The bundled Claude Code sample converted to each of ``harnesses`` and installed, one
    session id each: the main file of each, by harness."""
    files = {}
    for n, harness in enumerate(harnesses):
        sid = (
            f"0199aaaa-0000-7000-8000-00000000000{n}"
            if harness == "codex"
            else f"4f6c1d2e-0000-4000-8000-00000000000{n}"
        )
        written, _ = api.convert(sample_path("claude_code"), harness, cwd="/home/dev/shop", session_id=sid)
        files[harness] = api.install(written, harness)[0]
    return files
