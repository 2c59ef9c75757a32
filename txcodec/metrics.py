"""OTLP metrics derived from transcripts (docs/metrics.md).

Claude Code's own exporter sends ``claude_code.token.usage``; this derives the same
metric from what the transcript holds, under the same name, so a receiver holds one
name whichever produced the points (docs/metrics.md#what-is-derived):

* one call is one assistant message with a ``usage``: its last fragment's, only when
  it finished (the reader's rule, shared with ``txcodec usage``), counted once however
  many files its records reach (by message id);
* ``type`` is input / output / cacheRead / cacheCreation, ``model`` the message's model,
  ``session.id`` the session, ``query_source`` main for the session's transcript and
  subagent for a child's;
* points are monotonic delta sums per minute (windows never overlap), doubles.

What the exporter adds and a transcript cannot know (account, organisation, terminal,
provider, effort and speed labels; cost, latency, active time, lines of code; the tokens
of its auxiliary calls) is not invented. Other harnesses' calls are derived the same way
under ``txcodec.token.usage``: their clients export no such metric (Codex 0.171 exports a
per-turn histogram without a session id; docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from msgspec import UNSET

from . import __version__
from .core.dates import parse_timestamp
from .core.errors import InputError
from .core.errors import TxcodecError
from .core.errors import describe
from .model.common import Conversation

CLAUDE_METRIC = "claude_code.token.usage"
OWN_METRIC = "txcodec.token.usage"
DESCRIPTION = "Number of tokens used"  # the exporter's own description and unit
UNIT = "tokens"
WINDOW_NS = 60 * 1_000_000_000
# the exporter's type label -> the Usage field
TYPES = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cacheRead", "cache_read_input_tokens"),
    ("cacheCreation", "cache_creation_input_tokens"),
)


class MissingExtra(TxcodecError, ImportError):
    """The ``metrics`` extra (opentelemetry-proto) is not installed."""


@dataclass(frozen=True)
class Point:
    """One delta sum: the tokens of one type, model, session and source in one minute."""

    metric: str
    start_ns: int
    end_ns: int
    session_id: str
    model: str
    query_source: str
    type: str
    value: float

    @property
    def attributes(self) -> dict[str, str]:
        return {
            "session.id": self.session_id,
            "model": self.model,
            "query_source": self.query_source,
            "type": self.type,
        }


def _ns(timestamp: Any) -> int | None:
    when = parse_timestamp(timestamp) if isinstance(timestamp, str) else None
    return None if when is None else int(when.timestamp() * 1_000_000) * 1000


def since_ns(text: str, timezone: str | None = None, now: datetime | None = None) -> int:
    """``--since`` as nanoseconds since the epoch, in the one grammar of
    :mod:`txcodec.core.dates` (``2w``, ``today``, an ISO time)."""
    from .core.dates import parse_when

    return int(parse_when(text, now=now, tz=timezone).timestamp() * 1_000_000) * 1000


def _calls(conv: Conversation, source: str, seen: set[str]) -> Iterator[tuple[str, Any]]:
    for m in conv.messages:
        if m.role != "assistant" or m.synthetic or m.usage is UNSET:
            continue
        if isinstance(m.id, str):
            if m.id in seen:
                continue
            seen.add(m.id)
        yield source, m
    for child in conv.children:
        yield from _calls(child.conversation, "subagent", seen)


def _metric_of(harness: Any) -> str:
    """The metric a built-in harness's client sends token usage as (``Harness.token_metric``:
    Claude Code's, for its transcripts and captures), else txcodec's own."""
    from .kit import registry

    found = registry.get(harness) if harness in registry.BUILTIN else None
    return found.token_metric if found is not None and found.token_metric is not None else OWN_METRIC


def token_points(conversations: Iterable[Conversation], *, since_ns: int | None = None) -> list[Point]:
    """The token-usage points of ``conversations`` (main transcripts with their
    children), summed per minute window, type, model, session and source."""
    sums: dict[tuple, float] = {}
    names: dict[Any, str] = {}
    for conv in conversations:
        harness = conv.meta.source_harness
        metric = names[harness] if harness in names else names.setdefault(harness, _metric_of(harness))
        session = conv.meta.id if isinstance(conv.meta.id, str) else "unknown"
        seen: set[str] = set()
        for source, m in _calls(conv, "main", seen):
            ns = _ns(m.timestamp)
            if ns is None or (since_ns is not None and ns < since_ns):
                continue
            start = ns - ns % WINDOW_NS
            model = m.model if isinstance(m.model, str) else "unknown"
            for label, field in TYPES:
                key = (metric, start, session, model, source, label)
                sums[key] = sums.get(key, 0.0) + float(getattr(m.usage, field))
    return [
        Point(metric, start, start + WINDOW_NS, session, model, source, label, value)
        for (metric, start, session, model, source, label), value in sorted(sums.items())
    ]


# --- OTLP -------------------------------------------------------------------------------


def _proto() -> Any:
    try:
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
    except ImportError as exc:
        raise MissingExtra("OTLP output needs opentelemetry-proto: pip install 'txcodec[metrics]'") from exc
    return metrics_service_pb2


def export_request(points: list[Point]) -> Any:
    """The points as one OTLP ``ExportMetricsServiceRequest`` (one metric per name)."""
    pb = _proto()
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue
    from opentelemetry.proto.metrics.v1 import metrics_pb2

    request = pb.ExportMetricsServiceRequest()
    resource_metrics = request.resource_metrics.add()
    resource_metrics.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="txcodec")))
    resource_metrics.resource.attributes.append(
        KeyValue(key="service.version", value=AnyValue(string_value=__version__))
    )
    scope = resource_metrics.scope_metrics.add()
    scope.scope.name, scope.scope.version = "txcodec", __version__
    metrics: dict[str, Any] = {}
    for p in points:
        metric = metrics.get(p.metric)
        if metric is None:
            metric = metrics[p.metric] = scope.metrics.add()
            metric.name, metric.description, metric.unit = p.metric, DESCRIPTION, UNIT
            metric.sum.aggregation_temporality = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
            metric.sum.is_monotonic = True
        dp = metric.sum.data_points.add()
        dp.start_time_unix_nano, dp.time_unix_nano, dp.as_double = p.start_ns, p.end_ns, p.value
        for key, value in p.attributes.items():
            dp.attributes.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    return request


_DELTA = 1  # AGGREGATION_TEMPORALITY_DELTA


def _value(text: str) -> dict[str, Any]:
    return {"stringValue": text}


def to_otlp_json(points: list[Point]) -> bytes:
    """OTLP/JSON: the request :func:`export_request` builds, in the protobuf JSON mapping
    (camelCase keys, 64-bit integers as strings, enums as integers, as OTLP specifies),
    written with msgspec: it needs no protobuf, so no extra
    (``tests/features/test_metrics.py`` checks it against protobuf's own mapping)."""
    import msgspec

    metrics: dict[str, dict[str, Any]] = {}
    for p in points:
        metric = metrics.get(p.metric)
        if metric is None:
            metric = metrics[p.metric] = {
                "name": p.metric,
                "description": DESCRIPTION,
                "unit": UNIT,
                "sum": {"dataPoints": [], "aggregationTemporality": _DELTA, "isMonotonic": True},
            }
        metric["sum"]["dataPoints"].append(
            {
                "startTimeUnixNano": str(p.start_ns),
                "timeUnixNano": str(p.end_ns),
                "asDouble": float(p.value),
                "attributes": [{"key": k, "value": _value(v)} for k, v in p.attributes.items()],
            }
        )
    resource = {
        "attributes": [
            {"key": "service.name", "value": _value("txcodec")},
            {"key": "service.version", "value": _value(__version__)},
        ]
    }
    scope = {"scope": {"name": "txcodec", "version": __version__}}
    if metrics:
        scope["metrics"] = list(metrics.values())
    request = {"resourceMetrics": [{"resource": resource, "scopeMetrics": [scope]}]}
    return msgspec.json.format(msgspec.json.encode(request), indent=2) + b"\n"


def to_otlp_proto(points: list[Point]) -> bytes:
    return export_request(points).SerializeToString()


def check_endpoint(endpoint: str) -> str:
    """The URL to POST to: ``endpoint`` when it is an http(s) URL with a host and (if any)
    a numeric port, with ``/v1/metrics`` added to a bare one; :class:`InputError` in one
    line for anything else (a space or a control character, a port that is no number)."""
    from urllib.parse import urlsplit

    bad = f"--endpoint {endpoint!r}"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in endpoint):
        raise InputError(f"{bad}: a URL holds no spaces or control characters")
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number or out of range
    except ValueError as exc:
        raise InputError(f"{bad}: not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise InputError(f"{bad}: an http:// or https:// URL is needed")
    if not parts.hostname:
        raise InputError(f"{bad}: the URL names no host")
    return endpoint if parts.path not in ("", "/") else endpoint.rstrip("/") + "/v1/metrics"


def send(points: list[Point], endpoint: str, timeout: float = 30) -> int:
    """POST the points to an OTLP/HTTP receiver (``/v1/metrics`` is added to a bare
    endpoint, as the OTLP exporters do); returns the HTTP status. A bad URL, a receiver
    that cannot be reached and one that answers with anything but HTTP are each an
    :class:`InputError` in one line."""
    import http.client
    import urllib.error
    import urllib.request

    url = check_endpoint(endpoint)
    request = urllib.request.Request(
        url, data=to_otlp_proto(points), method="POST", headers={"Content-Type": "application/x-protobuf"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        raise InputError(f"{url}: the receiver answered {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise InputError(f"{url}: cannot send ({getattr(exc, 'reason', exc)})") from exc
    except http.client.HTTPException as exc:  # a bad status line, an unknown version, too many or long headers
        raise InputError(f"{url}: the receiver's answer is not valid HTTP ({describe(exc)})") from exc
    except ValueError as exc:  # http.client.InvalidURL, and what else the URL may still raise
        raise InputError(f"{url}: cannot send ({describe(exc)})") from exc
