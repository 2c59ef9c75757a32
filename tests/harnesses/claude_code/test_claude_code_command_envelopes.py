"""Command envelopes: parse only whole-markup bodies; the escape is a bijection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from txcodec.harnesses.claude_code import envelopes as env

# Bodies as the real clients wrote them (corpus: spotter short.jsonl / tool_heavy.jsonl,
# claude-code-viewer 1af7fc5e, claude-code-log edge_cases).
PARSE = [
    (
        "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
        "            <command-args></command-args>",
        {"command-name": "/model", "command-message": "model", "command-args": ""},
    ),
    (
        "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>",
        {"command-message": "init is analyzing your codebase…", "command-name": "/init"},
    ),
    (
        "<local-command-stdout>Reconnected to tidewave.</local-command-stdout>",
        {"local-command-stdout": "Reconnected to tidewave."},
    ),
    (
        "<local-command-stdout></local-command-stdout><local-command-stderr>boom</local-command-stderr>",
        {"local-command-stdout": "", "local-command-stderr": "boom"},
    ),
    ("<local-command-caveat>Caveat: x</local-command-caveat>", {"local-command-caveat": "Caveat: x"}),
    (
        "<local-command-stdout>a <\\/local-command-stdout> b</local-command-stdout>",
        {"local-command-stdout": "a </local-command-stdout> b"},
    ),
    # not entirely markup: stays plain text
    ("please run <command-name>/x</command-name>", None),
    ("<command-name>/x</command-name> and more", None),
    ("<command-name>/x</command-name><command-name>/y</command-name>", None),
    ("<bogus>/x</bogus>", None),
    ("", None),
    ("   ", None),
]


@pytest.mark.parametrize("body, elements", PARSE)
def test_parse(body, elements):
    got = env.parse_envelope(body)
    assert (got.elements if got else None) == elements


def test_render_matches_client_layout():
    # the 2.1.x client's layout, byte for byte (spotter short.jsonl line 14)
    assert env.render_command("/model", message="model", args="") == (
        "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
        "            <command-args></command-args>"
    )
    assert env.render_output("hi") == "<local-command-stdout>hi</local-command-stdout>"


@pytest.mark.parametrize(
    "raw, escaped",
    [("</x>", "<\\/x>"), ("<\\/x>", "<\\\\/x>"), ("<\\x", "<\\x"), ("a<b", "a<b"), ("<<//", "<<\\//")],
)
def test_escape_table(raw, escaped):
    assert env.escape(raw) == escaped
    assert env.unescape(escaped) == raw


def test_strip_ansi():
    assert env.strip_ansi("Kept model as \x1b[1mDefault (recommended)\x1b[22m") == "Kept model as Default (recommended)"
    assert env.strip_ansi("\x1b]0;title\x07ok") == "ok"


_tricky = st.lists(st.sampled_from(["<", "\\", "/", "a", ">", "command-args", "local-command-stdout", " ", "\n"])).map(
    "".join
)


@settings(max_examples=500, deadline=None)
@given(_tricky | st.text())
def test_escape_is_bijective_and_payloads_survive(s):
    e = env.escape(s)
    assert "</" not in e
    assert env.unescape(e) == s
    if "</" not in s:
        assert env.escape(env.unescape(s)) == s
    parsed = env.parse_envelope(env.render_command("/x", message=s, args=s))
    assert parsed is not None and parsed.elements == {"command-name": "/x", "command-message": s, "command-args": s}
    out = env.parse_envelope(env.render_output(s, s))
    assert out is not None and out.get(env.STDOUT) == s and out.get(env.STDERR) == s
