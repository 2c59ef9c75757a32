"""schemas/common.schema.json is generated from the code; Common JSON round-trips."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from txcodec.kit.changes import to_json
from txcodec.model import common
from txcodec.model import common_json
from txcodec.model.schema import SCHEMA_PATH
from txcodec.model.schema import render


def test_schema_file_matches_code():
    assert SCHEMA_PATH.read_bytes() == render(), "schema drifted: run `python -m txcodec.model.schema`"


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_opt_text = st.one_of(st.just(msgspec.UNSET), st.text(max_size=10))


def _builds(cls, **kw):
    return st.builds(cls, **kw)


_leaf_blocks = st.one_of(
    _builds(common.Text, text=st.text(max_size=20)),
    _builds(common.Thinking, thinking=st.text(max_size=10), signature=_opt_text, encrypted=_opt_text),
    _builds(
        common.ToolUse,
        id=st.text(min_size=1, max_size=8),
        name=st.text(min_size=1, max_size=8),
        input=_json,
        kind=st.sampled_from(["generic", "shell_exec", "read_file"]),
    ),
    _builds(common.Image, media_type=_opt_text, data=_opt_text, url=_opt_text, file_id=_opt_text),
    _builds(common.Document, media_type=_opt_text, data=_opt_text, url=_opt_text, title=_opt_text),
    _builds(common.Artifact, path=st.text(min_size=1, max_size=10), description=_opt_text),
    _builds(
        common.Command,
        name=st.text(max_size=8),
        args=_opt_text,
        message=_opt_text,
        output=_opt_text,
        stderr=_opt_text,
        contents=_opt_text,
    ),
    _builds(common.RawBlock, source_type=st.text(max_size=8), value=_json),
    _builds(common.ServerToolUse, id=st.text(max_size=8), name=st.text(max_size=8), input=_json),
    _builds(common.WebSearchToolResult, tool_use_id=st.text(max_size=8), content=_json),
    _builds(common.WebFetchToolResult, tool_use_id=st.text(max_size=8), content=_json),
    _builds(common.Context, kind=st.text(max_size=8), text=_opt_text, role=_opt_text, source=_opt_text, value=_json),
)
_blocks = st.one_of(
    _leaf_blocks,
    _builds(
        common.ToolResult,
        tool_use_id=st.text(max_size=8),
        content=st.one_of(st.text(max_size=10), st.lists(_leaf_blocks, max_size=2)),
        is_error=st.one_of(st.none(), st.booleans()),
        structured=st.one_of(st.just(msgspec.UNSET), _json),
        persisted_output=_opt_text,
    ),
)
_usage = st.one_of(
    st.just(msgspec.UNSET),
    _builds(common.Usage, input_tokens=st.integers(0, 10**6), output_tokens=st.integers(0, 10**6)),
)
_message = _builds(
    common.Message,
    role=st.sampled_from(["user", "assistant"]),
    content=st.lists(_blocks, max_size=4),
    id=_opt_text,
    model=_opt_text,
    stop_reason=st.one_of(st.just(msgspec.UNSET), st.none(), st.text(max_size=8)),
    usage=_usage,
    usage_unverified=_usage,
    synthetic=st.booleans(),
    compact_summary=st.booleans(),
    interrupted=st.booleans(),
    api_error=st.booleans(),
    meta=st.booleans(),
    origin=_opt_text,
    source_ids=st.lists(st.text(max_size=6), max_size=2),
    extra=st.dictionaries(st.text(max_size=5), _json, max_size=2),
)
_meta = _builds(common.Meta, id=_opt_text, title=_opt_text, models=st.lists(st.text(max_size=5), max_size=2))
_epoch = _builds(
    common.Epoch,
    start=st.integers(0, 9),
    boundary_id=_opt_text,
    logical_parent_id=st.one_of(st.just(msgspec.UNSET), st.none(), st.text(max_size=5)),
)
_conversation = st.recursive(
    _builds(
        common.Conversation, meta=_meta, messages=st.lists(_message, max_size=3), epochs=st.lists(_epoch, max_size=1)
    ),
    lambda inner: _builds(
        common.Conversation,
        meta=_meta,
        messages=st.lists(_message, max_size=2),
        children=st.lists(
            _builds(
                common.Child,
                link=_builds(common.ChildLink, via=st.sampled_from(["none", "journal"]), agent_id=_opt_text),
                conversation=inner,
                spawn_depth=st.integers(1, 2),
            ),
            max_size=2,
        ),
    ),
    max_leaves=3,
)


@settings(max_examples=200, deadline=None)
@given(_conversation)
def test_common_json_roundtrip_is_identity(conv):
    data = to_json(conv)
    back = common_json.from_json(data)
    assert back == conv
    assert to_json(back) == data
