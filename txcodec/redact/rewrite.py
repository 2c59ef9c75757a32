"""The byte-preserving rewrite: a JSON text's string values are searched, and each finding is
replaced inside the raw text by its placeholder, escaped as the string around it is. Every
other byte stays, so a line with nothing to redact is the same bytes and a redacted one is
still the same JSON value but for the spans (docs/redact.md#how-it-works)."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

# the tokens that give a JSON text its shape: strings, brackets, commas and colons (numbers,
# true, false and null lie between them and hold nothing to redact)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]', re.S)  # a string: the unrolled loop, quick on long ones
# a string's raw pieces: an escaped surrogate pair (one character), an escape, plain text
_PIECE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.|[^\\]+", re.S)

# find(text, path) -> [(start, end, kind)] in the decoded text; path() builds the JSON path
Find = Callable[[str, Callable[[], str]], list[tuple[int, int, str]]]
# name(kind, value) -> placeholder
Name = Callable[[str, str], str]


def _decode(token: str) -> str | None:
    try:
        return msgspec.json.decode(token)
    except msgspec.DecodeError:
        try:
            return json.loads(token)  # a lone surrogate escape, which msgspec refuses
        except ValueError:
            return None


def _positions(inner: str, wanted: list[int]) -> dict[int, int]:
    """Where each of the decoded string's character offsets ``wanted`` (sorted) starts in the
    raw ``inner`` text (an offset at the end: where the text ends)."""
    if "\\" not in inner:
        return {offset: offset for offset in wanted}
    found: dict[int, int] = {}
    todo = iter(wanted)
    offset = next(todo, None)
    decoded = 0
    for piece in _PIECE.finditer(inner):
        text, start = piece.group(), piece.start()
        size = len(text) if text[0] != "\\" else 1
        while offset is not None and offset < decoded + size:
            found[offset] = start + (offset - decoded if text[0] != "\\" else 0)
            offset = next(todo, None)
        decoded += size
        if offset is None:
            return found
    while offset is not None:
        found[offset] = len(inner)
        offset = next(todo, None)
    return found


def _escaped(placeholder: str, inner: str) -> str:
    """The placeholder as the string around it writes its text: ``\\u00ab`` where the
    string escapes every non-ASCII character, the characters themselves elsewhere."""
    if "\\u" in inner and inner.isascii():
        return json.dumps(placeholder)[1:-1]
    return placeholder


def _key(token: str) -> Any:
    """A key as decoded from its raw token (kept raw while no one asks: most never are)."""
    return token[1:-1] if "\\" not in token else _decode(token)


def _path(stack: list[list[Any]]) -> str:
    out = "$"
    for frame in stack:
        if frame[0] == "{":
            key = _key(frame[1]) if isinstance(frame[1], str) else frame[1]
            out += f".{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(key)) else f"[{key!r}]"
        else:
            out += f"[{frame[1]}]"
    return out


def _opens_key(value: str) -> bool:
    """A string that opens a PEM private key and does not close it."""
    begin = value.rfind("-----BEGIN")
    return begin >= 0 and "PRIVATE KEY" in value[begin:] and "-----END" not in value[begin:]


def rewrite_json(
    text: str, find: Find, name: Name, keep: frozenset[str], hits: list[int] | None = None
) -> tuple[str, list[tuple[str, str, str]]]:
    """``text`` (one JSON value) with every finding in its string values replaced, and the
    findings as (kind, JSON path, value). A string under a key in ``keep`` (ids, hashes,
    signatures: the harness's structure) is not searched. ``hits`` (sorted offsets in
    ``text`` where the raw search found something): only the strings holding one are
    searched again, decoded (a key too: a key may be data, a path in Gemini CLI's
    projects.json), and the text after the last one is not read.

    Most of a line is strings with no hit: the loop's first tests skip them, and a key is
    kept as its raw token until a path or a keep test needs it decoded."""
    # per open container: [bracket, raw key token or index, expecting a key] (+ True while the
    # strings of a list are a PEM key's lines)
    stack: list[list[Any]] = []
    pieces: list[str] = []
    done = 0
    found: list[tuple[str, str, str]] = []
    last = hits[-1] if hits else -1
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == '"':
            top = stack[-1] if stack else None
            is_key = in_key = False
            if top is not None and top[2]:  # an object's key
                top[1], top[2] = token, False
                is_key = True
            elif top is not None and len(top) > 3:
                in_key = True
            if not in_key:
                if len(token) < 5:  # two characters or fewer: no finding is so short
                    continue
                if hits is not None:
                    at = bisect.bisect_left(hits, match.start())
                    if at == len(hits) or hits[at] >= match.end():
                        if match.start() > last and not any(len(frame) > 3 for frame in stack):
                            break  # no hit after here, and no PEM key's lines to follow
                        continue
                elif is_key:
                    continue
            if not is_key and top is not None:
                if top[0] == "{" and _key(top[1]) in keep:
                    continue
                if top[0] == "[" and len(stack) > 1 and stack[-2][0] == "{" and _key(stack[-2][1]) in keep:
                    continue  # a list of ids
            value = _decode(token)
            if value is None:
                continue
            if in_key:  # a line of a PEM key given a line a string (a structured patch's lines)
                start = 1 if value[:1] in ("+", "-", " ") and not value.startswith("-----") else 0  # a diff's mark
                spans = [(start, len(value), "private-key")] if len(value) > start else []
                if "-----END" in value:
                    top.pop()  # type: ignore[union-attr]
            else:
                spans = find(value, lambda: _path(stack))
                if not is_key and top is not None and top[0] == "[" and _opens_key(value):
                    top.append(True)  # the strings after it in this list are the key's lines, to its END
            if not spans:
                continue
            inner = token[1:-1]
            positions = _positions(inner, sorted({o for start, end, _ in spans for o in (start, end)}))
            base = match.start() + 1
            where = _path(stack)
            for start, end, kind in spans:
                secret = value[start:end]
                pieces.append(text[done : base + positions[start]])
                pieces.append(_escaped(name(kind, secret), inner))
                done = base + positions[end]
                found.append((kind, where, secret))
        elif first == ",":
            if stack:
                top = stack[-1]
                if top[0] == "{":
                    top[2] = True
                else:
                    top[1] += 1
        elif first == ":":
            continue
        elif first in "{[":
            stack.append([first, None, True] if first == "{" else [first, 0, False])
        elif stack:
            stack.pop()
    if not found:
        return text, found
    pieces.append(text[done:])
    return "".join(pieces), found


def rewrite_text(text: str, find: Find, name: Name) -> tuple[str, list[tuple[str, int, str]]]:
    """Plain text with every finding replaced: (text, [(kind, offset, value)])."""
    spans = find(text, lambda: "")
    if not spans:
        return text, []
    pieces: list[str] = []
    done = 0
    found = []
    for start, end, kind in spans:
        pieces.append(text[done:start])
        pieces.append(name(kind, text[start:end]))
        done = end
        found.append((kind, start, text[start:end]))
    pieces.append(text[done:])
    return "".join(pieces), found
