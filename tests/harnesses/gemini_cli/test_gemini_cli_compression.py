"""Gemini CLI chat compression: the mock answers the compression calls by what they are,
and the recorded ``compression`` scenario (tests/support/scenarios/gemini_cli.py) pins what the
file holds after a compression and what a resume of it sends. No CLI runs here."""

from __future__ import annotations

import json

import pytest
from support.paths import ROOT
from support.scenarios.gemini_cli import ACK
from support.scenarios.gemini_cli import SNAPSHOT

from txcodec import api
from txcodec.model.common import Text
from txcodec.model.loss import LossReport
from txcodec.resume_check import gemini_cli as g
from txcodec.resume_check.mock.server import Request
from txcodec.resume_check.report import find_client

SCENARIO = ROOT / "golden" / "gemini_cli" / "scenarios" / "compression"


def _request(method: str, instruction: str | None, text: str = "hi") -> Request:
    body = {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    if instruction is not None:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": instruction}]}
    suffix = "?alt=sse" if method == "streamGenerateContent" else ""
    return Request("POST", f"/v1beta/models/{g.MODEL}:{method}{suffix}", {}, json.dumps(body).encode())


def _said(response) -> str:
    if response.chunks is not None:
        events = [json.loads(c.decode().split("data: ", 1)[1]) for c in response.chunks if b"data: " in c]
    else:
        events = [json.loads(response.body)]
    return "".join(p.get("text", "") for e in events for c in e.get("candidates", []) for p in c["content"]["parts"])


COMPRESSOR = f"You are a specialized system component responsible for {g.COMPRESSION_MARKER}."


def test_compression_calls_get_the_summary_however_many_and_leave_the_turn_script_alone():
    handle = g.handler([g.text("turn one"), g.text("turn two")], summary=g.text("SUMMARY"))
    said = [
        _said(handle(_request("generateContent", COMPRESSOR), None)),
        _said(handle(_request("generateContent", COMPRESSOR, "Critically evaluate"), None)),
        _said(handle(_request("streamGenerateContent", None), None)),
        _said(handle(_request("streamGenerateContent", COMPRESSOR), None)),  # on the stream endpoint too
        _said(handle(_request("streamGenerateContent", "You are an interactive CLI agent"), None)),
        _said(handle(_request("generateContent", "Decide who speaks next"), None)),  # other utility calls: unchanged
    ]
    assert said == ["SUMMARY", "SUMMARY", "turn one", "SUMMARY", "turn two", "{}"]


def test_without_a_summary_the_handler_plays_its_script_in_order_as_before():
    handle = g.handler([g.text("first")])
    assert _said(handle(_request("streamGenerateContent", COMPRESSOR), None)) == "first"
    assert _said(handle(_request("generateContent", COMPRESSOR), None)) == "{}"
    assert not g.is_compression(Request("POST", "/v1beta/models/m:generateContent", {}, b"not json"))


def test_the_marker_and_the_acknowledgement_are_the_pinned_clients_own_text():
    binary = find_client("gemini")
    if binary is None:
        pytest.skip("the gemini CLI is not installed (npm install --prefix clients)")
    bundle = binary.resolve().parent
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in bundle.glob("*.js"))
    assert g.COMPRESSION_MARKER in text
    assert f'parts: [{{ text: "{ACK}" }}]' in text


def _recorded():
    if not (SCENARIO / "scenario.json").is_file():
        pytest.skip("the compression scenario is not recorded (python tests/support/scenarios gemini_cli/compression)")
    return json.loads((SCENARIO / "scenario.json").read_text())


def test_a_resume_after_compression_sends_the_summary_and_what_came_after_only():
    meta = _recorded()
    sent = json.dumps(meta["resumed"])
    assert meta["resumed"][0] == ["user", [["text", SNAPSHOT]]]
    assert meta["resumed"][1] == ["assistant", [["text", ACK]]]
    assert [m[1][0][1] for m in meta["resumed"][2:]] == ["turn 3", "Answer 3."]
    assert "Answer 1." not in sent and "Answer 2." not in sent and "turn 1" not in sent


def test_the_reader_takes_the_history_the_last_compression_left():
    meta = _recorded()
    loss = LossReport()
    conversation = api.to_common(api.load(SCENARIO / meta["main"], "gemini_cli"), loss)
    texts = [b.text for m in conversation.messages for b in m.content if isinstance(b, Text)]
    assert texts[1:] == [SNAPSHOT, ACK, "turn 3", "Answer 3."]
    assert texts[0].startswith("<session_context>")
    # the turns before it are still lines of the file, but not of the history
    assert b"Answer 1. fact0=0" in (SCENARIO / meta["main"]).read_bytes()
