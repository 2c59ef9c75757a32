"""Hook output in a capture (issue 31, class 3): ``claude -p`` prints a SessionStart hook's
output as a ``system/hook_response`` line (the ``hooks`` scenario, recorded by the real
2.1.332). Its ``additionalContext`` is context the model was sent; the real targets' check is
``test_x_to_y_shows_the_model_the_context_in_place`` (tests/features/test_scenarios.py)."""

from __future__ import annotations

import json

from support.paths import GOLDEN

from txcodec import api
from txcodec.model.common import Context
from txcodec.model.common import Text
from txcodec.model.loss import LossReport

CAPTURE = GOLDEN / "stream_json" / "scenarios" / "hooks" / "capture.jsonl"
START = "HOOK-SESSION-START: the repo uses tabs"


def _read():
    session = api.load(CAPTURE, "stream_json")
    session.prompts = ["run echo hooked", "and now?"]
    loss = LossReport()
    return api.to_common(session, loss), loss


def test_a_session_start_hooks_context_comes_before_the_prompt():
    conversation, loss = _read()
    first, prompt = conversation.messages[:2]
    [block] = first.content
    assert first.meta and isinstance(block, Context) and block.role == "system"
    assert block.text == f"SessionStart hook additional context: {START}"
    assert prompt.content == [Text("run echo hooked")]
    # the resumed run's SessionStart:resume output is not in the CLI's session file: not carried
    contexts = [b for m in conversation.messages for b in m.content if isinstance(b, Context)]
    assert len(contexts) == 1 and loss.counts().get("record:system/hook_response") == 1


def test_claude_code_gets_the_attachment_its_own_file_holds():
    written, _ = api.convert(CAPTURE, "claude_code", prompts=["run echo hooked", "and now?"])
    mine = [json.loads(line) for line in written.files[written.main].splitlines()]
    [cli_file] = (CAPTURE.parent / "cli_session").glob("*.jsonl")
    theirs = [json.loads(line) for line in cli_file.read_bytes().splitlines()]

    def hook_context(lines):
        return [v["attachment"] for v in lines if (v.get("attachment") or {}).get("type") == "hook_additional_context"]

    assert hook_context(mine) == hook_context(theirs)[:1]  # the SessionStart one: the others are not in a capture
