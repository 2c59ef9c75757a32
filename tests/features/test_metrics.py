"""OTLP metrics from transcripts (docs/metrics.md), and their parity with the real
exporter: the pinned ``claude`` sends its own ``claude_code.token.usage`` to a receiver
on 127.0.0.1 while it writes the transcript that txcodec then derives the same metric
from."""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as pb  # the test extra has it
from opentelemetry.proto.metrics.v1 import metrics_pb2

from txcodec import api
from txcodec.cli import main
from txcodec.metrics import CLAUDE_METRIC
from txcodec.metrics import OWN_METRIC
from txcodec.metrics import since_ns
from txcodec.metrics import to_otlp_proto
from txcodec.metrics import token_points
from txcodec.model.common import Child
from txcodec.model.common import ChildLink
from txcodec.model.common import Conversation
from txcodec.model.common import Message
from txcodec.model.common import Meta
from txcodec.model.common import Usage

# Labels the exporter puts on claude_code.token.usage that no transcript carries.
# The exporter is expected (docs/metrics.md#what-cannot-be-known) to add the account, organisation, terminal, speed,
# effort and attribution
# labels; 2.1.332 sent user.id (account), terminal.type, effort and, on a subagent's
# points, agent.name (attribution: the subagent's type) of those here.
SEED_PREDICTED = {"user.id", "terminal.type", "effort", "agent.name"}
# Not named by the seed, observed on 2.1.332: which API provider and whether a custom
# base URL was set (a client setting, not in any record).
OBSERVED_NOT_IN_SEED = {"anthropic.provider", "anthropic.custom_base_url"}


def call(mid: str, ts: str, model: str, usage: Usage, **kw) -> Message:
    return Message("assistant", id=mid, timestamp=ts, model=model, usage=usage, stop_reason="end_turn", **kw)


def test_points_per_minute_type_model_and_source():
    child = Conversation(
        meta=Meta(source_harness="claude_code"),
        messages=[
            call("m2", "2026-01-01T00:00:30Z", "small", Usage(5, 1, 0, 0)),
            call("m1", "2026-01-01T00:00:10Z", "big", Usage(100, 100, 100, 100)),  # the main's call again: counted once
        ],
    )
    conv = Conversation(
        meta=Meta(id="S", source_harness="claude_code"),
        messages=[
            call("m1", "2026-01-01T00:00:10Z", "big", Usage(10, 2, 3, 4)),
            call("m3", "2026-01-01T00:00:50Z", "big", Usage(1, 1, 1, 1)),
            call("m4", "2026-01-01T00:01:00Z", "big", Usage(7, 0, 0, 0)),
            Message(
                "assistant", id="m5", timestamp="2026-01-01T00:01:00Z", model="big", usage_unverified=Usage(9, 9, 9, 9)
            ),
            Message(
                "assistant",
                id="m6",
                timestamp="2026-01-01T00:01:00Z",
                model="<synthetic>",
                synthetic=True,
                usage=Usage(1),
            ),
        ],
    )
    conv.children.append(Child(ChildLink("meta.toolUseId", agent_id="a1"), child))
    points = token_points([conv])
    got = {(p.start_ns, p.model, p.query_source, p.type): p.value for p in points}
    t0 = 1767225600 * 10**9
    assert got[(t0, "big", "main", "input")] == 11.0  # two calls of one minute, summed
    assert got[(t0, "big", "main", "cacheCreation")] == 4.0 and got[(t0, "big", "main", "cacheRead")] == 5.0
    assert got[(t0 + 60 * 10**9, "big", "main", "input")] == 7.0  # the next window
    assert got[(t0, "small", "subagent", "input")] == 5.0
    assert (t0, "big", "subagent", "input") not in got  # the duplicate call is counted once
    assert all(p.metric == CLAUDE_METRIC and p.end_ns - p.start_ns == 60 * 10**9 for p in points)
    assert sum(p.value for p in points if p.type == "input") == 23.0  # not the unverified nor synthetic


def test_other_harnesses_use_an_own_name_and_since_filters():
    conv = Conversation(
        meta=Meta(id="C", source_harness="codex"),
        messages=[
            call("r1", "2026-01-01T00:00:00Z", "gpt", Usage(3, 4)),
            call("r2", "2026-01-02T00:00:00Z", "gpt", Usage(5, 6)),
        ],
    )
    points = token_points([conv], since_ns=since_ns("2026-01-01T12:00:00Z"))
    assert {p.metric for p in points} == {OWN_METRIC}
    assert sum(p.value for p in points if p.type == "input") == 5.0
    with pytest.raises(ValueError, match="3min or 3mo"):  # one grammar: docs/cli.md#dates
        since_ns("3m")


def test_cli_writes_otlp_json_and_proto(tmp_path):
    session = next((Path(__file__).parents[2] / "golden" / "claude_code" / "streaming_duplication").glob("*.jsonl"))
    out = CliRunner().invoke(main, ["metrics", str(session)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    metric = data["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]
    assert (
        metric["name"] == CLAUDE_METRIC
        and metric["sum"]["aggregationTemporality"] == 1
        and metric["sum"]["isMonotonic"]
    )
    messages = api.to_common(api.load(session)).messages
    want = sum(m.usage.output_tokens for m in messages if m.role == "assistant" and m.usage is not msgspec.UNSET)
    assert want > 0
    got = sum(
        p["asDouble"]
        for p in metric["sum"]["dataPoints"]
        if {"key": "type", "value": {"stringValue": "output"}} in p["attributes"]
    )
    assert got == want
    proto = CliRunner().invoke(main, ["metrics", str(session), "--format", "otlp-proto"])
    request = pb.ExportMetricsServiceRequest()
    request.ParseFromString(proto.stdout_bytes)
    assert request.resource_metrics[0].scope_metrics[0].metrics[0].name == CLAUDE_METRIC


def _token_points_of(requests: list[bytes]) -> list[tuple[dict, float, int, bool, str]]:
    """(attributes with their value kinds, value, temporality, monotonic, value kind) per
    point of claude_code.token.usage in the captured requests."""
    out = []
    for body in requests:
        request = pb.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.name != CLAUDE_METRIC:
                        continue
                    assert metric.WhichOneof("data") == "sum"
                    for dp in metric.sum.data_points:
                        attrs = {
                            kv.key: (kv.value.WhichOneof("value"), getattr(kv.value, kv.value.WhichOneof("value")))
                            for kv in dp.attributes
                        }
                        out.append(
                            (
                                attrs,
                                dp.as_double if dp.WhichOneof("value") == "as_double" else dp.as_int,
                                metric.sum.aggregation_temporality,
                                metric.sum.is_monotonic,
                                dp.WhichOneof("value"),
                            )
                        )
    return out


def _sums(points) -> dict[tuple, float]:
    sums: dict[tuple, float] = defaultdict(float)
    for attrs, value, *_ in points:
        key = tuple(attrs[k][1] for k in ("session.id", "model", "query_source", "type"))
        sums[key] += value
    return dict(sums)


@pytest.mark.real_client
def test_parity_with_the_real_exporter():
    from txcodec.resume_check.claude_code import munge_cwd
    from txcodec.resume_check.claude_code import run_claude
    from txcodec.resume_check.mock.anthropic import AnthropicMock
    from txcodec.resume_check.mock.anthropic import Reply
    from txcodec.resume_check.mock.anthropic import text
    from txcodec.resume_check.mock.anthropic import tool_use
    from txcodec.resume_check.mock.server import MockServer
    from txcodec.resume_check.mock.server import Response
    from txcodec.resume_check.report import find_client

    if find_client("claude") is None:
        pytest.fail("claude is not installed (npm install --prefix clients)")
    captured: list[bytes] = []

    def receiver(request, server):
        if request.method == "POST" and request.path.split("?")[0] == "/v1/metrics":
            captured.append(request.body)
        return Response(200, b"", "application/x-protobuf")

    def usage(i, o, read, write):
        return {
            "input_tokens": i,
            "output_tokens": o,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
        }

    agent = tool_use(
        "Agent", {"description": "look", "prompt": "say hi", "subagent_type": "general-purpose"}, "toolu_agent"
    )
    agent.usage = usage(100, 7, 30, 11)
    sub = Reply([{"type": "text", "text": "hi from the subagent"}], usage=usage(50, 3, 0, 5))
    done = text("done")
    done.usage = usage(120, 9, 40, 0)
    with tempfile.TemporaryDirectory(prefix="txcodec-otlp-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        with MockServer(AnthropicMock([agent, sub, done], strict=False)) as model, MockServer(receiver) as rx:
            run = run_claude(
                ["-p", "use a subagent"],
                work,
                home,
                model,
                timeout=180,
                env={
                    "DISABLE_TELEMETRY": None,
                    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
                    "OTEL_METRICS_EXPORTER": "otlp",
                    "OTEL_LOGS_EXPORTER": "none",
                    "OTEL_TRACES_EXPORTER": "none",
                    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                    "OTEL_EXPORTER_OTLP_ENDPOINT": rx.url,
                    "OTEL_METRIC_EXPORT_INTERVAL": "500",
                },
            )
        assert run.exit_code == 0, run.stdout + run.stderr
        [path] = (home / ".claude" / "projects" / munge_cwd(str(work))).glob("*.jsonl")
        conv = api.to_common(api.load(path))
    assert captured, "the exporter sent no metrics request"
    theirs = _token_points_of(captured)
    # the runtime's auxiliary calls never reach a transcript (docs/metrics.md#what-is-derived): left out of the sums
    theirs = [p for p in theirs if p[0]["query_source"][1] != "auxiliary"]
    ours = _token_points_of([to_otlp_proto(token_points([conv]))])
    assert theirs and ours
    assert {p[0]["query_source"][1] for p in ours} == {"main", "subagent"}
    # temporality, monotonicity and the value type are the exporter's
    assert (
        {(t, m, k) for _, _, t, m, k in theirs}
        == {(t, m, k) for _, _, t, m, k in ours}
        == {(metrics_pb2.AGGREGATION_TEMPORALITY_DELTA, True, "as_double")}
    )
    # every label we write is one the exporter writes, with the same value type
    their_keys = {k: v[0] for p in theirs for k, v in p[0].items()}
    our_keys = {k: v[0] for p in ours for k, v in p[0].items()}
    assert all(their_keys.get(k) == kind for k, kind in our_keys.items()), (our_keys, their_keys)
    # and the ones we do not are exactly those a transcript cannot know
    assert set(their_keys) - set(our_keys) == SEED_PREDICTED | OBSERVED_NOT_IN_SEED
    # per-type token sums per model, session and source are equal
    assert _sums(theirs) == _sums(ours)
    # which scripted reply the main or the subagent got depends on timing; that both
    # sources have tokens does not
    assert all(_sums(ours)[(conv.meta.id, conv.meta.models[0], source, "input")] > 0 for source in ("main", "subagent"))


def test_cli_sends_to_an_otlp_http_receiver():
    from txcodec.resume_check.mock.server import MockServer
    from txcodec.resume_check.mock.server import Response

    session = next((Path(__file__).parents[2] / "golden" / "claude_code" / "streaming_duplication").glob("*.jsonl"))
    with MockServer(lambda request, server: Response(200, b"", "application/x-protobuf")) as rx:
        out = CliRunner().invoke(main, ["metrics", str(session), "--endpoint", rx.url])
        bodies = [
            (r.path, {k.lower(): v for k, v in r.headers.items()}.get("content-type"), r.body) for r in rx.requests
        ]
    assert out.exit_code == 0, out.output
    [(path, content_type, body)] = bodies
    assert (path, content_type) == ("/v1/metrics", "application/x-protobuf")
    request = pb.ExportMetricsServiceRequest()
    request.ParseFromString(body)
    assert request.resource_metrics[0].scope_metrics[0].metrics[0].name == CLAUDE_METRIC
    refused = CliRunner().invoke(main, ["metrics", str(session), "--endpoint", "ftp://x"])
    assert refused.exit_code == 1 and "Traceback" not in refused.output


@pytest.mark.real_client
def test_codex_exports_a_per_turn_histogram_not_this_metric():
    """Why Codex calls are derived under txcodec.token.usage: the pinned codex's
    OpenTelemetry option exports codex.turn.token_usage as a per-turn histogram with a
    token_type label and no session id, not per-call sums per session."""
    import os

    from txcodec.resume_check import codex as C
    from txcodec.resume_check.mock.responses import handler
    from txcodec.resume_check.mock.server import MockServer
    from txcodec.resume_check.mock.server import Response
    from txcodec.resume_check.process import run_client

    captured: list[bytes] = []

    def receiver(request, server):
        if request.path.split("?")[0] == "/v1/metrics":
            captured.append(request.body)
        return Response(200, b"", "application/x-protobuf")

    with C.Sandbox() as box, MockServer(receiver) as rx, MockServer(handler([])) as model:
        config = C.CONFIG.format(
            model=box.model,
            provider=box.provider,
            provider_table=C.PROVIDER.format(provider=box.provider, url=model.url),
        )
        otlp = '{{ otlp-http = {{ endpoint = "{}/v1/{}", protocol = "binary" }} }}'
        config += (
            f'[otel]\nenvironment = "test"\nexporter = {otlp.format(rx.url, "logs")}\n'
            f"metrics_exporter = {otlp.format(rx.url, 'metrics')}\n"
        )
        (box.home / "config.toml").write_text(config)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(box.root / "home"),
            "CODEX_HOME": str(box.home),
            "MOCK_API_KEY": "dummy",
            "OPENAI_API_KEY": "dummy",
            "NO_COLOR": "1",
            "RUST_LOG": "error",
        }
        code, _, err = run_client(
            [str(C.codex_binary()), "exec", "--skip-git-repo-check", "--json", "hi"], box.cwd, env, 180, "codex"
        )
    assert code == 0, err[-2000:]
    metrics = {}
    for body in captured:
        request = pb.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        metrics.update({m.name: m for rm in request.resource_metrics for sm in rm.scope_metrics for m in sm.metrics})
    usage = metrics["codex.turn.token_usage"]
    assert usage.WhichOneof("data") == "histogram"
    keys = {kv.key for dp in usage.histogram.data_points for kv in dp.attributes}
    types = {
        kv.value.string_value for dp in usage.histogram.data_points for kv in dp.attributes if kv.key == "token_type"
    }
    assert "token_type" in keys and not keys & {"session.id", "session_id", "conversation.id", "thread_id"}
    assert types == {"input", "cached_input", "cache_write_input", "output", "reasoning_output", "total"}
    assert not [name for name in metrics if name.endswith("token.usage")]


def test_otlp_json_is_protobuf_s_own_mapping_without_protobuf():
    """Issue 34.5: OTLP/JSON is written without protobuf, and is what protobuf's JSON
    mapping of the same request gives."""
    from google.protobuf.json_format import MessageToJson

    from txcodec.metrics import export_request
    from txcodec.metrics import to_otlp_json

    session = next((Path(__file__).parents[2] / "golden" / "claude_code" / "streaming_duplication").glob("*.jsonl"))
    points = token_points([api.to_common(api.load(session))])
    assert points
    for some in (points, []):
        want = json.loads(MessageToJson(export_request(some), use_integers_for_enums=True))
        assert json.loads(to_otlp_json(some)) == want
