"""The docs stay true to the code: CLI reference, one page and one golden folder per
harness, the README's commands and support matrix, the pinned client versions."""

from __future__ import annotations

import json
import re
import subprocess

import click
import pytest
from support.paths import ROOT

from txcodec.cli import main
from txcodec.cli.reference import render
from txcodec.kit import registry

HARNESSES = sorted(name for name in registry.harnesses() if name != "jsonl")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_cli_reference_is_current():
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == render(), (
        "docs/cli.md is stale: python -m txcodec.cli.reference > docs/cli.md"
    )


def test_every_command_has_help():
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert (command.help or "").strip(), f"txcodec {name} has no help text"


@pytest.mark.parametrize("name", HARNESSES)
def test_harness_has_docs_golden_and_readme_row(name):
    assert (ROOT / "docs" / f"{name}.md").is_file(), f"docs/{name}.md missing"
    golden = ROOT / "golden" / name
    assert golden.is_dir() and any(golden.iterdir()), f"golden/{name}/ missing or empty"
    assert re.search(rf"^\| `{name}` \|", README, re.M), f"README support matrix has no row for {name}"


def _first_shell_block() -> list[str]:
    block = re.search(r"^```(?:sh|bash|shell)\n(.*?)^```", README, re.M | re.S)
    assert block, "README has no shell code block"
    return block.group(1).strip().splitlines()


def test_readme_first_block_is_two_commands():
    lines = _first_shell_block()
    assert len(lines) == 2, lines
    assert "pytest" in lines[1]
    assert "txcodec" in lines[0] and "sample" in lines[0]


def test_ci_runs_the_readme_test_command():
    # .ci/run extracts the command with awk; check it finds the same line we document.
    script = (ROOT / ".ci" / "run").read_text()
    extract = re.search(r"test_cmd=\$\((.*)\)\n", script).group(1)
    found = subprocess.run(["bash", "-c", extract], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert found == _first_shell_block()[1]


def _python_pins() -> dict[str, str]:
    """The Python CLIs' pins (clients/python-clients.txt: name, python, requirement)."""
    found = re.findall(r"^(\w+)\s+\S+\s+[\w.-]+==(\S+)$", (ROOT / "clients" / "python-clients.txt").read_text(), re.M)
    return dict(found)


def test_readme_matrix_names_the_pinned_client_versions():
    pins = json.loads((ROOT / "clients" / "package.json").read_text())["dependencies"]
    clients = {
        "claude": pins["@anthropic-ai/claude-code"],
        "codex": pins["@openai/codex"],
        "gemini": pins["@google/gemini-cli"],
        "qwen": pins["@qwen-code/qwen-code"],
        "pi": pins["@mariozechner/pi-coding-agent"],
        "copilot": pins["@github/copilot"],
        "cn": pins["@continuedev/cli"],
        "opencode": pins["opencode-ai"],
        "kilo": pins["@kilocode/cli"],
        "cline": pins["cline"],
        "droid": pins["@factory/cli-linux-x64"],
        **_python_pins(),
    }
    for client, version in re.findall(
        r"\b(claude|codex|gemini|qwen|pi|copilot|cn|opencode|kilo|kimi|vibe|cline|openhands|aider|droid) "
        r"(\d+\.\d+\.\d+) \(tested\)",
        README,
    ):
        assert clients[client] == version, (
            f"README says {client} {version}, clients/package.json pins {clients[client]}"
        )
