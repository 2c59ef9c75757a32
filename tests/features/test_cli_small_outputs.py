"""Small things a new user met (issue 34 item 15): a written file is told, a folder made
for it too; a file that is no session is called so; ``sql --help`` names every table."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from txcodec.cli import main
from txcodec.cli.store import sample_path
from txcodec.export.columnar import TABLES


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("fmt", ["html", "markdown", "common"])
def test_export_to_a_file_says_what_it_wrote(tmp_path, fmt):
    out = tmp_path / f"x.{fmt}"
    result = run("export", "--to", fmt, "-o", out, sample_path("claude_code"))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}: {fmt}, " in result.stderr and "created folder" not in result.stderr
    assert result.stdout == ""


def test_export_into_a_missing_folder_says_it_made_it(tmp_path):
    out = tmp_path / "new" / "dir" / "x.html"
    result = run("export", "--to", "html", "-o", out, sample_path("claude_code"))
    assert result.exit_code == 0, result.output
    assert f"created folder {out.parent}" in result.stderr and out.is_file()


def test_export_to_hf_says_what_it_wrote(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "chat.parquet"
    result = run("export", "--to", "hf", "-o", out, sample_path("claude_code"), sample_path("codex"))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}: 2 sessions as chat examples (hf)" in result.stderr


def test_verify_says_a_json_file_that_is_no_session_is_not_one(tmp_path):
    package = tmp_path / "package.json"
    package.write_text('{"name": "shop", "version": "1.0.0"}\n')
    result = run("verify", package)
    assert "not a session of any known harness" in result.stdout
    assert "(1 not a session)" in result.stdout
    session = run("verify", sample_path("claude_code"))
    assert "not a session" not in session.stdout and session.exit_code == 0


def test_sql_help_names_every_table():
    text = " ".join(run("sql", "--help").stdout.split())
    assert all(name in text for name in TABLES) and "changes" in text
