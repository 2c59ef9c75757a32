"""The mock Messages API streams the API's server tools as the API does: a ``server_tool_use``
opens with an empty input that ``input_json_delta`` events fill (as for ``tool_use``; the SDK's
MessageStream applies them to both), its result block comes whole, and the usage counts the
server tool calls. Rebuilding the stream gives the reply the plain request gets."""

from __future__ import annotations

import json
import urllib.request

from txcodec.resume_check.mock.anthropic import AnthropicMock
from txcodec.resume_check.mock.anthropic import web_fetch
from txcodec.resume_check.mock.anthropic import web_search
from txcodec.resume_check.mock.server import MockServer

BODY = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "search"}]}


def _post(url: str, body: dict) -> bytes:
    request = urllib.request.Request(
        url + "/v1/messages", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def _rebuilt(raw: bytes) -> tuple[dict, list[dict]]:
    events = [json.loads(line[6:]) for line in raw.decode().split("\n") if line.startswith("data: ")]
    message, partial = None, {}
    for event in events:
        if event["type"] == "message_start":
            message = json.loads(json.dumps(event["message"]))
        elif event["type"] == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            partial[event["index"]] = partial.get(event["index"], "") + event["delta"]["partial_json"]
        elif event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
            message["content"][event["index"]]["text"] += event["delta"]["text"]
        elif event["type"] == "message_delta":
            message["stop_reason"] = event["delta"]["stop_reason"]
            message["usage"].update(event["usage"])
    for index, text in partial.items():
        message["content"][index]["input"] = json.loads(text)
    return message, events


def test_server_tools_stream_as_the_api_streams_them():
    replies = [web_search("q", [("https://e.x/a", "A")], "Found."), web_fetch("https://e.x/a", "page", "Read.")]
    with MockServer(AnthropicMock(list(replies))) as server:
        streamed = [_rebuilt(_post(server.url, {**BODY, "stream": True}))]
    with MockServer(AnthropicMock(list(replies))) as server:
        plain = json.loads(_post(server.url, BODY))
    ((message, events),) = streamed
    opened = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in opened] == ["server_tool_use", "web_search_tool_result", "text"]
    assert opened[0]["input"] == {} and opened[1]["content"][0]["url"] == "https://e.x/a"  # the result comes whole
    assert message["content"] == plain["content"] and message["stop_reason"] == plain["stop_reason"] == "end_turn"
    assert message["content"][0]["input"] == {"query": "q"}
    assert message["usage"]["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert "server_tool_use" not in events[0]["message"]["usage"]  # counted once the reply ends
