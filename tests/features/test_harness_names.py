"""Issue 34.13: the short names people use for the clients (claude, gemini, qwen, copilot,
continue, kimi, vibe, ...) and any case mean the harness ids, in every option that takes a
harness and in the library; one resolver (``registry.canonical``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from txcodec import api
from txcodec.cli import main
from txcodec.kit import registry

NAMES = {
    "claude": "claude_code",
    "Claude": "claude_code",
    "claude-code": "claude_code",
    "CODEX": "codex",
    "gemini": "gemini_cli",
    "Gemini-CLI": "gemini_cli",
    "qwen": "qwen_code",
    "copilot": "copilot_cli",
    "continue": "continue_cli",
    "kimi": "kimi_cli",
    "vibe": "mistral_vibe",
    "mistral": "mistral_vibe",
    "OpenCode": "opencode",
    "stream-json": "stream_json",
    "Pi": "pi",
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_one_resolver_takes_short_names_in_any_case(name):
    assert registry.canonical(name) == NAMES[name]
    assert registry.get(name).name == NAMES[name]


def test_every_built_in_id_is_its_own_name_and_unknown_names_stay_unknown():
    assert all(registry.canonical(n) == n for n in registry.BUILTIN)
    assert registry.canonical("nonsense") == "nonsense" and registry.find("nonsense") is None


def _ok(*args: str):
    out = CliRunner().invoke(main, list(args))
    assert out.exit_code == 0, out.output
    return out


@pytest.mark.parametrize(("to", "harness"), [("claude", "claude_code"), ("Codex", "codex"), ("qwen", "qwen_code")])
def test_convert_to_a_short_name(to, harness, tmp_path):
    _ok("convert", str(api.sample("codex")), "--to", to, "-o", str(tmp_path / "x.jsonl"))
    assert api.load(tmp_path / "x.jsonl").harness == harness


def test_from_and_harness_options_take_short_names(tmp_path):
    sample = str(api.sample())
    assert "Fix empty-cart checkout" in _ok("show", "--from", "Claude", sample).output
    _ok("convert", sample, "--from", "claude", "--to", "gemini", "-o", str(tmp_path / "g"))
    usage = _ok("usage", "--harness", "claude", "--by", "harness", sample).output
    assert "claude_code" in usage and "claude-opus-5" not in usage
    _ok("inspect", "--from", "CLAUDE", sample)
    _ok("changes", "--from", "claude", sample)
    assert _ok("sample", "--harness", "Gemini").stdout.strip() == str(api.sample("gemini_cli"))


def test_a_near_miss_gets_the_closest_name():
    out = CliRunner().invoke(main, ["convert", str(api.sample()), "--to", "claud"])
    assert out.exit_code == 2 and "did you mean 'claude_code'?" in out.output
