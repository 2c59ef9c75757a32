"""Small helpers shared by harness readers (``txcodec.harnesses.*.read``)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from .errors import MALFORMED, describe
from .loss import LossReport, UnreadLoss
from .native import NativeSession, Opaque, has_lone_surrogates, json_source, plain, without_lone_surrogates

_json = msgspec.json.Decoder()


def line_dicts(session: NativeSession) -> list[tuple[int, Any]]:
    """``(line number, the line as plain JSON)``; ``None`` for a line that is not JSON.
    An unchanged line is read from its own bytes, an edited record from its re-encoding."""
    out = []
    for n, line in enumerate(session.lines, 1):
        record = line.record
        if isinstance(record, Opaque):
            raw = record.raw
        elif line.raw is not None and session.codec.decode(line.raw) == record:
            raw = line.raw
        else:
            raw = msgspec.json.encode(plain(record))
        try:
            out.append((n, _json.decode(json_source(raw))))
        except msgspec.DecodeError:
            out.append((n, None))
    return out


@contextlib.contextmanager
def malformed(loss: LossReport, file: str | None, line: int | None, what: str = "record") -> Iterator[None]:
    """Read one record (or one part of it) with this around it: a value whose shape the
    reader does not expect (a number where it reads a list, a key missing, an object
    where it wants a string) is data, not a crash. The record is reported as
    ``read:malformed`` with the reason and the reading goes on with the next one.

    Well-formed sessions never reach this: the tests read every golden and corpus file
    and assert no such entry."""
    try:
        yield
    except MALFORMED as exc:
        report_malformed(loss, file, line, exc, what)


def report_malformed(loss: LossReport, file: str | None, line: int | None, exc: BaseException, what: str = "record") -> None:
    """The entry :func:`malformed` adds, for a loop that catches ``MALFORMED`` itself
    (a ``with`` per record costs a generator per line)."""
    loss.add("read:malformed", f"{what} not read, a value has an unexpected shape ({describe(exc)})", file=file, line=line)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")  # one regex scan: quicker than two ``in`` tests


def report_lone_surrogates(session: NativeSession, loss: LossReport, file: str | None) -> None:
    """A line that decoded only after its lone UTF-16 surrogate escapes were replaced
    by U+FFFD (``native.repairs_surrogates``) reads differently from what it holds: say
    so, once per line."""
    if type(loss) is UnreadLoss:
        return
    source = session._source
    if source is not None and (_SURROGATE_ESCAPE.search(source) is None or not has_lone_surrogates(source)):
        return  # the common case: one scan of the file's bytes (a pair of escapes, an emoji, is no lone one)
    for n, line in enumerate(session.lines, 1):
        raw = line._raw
        if raw is None or isinstance(line._record, Opaque):
            continue
        raw = bytes(raw)
        if (b"\\ud" in raw or b"\\uD" in raw) and without_lone_surrogates(raw) is not None:
            loss.add("text:lone-surrogate", "a lone UTF-16 surrogate escape read as U+FFFD", file=file, line=n)


_keys = msgspec.json.Decoder(dict[str, msgspec.Raw])


def report_unknown_keys(
    session: NativeSession, loss: LossReport, file: str | None, read: Any, nested: tuple[str, ...] = ("message",)
) -> None:
    """Keys of a typed record the reader reads (its class is in ``read``), and of its
    ``nested`` objects, that the Struct does not declare: the reader cannot see them, so
    they are not carried. (A record the reader does not read at all is reported whole,
    by the reader.) One entry per record type and key, with the first line and how many
    lines hold it."""
    if type(loss) is UnreadLoss:
        return
    found: dict[tuple[str, str], list[int]] = {}
    for n, line in enumerate(session.lines, 1):
        record = line._record
        raw = line._raw
        if raw is None or type(record) not in read:
            continue
        try:
            keys = _keys.decode(json_source(raw))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            continue
        tag = _tag(record)
        for key in keys.keys() - _declared(type(record)):
            found.setdefault((tag, key), []).append(n)
        for name in nested:
            inner = getattr(record, name, None)
            if isinstance(inner, msgspec.Struct) and name in keys:
                try:
                    inner_keys = _keys.decode(keys[name])
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    continue
                for key in inner_keys.keys() - _declared(type(inner)):
                    found.setdefault((tag, f"{name}.{key}"), []).append(n)
    for (tag, key), lines in sorted(found.items(), key=lambda kv: kv[1][0]):
        count = f" ({len(lines)} lines)" if len(lines) > 1 else ""
        loss.add("field:unknown", f"{tag} record key {key!r}{count}: not known to the reader, not carried", file=file, line=lines[0])


def _tag(record: msgspec.Struct) -> str:
    tag = record.__struct_config__.tag
    return tag if isinstance(tag, str) else type(record).__name__


_declared_cache: dict[type, frozenset[str]] = {}


def _declared(cls: type) -> frozenset[str]:
    names = _declared_cache.get(cls)
    if names is None:
        config = cls.__struct_config__
        names = frozenset(f.encode_name for f in msgspec.structs.fields(cls)) | (
            {config.tag_field} if config.tag_field else set()
        )
        _declared_cache[cls] = names
    return names
