"""Issue 31 items 5-7 with the real ``codex`` (0.171.0) against the mock: resuming the
Codex -> Common -> Codex copy of a rollout sends the MCP call with its namespace, the
arguments string as the model wrote it and the goal output with no call_id, exactly as
resuming the original does."""

from __future__ import annotations

import json

import pytest
from test_codex_namespace_goals import CALL
from test_codex_namespace_goals import GOAL
from test_codex_namespace_goals import ROLLOUT

from txcodec import api
from txcodec.resume_check.codex import Sandbox
from txcodec.resume_check.codex import codex_binary
from txcodec.resume_check.codex import resume

pytestmark = pytest.mark.real_client


@pytest.fixture(scope="module", autouse=True)
def _client():
    codex_binary()  # fails with a clear message when the CLI is missing; never skips


def _sent(data: bytes) -> list[dict]:
    with Sandbox() as box:
        _, run = resume(box, data, "continue", 90)
    assert run.exit_code == 0 and run.inputs, run.stderr[-2000:]
    return [item for item in run.inputs[0] if isinstance(item, dict) and item.get("type") != "message"]


def test_namespace_arguments_and_goal_output_resume_as_in_the_original():
    written, _ = api.convert(ROLLOUT, "codex")
    original, mine = _sent(ROLLOUT), _sent(written.files[written.main])
    assert CALL in original and GOAL in original  # what codex itself sends back
    assert json.dumps(mine, sort_keys=True) == json.dumps(original, sort_keys=True)
