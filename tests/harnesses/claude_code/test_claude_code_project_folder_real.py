"""The project folder the real ``claude`` (2.1.332) files a session under, for a work
folder whose name is not ASCII and is long: the store's ``munge_cwd`` names the same folder
(docs/claude_code.md#discovery)."""

from __future__ import annotations

import pytest

from txcodec.harnesses.claude_code.store import munge_cwd
from txcodec.resume_check.claude_code import run_claude
from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.anthropic import text
from txcodec.resume_check.mock.server import MockServer
from txcodec.resume_check.report import find_client

pytestmark = pytest.mark.real_client


def test_the_client_names_the_project_folder_as_munge_cwd(tmp_path):
    if find_client("claude") is None:
        pytest.fail("the claude CLI is missing: npm install --prefix clients (see clients/package.json)")
    # umlauts, astral characters (two UTF-16 units each) and over 200 units: cut and hashed
    work = tmp_path / ("ä" * 40 + "-\U0001f680" * 20) / ("x" * 20 + "/y" * 80)
    work.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    with MockServer(AnthropicMock([text("hi")], strict=True)) as server:
        run = run_claude(["-p", "hello"], work, home, server, 60)
    assert run.exit_code == 0, run.stderr
    [session] = (home / ".claude" / "projects").rglob("*.jsonl")
    assert len(munge_cwd(str(work))) > 200
    assert session.parent.name == munge_cwd(str(work))
