"""Codex 0.171 usage, checked against the rollout's own records (issue 37).

A codex 0.171 rollout states each model call's usage twice: a ``token_count`` event
(``last_token_usage``, and the running ``total_token_usage``) and a ``token_usage_record``
line per response (``usage``). ``txcodec usage`` must give the
calls and the tokens both state, on the genuine rollout of the corpus (recorded from the
real codex 0.171.0 against the mock model) and on the golden scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import CORPUS
from support.paths import GOLDEN

from txcodec.usage import usage

GENUINE = CORPUS / "codex" / "generated" / "codex_exec_2turns.jsonl"
# rollouts whose every call has both records (not the compaction or web-search scenarios:
# a compaction's call and a web search's synthetic reply are counted by rules of their own)
ROLLOUTS = [
    GENUINE,
    GOLDEN / "codex" / "tool_call_genuine" / "rollout.jsonl",
    *(
        GOLDEN / "codex" / "scenarios" / name / "rollout.jsonl"
        for name in ("apply_patch", "exec_command", "view_image")
    ),
    GOLDEN / "codex" / "scenarios" / "parallel_calls" / "rollout.jsonl",
]


def _own_records(path: Path) -> tuple[int, tuple[int, int, int], tuple[int, int, int]]:
    """(responses, the sum of their usage records, the last running total), each as
    (input without the cached part, cached input, output), as the rollout states them."""
    responses: list[dict] = []
    total = None
    for line in path.read_bytes().splitlines():
        rec = json.loads(line)
        p = rec.get("payload")
        if rec.get("type") == "token_usage_record":
            responses.append(p["usage"])  # one per response (the mock reuses its ids: not keyed by them)
        elif rec.get("type") == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            total = p["info"]["total_token_usage"]

    def split(u: dict) -> tuple[int, int, int]:
        return u["input_tokens"] - u["cached_input_tokens"], u["cached_input_tokens"], u["output_tokens"]

    summed = [split(u) for u in responses]
    return len(responses), tuple(map(sum, zip(*summed))), split(total)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.parent.name if p.name == "rollout.jsonl" else p.stem)
def test_usage_is_what_the_rollout_s_own_records_say(path):
    if not path.exists():
        pytest.skip(f"{path} is not here: the corpus lives beside the checkout")
    responses, summed, total = _own_records(path)
    assert responses and summed == total  # the rollout agrees with itself
    t = usage([path], by=["session"], prices=False).totals
    assert t.calls == responses
    assert (t.input_tokens, t.cache_read_input_tokens, t.output_tokens) == total


def test_the_genuine_0_171_rollout_counts_52082_input_tokens():
    """The number docs/usage.md quotes: five responses, 10,106 + 10,320 + 10,445 + 10,543 +
    10,668 input tokens; ccusage 20.0.24 reports the same on this file."""
    if not GENUINE.exists():
        pytest.skip("the corpus lives beside the checkout")
    t = usage([GENUINE], by=["session"], prices=False).totals
    assert (t.calls, t.input_tokens, t.output_tokens) == (5, 52_082, 25)
