"""The mock Chat Completions API: wire format, strict rules, request -> Common."""

from __future__ import annotations

import json
import urllib.request

from txcodec.model.common import Text
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.resume_check.mock.openai_chat import ChatMock
from txcodec.resume_check.mock.openai_chat import request_messages
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call
from txcodec.resume_check.mock.openai_chat import violations
from txcodec.resume_check.mock.server import MockServer


def _post(url: str, body: dict) -> tuple[int, bytes]:
    req = urllib.request.Request(
        url + "/v1/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_stream_and_plain_replies():
    with MockServer(ChatMock([tool_call("read", {"path": "a"}, say="hi"), text("done")])) as s:
        status, raw = _post(s.url, {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]})
        assert status == 200
        events = [line[6:] for line in raw.decode().split("\n") if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        calls = [c["choices"][0]["delta"]["tool_calls"] for c in chunks if "tool_calls" in c["choices"][0]["delta"]]
        assert calls[0][0]["function"] == {"name": "read", "arguments": '{"path": "a"}'}
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["usage"]["total_tokens"] == 25
        status, raw = _post(s.url, {"model": "m", "messages": [{"role": "user", "content": "x"}]})
        body = json.loads(raw)
        assert body["choices"][0]["message"]["content"] == "done" and body["choices"][0]["finish_reason"] == "stop"


def test_strict_mode_rejects_unpaired_tool_calls():
    body = {
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "user", "content": "y"},
            {"role": "tool", "tool_call_id": "zz", "content": "r"},
        ]
    }
    problems = violations(body)
    assert any("c1" in p for p in problems) and any("zz" in p for p in problems)
    with MockServer(ChatMock()) as s:
        status, _ = _post(s.url, body)
        assert status == 400 and s.state["rejected"]


def test_request_messages_to_common():
    body = {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "q"}]},
            {
                "role": "assistant",
                "content": "a",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"k": 1}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "user", "content": "next"},
        ]
    }
    out = request_messages(body)
    assert [m.role for m in out] == ["user", "assistant", "user"]
    assert out[1].content == [Text("a"), ToolUse("c1", "f", {"k": 1})]
    assert out[2].content == [ToolResult("c1", "r"), Text("next")]
