"""Shared by the Qwen Code and pi tests: golden comparison and a request view."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec

from txcodec.kit import registry
from txcodec.kit.changes import to_json
from txcodec.model.common import Image
from txcodec.model.common import Text
from txcodec.model.common import Thinking
from txcodec.model.common import ToolResult
from txcodec.model.common import ToolUse

# pi's openai-completions provider sends a tool result's images as a user message with
# this text after the tool messages (pi-ai ``convertMessages``)
PI_IMAGE_NOTE = "Attached image(s) from tool result:"
from txcodec.kit.registry import WriteOptions
from txcodec.model.loss import LossReport
from txcodec.model.native import decode_session

REGEN = bool(os.environ.get("TXCODEC_REGEN_GOLDEN"))


def session_of(harness: str, path: Path):
    return decode_session(path.read_bytes(), registry.get(harness).codec, harness, path)


def pretty(conversation) -> bytes:
    return json.dumps(json.loads(to_json(conversation)), indent=1, ensure_ascii=False).encode() + b"\n"


def check_golden(harness: str, case: Path) -> None:
    """``session.jsonl`` reads to ``common.json``, which writes to ``written.jsonl``."""
    session = session_of(harness, case / "session.jsonl")
    assert session.dump() == (case / "session.jsonl").read_bytes()
    conversation = registry.get(harness).read(session, LossReport())
    written = registry.get(harness).write(conversation, LossReport(), WriteOptions())
    outputs = {"common.json": pretty(conversation), "written.jsonl": written.files[written.main]}
    for name, data in outputs.items():
        if REGEN:
            (case / name).write_bytes(data)
        assert (case / name).read_bytes() == data, f"{case.name}/{name} differs (TXCODEC_REGEN_GOLDEN=1 to update)"


def view(messages) -> list[tuple[str, list[tuple]]]:
    """What a request carries, for comparing histories across clients: consecutive
    same-role messages merged, thinking left out (clients drop or re-render it), tool
    results as their joined text and error flag."""
    out: list[tuple[str, list[tuple]]] = []
    for message in messages:
        blocks: list[tuple] = []
        for block in message.content:
            if isinstance(block, Thinking):
                continue
            if isinstance(block, Text):
                if block.text != PI_IMAGE_NOTE:
                    blocks.append(("text", block.text))
            elif isinstance(block, Image):
                blocks.append(("image", block.media_type, block.data))
            elif isinstance(block, ToolUse):
                blocks.append(("tool_use", block.id, block.name, block.input))
            elif isinstance(block, ToolResult):
                content = block.content
                images = []
                if not isinstance(content, str):
                    images = [("image", b.media_type, b.data) for b in content if isinstance(b, Image)]
                    content = "\n".join(b.text for b in content if isinstance(b, Text))
                blocks.append(("tool_result", block.tool_use_id, content))
                blocks.extend(images)
            else:
                blocks.append((block.__struct_config__.tag, msgspec.to_builtins(block)))
        # tool results first, as every client sends them, then the rest of the turn
        blocks.sort(key=lambda b: b[0] != "tool_result")
        if out and out[-1][0] == message.role:
            out[-1][1].extend(blocks)
        else:
            out.append((message.role, blocks))
    return [m for m in out if m[1]]
