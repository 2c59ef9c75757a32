"""What a real client sent when it resumed a file, reduced to what can be compared
across runs (``resumed_view``), and the texts a conversation holds (``facts_of``) for
checking that a conversion carried them to another client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from txcodec.model.common import Command
from txcodec.model.common import Document
from txcodec.model.common import Image
from txcodec.model.common import Message
from txcodec.model.common import RawBlock
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse
from txcodec.resume_check.mock.anthropic import api_block


def _json(value: Any) -> Any:
    """Tuples become lists, as after a JSON round trip (the recorded views are JSON)."""
    return json.loads(json.dumps(value, default=msgspec.to_builtins))


def _generic(messages: list[Message], injected=lambda text: False, once: bool = False) -> list:
    """Consecutive same-role messages merged; the client's own injected texts left out;
    tool results first within a turn (every client sends them so); with ``once``, a
    result repeated for the same call kept once."""
    out: list[tuple[str, list]] = []
    seen: set[str] = set()
    for message in messages:
        blocks: list = []
        for block in message.content:
            if isinstance(block, Text):
                if not injected(block.text):
                    blocks.append(("text", block.text))
            elif isinstance(block, Thinking):
                if block.thinking:
                    blocks.append(("thinking", block.thinking))
            elif isinstance(block, ToolUse):
                blocks.append(("tool_use", block.id, block.name, block.input))
            elif isinstance(block, ToolResult):
                if once and block.tool_use_id in seen:
                    continue
                seen.add(block.tool_use_id)
                content = block.content
                if not isinstance(content, str):
                    content = [msgspec.to_builtins(b) for b in content]
                blocks.append(("tool_result", block.tool_use_id, content))
            else:
                blocks.append((block.__struct_config__.tag, msgspec.to_builtins(block)))
        blocks.sort(key=lambda b: b[0] != "tool_result")
        if out and out[-1][0] == message.role:
            out[-1][1].extend(blocks)
        elif blocks:
            out.append((message.role, blocks))
    return out


def _gemini_injected(text: str) -> bool:
    return text.lstrip().startswith("<session_context>")


def _qwen_injected(text: str) -> bool:
    return text.lstrip().startswith("<system-reminder>")


PASSTHROUGH = "internal_chat_message_metadata_passthrough"


def resumed_view(harness: str, report) -> Any:
    """The comparable view of ``report.sent`` for ``harness`` (Codex: see
    :func:`codex_input`, which keeps the raw items)."""
    if harness in ("claude_code", "stream_json"):
        from txcodec.resume_check.claude_code import comparable

        return _json(comparable(report.sent, caveats=True))
    if harness == "codex":
        # every item as sent, but for its ``id`` and ``status`` (Common has no slot for a
        # Codex item's id, and the writer leaves both out: the model does not read them)
        # and the per-item metadata 0.171 sends to the built-in openai provider only,
        # which Common does not carry (docs/codex.md; the remote_compact scenario)
        items = getattr(report, "raw_input", None) or []
        return _json(
            [
                {k: v for k, v in i.items() if k not in ("id", "status", PASSTHROUGH)} if isinstance(i, dict) else i
                for i in items
            ]
        )
    if harness == "gemini_cli":
        # Gemini CLI 0.x resends the results of its own sessions two or three times
        # (pinned in tests/harnesses/gemini_cli/test_gemini_cli_real.py); ours once: compared once per call
        return _json(_generic(report.sent, _gemini_injected, once=True))
    if harness == "qwen_code":
        return _json(_generic(report.sent, _qwen_injected))
    return _json(_generic(report.sent))


def _qwen_check_resume(path: Path):
    """Qwen Code's resume check (:func:`txcodec.resume_check.qwen_code.check_resume`), the
    report also carrying ``everything``: the history sent with the ``<system-reminder>``
    parts the report leaves out (Qwen's own skills and date, but also where another
    client's context is written)."""
    from txcodec.core.atomic import write_atomic
    from txcodec.core.ids import check_id
    from txcodec.core.zst import read_bytes
    from txcodec.harnesses.qwen_code.store import session_relpath
    from txcodec.resume_check.chat_cli import resume_report
    from txcodec.resume_check.qwen_code import Qwen
    from txcodec.resume_check.qwen_code import _session_id
    from txcodec.resume_check.qwen_code import client_version
    from txcodec.resume_check.qwen_code import injected
    from txcodec.resume_check.qwen_code import rewrite_cwd
    from txcodec.resume_check.report import ResumeReport

    class QwenReport(ResumeReport):
        everything: list = []

    data = read_bytes(path)
    session_id = check_id(_session_id(data) or path.stem, f"{path}: session id")
    with Qwen() as box:
        write_atomic(box.store / session_relpath(str(box.cwd), session_id), rewrite_cwd(data, str(box.cwd)))
        run = box.qwen("continue", resume=session_id)
        report = resume_report(
            "qwen_code", client_version(), session_id, run, run.history("continue", injected), "qwen", output=run.stderr
        )
        return QwenReport(**msgspec.structs.asdict(report), everything=run.history("continue"))


def sent_texts(report) -> str:
    """Every text the resumed client's first request carried (:func:`haystack`), its
    injected context included (Qwen's report keeps it apart: ``everything``)."""
    return haystack(report.everything if report.harness == "qwen_code" else report.sent)


def claude_sent_texts(path: Path) -> str:
    """Every text of the first request the real claude sends when it resumes ``path``, its
    ``role:"system"`` entries included (the resume check's report leaves them out: they are
    the client's context, not the conversation)."""
    import tempfile

    from txcodec.resume_check.claude_code import place_session
    from txcodec.resume_check.claude_code import run_claude
    from txcodec.resume_check.claude_code import session_id_for
    from txcodec.resume_check.mock.anthropic import AnthropicMock
    from txcodec.resume_check.mock.server import MockServer

    with tempfile.TemporaryDirectory(prefix="claude-sent-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        sid = session_id_for(path)
        place_session(path, home, work, sid)
        mock = AnthropicMock(strict=True)
        with MockServer(mock) as server:
            run = run_claude(["-p", "--resume", sid, "continue"], work, home, server)
            bodies = [
                r.json() for r in server.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"
            ]
    assert run.exit_code == 0 and bodies and not mock.rejected, (run.stderr[-800:], mock.rejected)
    texts = []
    for message in bodies[0]["messages"]:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            texts.extend(_flat(api_block(block)) if isinstance(block, dict) else [])
    return "\n".join(texts)


def unseen(seen: list[str], texts: str) -> list[str]:
    """Of ``seen`` (texts in order), those ``texts`` lacks after the one before them."""
    missing, at = [], 0
    for text in seen:
        found = texts.find(text, at)
        if found < 0:
            missing.append(text)
        else:
            at = found + len(text)
    return missing


def _codex_report():
    from txcodec.resume_check.report import ResumeReport

    class CodexReport(ResumeReport):
        raw_input: list = []

    return CodexReport


def check_resume(harness: str, path: Path, like: Path | None = None):
    """The harness's real-client resume check; for Codex the report also carries
    ``raw_input``: the history items of the first request as sent (ids dropped: codex
    sends none for history, but a differing one would only be an id). ``like``: the
    original rollout, whose provider is then the user's own (our file names none, and
    0.171 sends some fields, such as ``internal_chat_message_metadata_passthrough``, to
    the built-in ``openai`` provider only)."""
    if harness == "qwen_code":
        return _qwen_check_resume(path)
    if harness != "codex":
        from txcodec.kit import registry

        return registry.get(harness).check_resume(path)
    from txcodec.api import read_bytes
    from txcodec.resume_check.codex import Sandbox
    from txcodec.resume_check.codex import _carries_history
    from txcodec.resume_check.codex import _provider_of
    from txcodec.resume_check.codex import client_version
    from txcodec.resume_check.codex import codex_binary
    from txcodec.resume_check.codex import history_items
    from txcodec.resume_check.codex import resume
    from txcodec.resume_check.mock.responses import input_to_common

    CodexReport = _codex_report()

    data = read_bytes(path)
    with Sandbox(provider=(_provider_of(read_bytes(like)) if like else None) or "mock") as box:
        session_id, run = resume(box, data)
        first = run.inputs[0] if run.inputs else []
        items = history_items(first, "continue")
        rejected = [] if _carries_history(first, "continue") else ["codex started a new session"]
        return CodexReport(
            "codex",
            client_version(codex_binary()),
            session_id,
            run.exit_code,
            len(run.requests),
            input_to_common(items),
            rejected,
            run.stderr[-4000:],
            raw_input=items,
        )


# --- what a conversation holds -------------------------------------------------------


def _flat(block: Any) -> list[str]:
    if isinstance(block, Text):
        return [block.text]
    if isinstance(block, Thinking):
        return [block.thinking] if block.thinking else []
    if isinstance(block, ToolUse):
        return [json.dumps(block.input, ensure_ascii=False, sort_keys=True), block.name]
    if isinstance(block, ToolResult):
        return [block.content] if isinstance(block.content, str) else [t for b in block.content for t in _flat(b)]
    if isinstance(block, Command):
        return [block.as_text()]
    if isinstance(block, (Image, Document)):
        return [block.data] if isinstance(block.data, str) else []
    if isinstance(block, RawBlock):
        return [json.dumps(block.value, ensure_ascii=False)]
    return []


def haystack(messages: list[Message]) -> str:
    """Every text a request carried, joined (a fact reached it when it is a part)."""
    return "\n".join(t for m in messages for b in m.content for t in _flat(b))


def facts_of(messages: list[Message]) -> list[tuple[str, str]]:
    """The conversation's facts to carry: ``(kind, text)`` for each user and assistant
    text, tool call (its name), tool result text and thinking text, in order."""
    out = []
    for m in messages:
        for b in m.content:
            if isinstance(b, Text) and b.text.strip():
                out.append((f"{m.role}-text", b.text.strip()))
            elif isinstance(b, Thinking) and b.thinking.strip():
                out.append(("thinking", b.thinking.strip()))
            elif isinstance(b, ToolUse):
                out.append(("tool-call", b.name))
            elif isinstance(b, ToolResult):
                text = (
                    b.content
                    if isinstance(b.content, str)
                    else "\n".join(x.text for x in b.content if isinstance(x, Text))
                )
                if text.strip():
                    out.append(("tool-result", text.strip()))
    return out
