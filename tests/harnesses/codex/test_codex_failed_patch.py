"""A failed apply_patch: Codex writes its output as a plain string and says the patch
failed only in its ``patch_apply_end`` event (``success: false``, before or after the
output). The reader makes that result an error, so a page draws its error badge and a
conversion to Claude Code (its fast path steps aside) carries ``is_error``."""

from __future__ import annotations

import json

import pytest
from support.paths import GOLDEN

from txcodec import api
from txcodec.export import html
from txcodec.model.common import ToolResult

ROLLOUT = GOLDEN / "codex" / "scenarios" / "apply_patch" / "rollout.jsonl"
CALL = "call_patch_1"


def _event(success: bool) -> bytes:
    payload = {"type": "patch_apply_end", "call_id": CALL, "success": success, "stdout": "", "stderr": "no such file"}
    return json.dumps({"timestamp": "2026-12-01T00:46:26.228Z", "type": "event_msg", "payload": payload}).encode()


def _rollout(success: bool, before: bool) -> bytes:
    lines = ROLLOUT.read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines) if b'"custom_tool_call_output"' in line and CALL.encode() in line)
    lines.insert(at if before else at + 1, _event(success))
    return b"\n".join(lines) + b"\n"


def _result(data: bytes) -> ToolResult:
    conv = api.to_common(api.load(data, "codex"))
    return next(b for m in conv.messages for b in m.content if type(b) is ToolResult and b.tool_use_id == CALL)


@pytest.mark.parametrize("before", [True, False], ids=["event-first", "output-first"])
def test_failed_patch_is_an_error_result_with_a_badge(before: bool) -> None:
    data = _rollout(False, before)
    assert _result(data).is_error is True
    page = html.render(api.to_common(api.load(data, "codex")))
    tool = page[page.index(f'data-tool-use-id="{CALL}"') :]
    assert '<span class="tag err">error</span>' in tool[: tool.index("</summary>")]


def test_a_patch_that_applied_is_no_error() -> None:
    assert _result(_rollout(True, False)).is_error is not True
    assert _result(ROLLOUT.read_bytes()).is_error is not True


def test_conversion_to_claude_code_carries_the_error() -> None:
    written, _ = api.convert(_rollout(False, False), "claude_code", from_="codex")
    results = [
        block
        for line in written.files[written.main].splitlines()
        for block in (json.loads(line).get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("tool_use_id") == CALL
    ]
    assert results and results[0].get("is_error") is True
