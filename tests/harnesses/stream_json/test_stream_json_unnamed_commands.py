"""Issue 31 item 8: in a capture whose prompts were not captured, a run answered only by a
``<synthetic>`` line ran a local command (``/context``, ``/cost``): its output is a command
the model never saw, not assistant text (golden: a genuine 2.1.332 capture, one process fed
/context, /cost and /compact on stdin)."""

from __future__ import annotations

from support.paths import GOLDEN

from txcodec import api
from txcodec.model.common import Command
from txcodec.model.common import Text
from txcodec.model.loss import LossReport

CAPTURE = GOLDEN / "stream_json" / "scenarios" / "local_commands_compact" / "capture.jsonl"


def test_unnamed_local_commands_are_commands():
    loss = LossReport()
    conversation = api.to_common(api.load(CAPTURE, "stream_json"), loss)
    outputs = [b.output for m in conversation.messages for b in m.content if isinstance(b, Command)]
    assert [o.split("\n", 1)[0] for o in outputs[:2]] == ["## Context Usage", "Estimated cost:        $0.0001"]
    assert not [m for m in conversation.messages if m.role == "assistant" and m.model == "<synthetic>"]
    assert loss.counts()["command:name-not-captured"] == 2


def test_their_output_is_not_assistant_text_in_a_target():
    written, _ = api.convert(CAPTURE, "codex")
    conversation = api.to_common(api.load(written.files[written.main], "codex"))
    said = [b.text for m in conversation.messages if m.role == "assistant" for b in m.content if isinstance(b, Text)]
    assert not [t for t in said if "Context Usage" in t or "Estimated cost" in t]
