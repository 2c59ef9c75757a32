"""show / export / usage over a real corpus session."""

from __future__ import annotations

import json

from click.testing import CliRunner

from txcodec.cli import main

from conftest import CORPUS

SESSION = CORPUS / "claude_code" / "spotter" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
GENERATED = CORPUS / "claude_code" / "generated" / "claude_bash_read.jsonl"


def test_show_indents_subagents():
    out = CliRunner().invoke(main, ["show", str(SESSION), "--no-color"])
    assert out.exit_code == 0, out.output
    assert "    ┌ subagent a93ccab" in out.output


def test_export_common_and_markdown(tmp_path):
    runner = CliRunner()
    out = runner.invoke(main, ["export", str(GENERATED), "--to", "common", "-o", "-"])
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert list(data)[:3] == ["version", "meta", "messages"]
    target = tmp_path / "s.md"
    out = runner.invoke(main, ["export", str(GENERATED), "--to", "markdown", "-o", str(target), "--loss"])
    assert out.exit_code == 0 and target.read_text().startswith("# ")
    assert json.loads(out.stdout)["counts"]["record:api-request"] == 4
    again = runner.invoke(main, ["export", str(GENERATED), "--to", "markdown", "-o", str(target)])
    assert again.exit_code == 1 and "already exists" in again.output  # never overwrites


def test_usage_json_matches_ccusage_on_a_2_1_332_file():
    out = CliRunner().invoke(main, ["usage", "--json", str(GENERATED)])
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.stdout)
    # ccusage 20.0.24 on the same file: input 49951, output 20 (docs/usage.md)
    assert (row["model"], row["input_tokens"], row["output_tokens"], row["calls_without_usage"]) == ("claude-opus-5-5", 49951, 20, 0)
