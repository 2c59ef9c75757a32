"""The fuzz layer's shared parts: the invariants every input must keep, the seed lines
the mutators start from, the mutations themselves and the regression corpus.

Used by tests/features/test_fuzz.py (hypothesis, a small budget in every run and a long one with
``pytest -m fuzz --fuzz-seconds N``) and by the coverage-guided harnesses in fuzz/
(atheris). A failed invariant raises; so does any exception that is not one of
txcodec's own clean errors (the test suite runs in strict mode, where the library's
last-resort guards re-raise instead of hiding a bug).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

import txcodec
from txcodec import api
from txcodec.core.errors import InternalError
from txcodec.core.errors import TxcodecError
from txcodec.export import markdown
from txcodec.export import terminal
from txcodec.harnesses.codex import usage as codex_usage
from txcodec.kit import registry
from txcodec.kit.changes import to_json
from txcodec.model.common_json import from_json
from txcodec.model.loss import LossReport

os.environ.setdefault("TXCODEC_STRICT", "1")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("TXCODEC_CORPUS") or ROOT.parent / "shared" / "corpus")
GOLDEN = ROOT / "golden"
REGRESSIONS = ROOT / "tests" / "fuzz_regressions"

# every built-in harness; ``jsonl`` (the generic codec) last. Each is fed bytes, the way
# ``txcodec.load(data, harness)`` takes them:
# - a file of lines (aider's are Markdown: the byte mutations change them);
# - one whole JSON document (continue_cli, opencode, kilo, cline, pretty-printed by their
#   clients): the seed is the document as one "line", so the tree mutations change its
#   values, and the mutant is the changed document (or its damaged bytes);
# - OpenHands keeps a conversation as a folder, one JSON file per event, that
#   store.load_folder reads as a session of one "line" per file: its events are given one a
#   line, the same records through the same reader;
# - Mistral Vibe in its legacy form (messages.jsonl). A unified session's bytes are its
#   CURRENT alone, which names a generation whose manifest and chunks the reader opens
#   from the session's folder (store.unified_history): given as bytes, no history comes
#   with it, so its chunks are not fuzzed here.
# these take their seeds through txcodec.load: which golden or corpus file is whose session
# (an OpenHands event file, not a scenario.json or a meta.json) is the library's call, and
# a session's lines are what it loaded; the others' seeds are their files' lines as they are
_LOADED = (
    "copilot_cli",
    "droid",
    "kimi_cli",
    "mistral_vibe",
    "aider",
    "openhands",
    "continue_cli",
    "opencode",
    "kilo",
    "cline",
)
CODECS = ("claude_code", "codex", "stream_json", "gemini_cli", "qwen_code", "pi", *_LOADED, "jsonl")
ALIASES = {"copilot": "copilot_cli", "vibe": "mistral_vibe"}  # the corpus manifest's names
_MAX_SEED_LINE = 64 * 1024  # longer lines make slow mutants and add no new shapes


# --- the invariants -----------------------------------------------------------------


def writers() -> list[str]:
    return sorted(name for name, h in registry.harnesses().items() if h.write is not None)


def clean(exc: BaseException) -> bool:
    """An error the contract allows: txcodec's own, and not an internal one."""
    return isinstance(exc, TxcodecError) and not isinstance(exc, InternalError)


def check(data: bytes, harness: str | None) -> None:
    """Every invariant for one input, read as ``harness`` (detected when ``None``):
    load never raises and dumps the same bytes; reading into Common, rendering it and
    writing it as every target succeed or raise a clean error; every written file
    loads back byte-identically and the main one reads back into Common."""
    session = txcodec.load(data, harness)
    assert session.dump() == data, "dump() differs from the loaded bytes"
    for _, opaque in session.diagnostics:
        assert "internal error" not in opaque.diagnostic, opaque.diagnostic
    if session.harness == "jsonl":
        return  # nothing recognised the lines: there is nothing to read
    loss = LossReport()
    try:
        conversation = api.to_common(session, loss)
    except Exception as exc:
        if clean(exc):
            return
        raise
    assert from_json(to_json(conversation)) is not None
    terminal.render(conversation)
    markdown.render(conversation)
    _write_everywhere(conversation, read_main=True)


def views(conversation: Any, harness: str) -> None:
    """Everything a conversation is shown or counted as: its changes, the Markdown, HTML
    and terminal views, and the columnar rows of every table (as Arrow tables when
    pyarrow is there). Each must work on any conversation Common can hold."""
    from io import BytesIO

    from txcodec.export import columnar
    from txcodec.export import html
    from txcodec.kit.changes import conversation_changes
    from txcodec.usage import model_cost

    conversation_changes(conversation)
    markdown.render(conversation)
    terminal.render(conversation)
    html.write(conversation, BytesIO(), price=model_cost)
    html.title_of(conversation), html.first_prompt(conversation)
    rows = columnar.rows(conversation, columnar.Source(harness, "/fuzz/session"))
    try:
        columnar.require_pyarrow()
    except TxcodecError:
        return
    for name, part in rows.items():
        columnar.table_from_json(name, columnar.encode_rows(part))


def check_views(data: bytes, harness: str | None) -> None:
    """The views behind a codec: ``data`` read as ``harness`` into Common (a clean error
    ends the check), then every view of :func:`views`."""
    session = txcodec.load(data, harness)
    if session.harness == "jsonl":
        return
    try:
        conversation = api.to_common(session, LossReport())
    except Exception as exc:
        if clean(exc):
            return
        raise
    views(conversation, session.harness)


# where a store that lists its files lean (``Store.describe_lean``) keeps one, under its root
LISTED_SID = "0f0e0d0c-0000-4000-8000-000000000001"
LISTED = {
    "claude_code": f"-p/{LISTED_SID}.jsonl",
    "codex": f"sessions/2026/01/01/rollout-2026-01-01T00-00-00-{LISTED_SID}.jsonl",
}


def check_listing(data: bytes, harness: str) -> None:
    """``data`` as a session file of ``harness``'s store, listed as ``list`` lists it: the
    details read lean (``Store.summarize``) are the full read's, where the lean read does not
    leave the file to it; and the file described with its details from one read
    (``Store.describe_lean``) is the file described alone with them (``describe_item`` and
    ``summarize``). A store refuses only a file it cannot read (an OSError): whatever its
    content, the file is listed."""
    import tempfile

    from txcodec import sessions

    store = registry.get(harness).store
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / LISTED[harness]
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        row = sessions.SessionRow(harness=harness, session_id="s", path=str(path))
        lean = sessions._lean_entry(row)
        if lean is not None:
            assert lean == sessions._full_entry(row), "the lean details differ from the full read's"

        def described(both: bool) -> Any:
            (item,) = store.discover_files(root)
            try:
                if both:
                    found, details = store.describe_lean(item)
                else:
                    found, details = store.describe_item(item), store.summarize(path)
            except OSError as exc:  # a file the store cannot read
                return type(exc)
            return msgspec.to_builtins(found.to_dict() if hasattr(found, "to_dict") else found), details

        assert described(True) == described(False), "the file described with its details is another row"


# what the lean usage passes (``Harness.usage``) read of a file: the record types, response
# items and events a call is made of. Where the full read could not read such a record (it kept
# it opaque, or a value in it had an unexpected shape), a call still counts in ``usage``, which
# reads only the fields a call needs, and the Common view leaves it out (docs/usage.md#a-damaged-line).
COUNTED = ("claude_code", "codex")
_CALL_PARTS = {
    *codex_usage._ASSISTANT_ITEMS,
    *codex_usage._USER_ITEMS,
    *codex_usage._COMPACTION_ITEMS,
    "message",
    "token_count",
    "error",
    "turn_context",
    "session_meta",
    "compacted",
    "assistant",
}


def _unread_call_part(loss: Any, data: bytes) -> bool:
    """Whether the full read left out a record the lean usage pass reads, or may have read one
    apart from the rest of its call: a Claude Code client before 2.0.28 kept its subagents'
    records in the main file, and the full read reads each subagent's records as a conversation
    of its own, by their parent links and each line's ``version``, while the lean pass joins a call's
    fragments by their id wherever they are (the two agree on every such file of the corpus,
    ``test_usage_fast.py``; a mutated link or version parts them)."""
    from txcodec.harnesses.claude_code.read import _sidechain_in_main

    lines = [_keys_of(line) for line in data.split(b"\n")]
    if any(
        keys.is_sidechain is True and isinstance(keys.version, str) and _sidechain_in_main(keys.version)
        for keys in lines
    ):
        return True
    for entry in loss.entries:
        kind = entry.kind
        if kind in ("opaque", "read:malformed"):
            return True
        dropped = lines[entry.line - 1] if kind == "duplicate" else None
        if dropped is not None and dropped.type == "assistant":
            # left out as a copy of an earlier record of its uuid: the lean pass takes an
            # assistant line for a copy only of an earlier assistant line
            first = next((keys for keys in lines if keys.uuid == dropped.uuid), None)
            if first is None or first.type != "assistant":
                return True
        family, _, name = kind.partition(":")
        if family in ("item", "event", "record") and name in _CALL_PARTS and "does not carry" in entry.detail:
            return True
    return False


class _Keys(msgspec.Struct, rename="camel"):
    """The keys a duplicate and an old client's sidechain record are told by; the rest of the
    line is passed over unchecked, as the codec passes over what it keeps as bytes."""

    type: Any = None
    uuid: Any = None
    is_sidechain: Any = None
    version: Any = None


_keys = msgspec.json.Decoder(_Keys)


def _keys_of(line: bytes) -> _Keys:
    try:
        return _keys.decode(line.removeprefix(b"\xef\xbb\xbf"))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _Keys()


def check_usage(data: bytes, harness: str) -> None:
    """``data`` as a session file of ``harness``, counted as ``usage`` counts it: the report
    never raises, and a file it cannot count is one line naming it; where the full read left
    out no record a call is made of, the report's numbers are those of the conversation read
    whole (``session_usage`` of Common), call for call and token for token."""
    import tempfile

    from txcodec.usage import ModelUsage
    from txcodec.usage import session_usage
    from txcodec.usage import usage

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(LISTED[harness]).name
        path.write_bytes(data)
        report = usage([path], by=["model"], prices=False, harness=harness, jobs=1)
    for error in report.errors:
        assert error.startswith(str(path)) and "\n" not in error, error
    loss = LossReport()
    try:
        conversation = api.to_common(txcodec.load(data, harness), loss)
    except Exception as exc:
        if clean(exc):
            return
        raise
    want = [msgspec.structs.replace(row, session="") for row in session_usage(conversation)]
    if report.errors:
        # the one file error a session read whole can have: a count past a 64-bit integer
        # (refused, never stored wrapped or cut), which takes 19 digits to write
        assert re.search(rb"[0-9]{19}", data), report.errors
        return
    if _unread_call_part(loss, data):
        return
    fields = ModelUsage.__struct_fields__[2:]
    got = [ModelUsage("", row.model, **{f: getattr(row, f) for f in fields}) for row in report.rows]
    assert got == want, f"usage counts {got}, the full read {want}"


def _write_everywhere(conversation, read_main: bool = False) -> None:
    """Every writer writes ``conversation`` (or refuses cleanly), and each file it writes
    loads back byte-identically; ``read_main``: its main file also reads back into Common
    with no error at all."""
    for target in writers():
        try:
            written, _ = api.convert(conversation, target)
        except Exception as exc:
            if clean(exc):
                continue
            raise
        for name, body in written.files.items():
            kind = target if name.endswith(".jsonl") else None
            back = txcodec.load(body, kind)
            assert back.dump() == body, f"{target} wrote {name}, which does not load back byte-identically"
        if read_main:
            api.to_common(txcodec.load(written.files[written.main], target), LossReport())


def check_common(data: bytes) -> None:
    """Common JSON from anywhere: decoding it fails cleanly, in one line naming the JSON
    path, or gives a conversation that every view shows and every writer writes (or
    refuses cleanly), and what is written loads back."""
    try:
        conversation = from_json(data)
    except Exception as exc:
        if clean(exc):
            assert "\n" not in str(exc), str(exc)
            return
        raise
    views(conversation, "common")
    assert from_json(to_json(conversation)) is not None
    _write_everywhere(conversation)


# --- seeds: real lines ----------------------------------------------------------------


def _manifest() -> list[tuple[str, Path]]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    rows = csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t")
    return [(row["harness"], CORPUS / row["path"]) for row in rows]


def _golden() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(GOLDEN.glob("*/*/**/*")):
        harness = path.relative_to(GOLDEN).parts[0]
        if (
            path.is_file()
            and path.suffix in (".jsonl", ".json", ".md")
            and not path.name.startswith(("expected.", "common", "loss", "prompts"))
        ):
            out.append((harness, path))
    return out


def _loaded_lines(codec: str, path: Path, seen: set[Path]) -> list[bytes]:
    """The lines of ``path`` as the library loads it, when it is a ``codec`` session (a
    document is one line, an OpenHands folder a line per file, each folder once)."""
    try:
        session = api.load(path)
    except TxcodecError:
        return []
    if session.harness != codec or session.path in seen:
        return []
    seen.add(session.path)
    return [bytes(session.emit(line)) for line in session.lines]


_seed_cache: dict[str, list[list[bytes]]] = {}


def seed_files(codec: str) -> list[list[bytes]]:
    """The lines of every golden and corpus file of ``codec`` (a few of every harness for
    the generic codec), each line at most 64 KB."""
    if codec in _seed_cache:
        return _seed_cache[codec]
    files = []
    seen: set[Path] = set()
    for harness, path in [*_golden(), *_manifest()]:
        if codec != "jsonl" and ALIASES.get(harness, harness) != codec or path.suffix not in (".jsonl", ".json", ".md"):
            continue
        if codec in _LOADED:
            lines = _loaded_lines(codec, path, seen)
        elif path.suffix == ".md":
            continue
        else:
            try:
                lines = api.read_bytes(path).split(b"\n")
            except OSError:
                continue
        lines = [line for line in lines if line.strip() and len(line) <= _MAX_SEED_LINE]
        if lines:
            files.append(lines)
    if codec == "jsonl":
        files = [lines for other in CODECS[:-1] for lines in seed_files(other)[:3]]
    _seed_cache[codec] = files
    return files


# --- mutations ------------------------------------------------------------------------

HOSTILE = [
    "../victim",
    "../../../../etc/passwd",
    "/abs/path",
    "$(touch /tmp/x)",
    "`id`",
    "a;rm -rf ~",
    "x\ny",
    "00000000-0000-4000-8000-000000000000\n",
    "\x00",
    "nul\x00inside",
    "back\\slash",
    "",
    " ",
    ".",
    "..",
    "a" * 400,
    "\u202e\u2066",
    "\ud800",
    "C:\\Windows",
    "%s%n",
    "{{7*7}}",
    "<script>",
    "\u2028",
]
SWAPS: list[Any] = [None, True, False, 0, -1, 2**63, 1.5, "", "x", [], {}, [{}], {"type": {}}, {"type": []}]


class Rng:
    """What a mutation draws its choices from: ``random.Random`` in the atheris
    harnesses (seeded from the fuzzer's bytes), hypothesis' ``data.draw`` in the tests."""

    def __init__(self, below: Callable[[int], int]) -> None:
        self.below = below  # an int in [0, n)

    def pick(self, items: list[Any]) -> Any:
        return items[self.below(len(items))]


def _paths(value: Any, prefix: tuple = (), limit: int = 400) -> list[tuple]:
    out: list[tuple] = []
    stack = [(value, prefix)]
    while stack and len(out) < limit:
        node, here = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            out.append((*here, key))
            stack.append((child, (*here, key)))
    return out


def _parent(value: Any, path: tuple) -> tuple[Any, Any]:
    node = value
    for key in path[:-1]:
        node = node[key]
    return node, path[-1]


_HOLE = "\x00hole\x00"


def _encode(value: Any, hole: str | None = None) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if hole is not None:
        text = text.replace(json.dumps(_HOLE), hole, 1)
    return text.encode("utf-8", "surrogatepass")


def mutate_line(line: bytes, rng: Rng) -> bytes:
    """One mutation of one line: structured (on its JSON) or on its bytes."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than json can read
        value = None
    ops = _BYTE_OPS if value is None or not isinstance(value, (dict, list)) else _BYTE_OPS + _TREE_OPS * 3
    return rng.pick(ops)(line, value, rng)


def _flip(line: bytes, value: Any, rng: Rng) -> bytes:
    if not line:
        return b"\xff"
    i = rng.below(len(line))
    return line[:i] + bytes([line[i] ^ (1 << rng.below(8))]) + line[i + 1 :]


def _truncate(line: bytes, value: Any, rng: Rng) -> bytes:
    return line[: rng.below(len(line) + 1)]


def _splice(line: bytes, value: Any, rng: Rng) -> bytes:
    i = rng.below(len(line) + 1)
    junk = rng.pick([b"\\ud800", b'"', b"\r", b"\xef\xbb\xbf", b"\xff\xfe", b"{", b"]", b",", b"\\", b"\x00", b"\n"])
    return line[:i] + junk + line[i:]


def _tree(op: Callable[[Any, tuple, Rng], str | None]) -> Callable[[bytes, Any, Rng], bytes]:
    def mutate(line: bytes, value: Any, rng: Rng) -> bytes:
        paths = _paths(value)
        if not paths:
            return _flip(line, value, rng)
        hole = op(value, rng.pick(paths), rng)
        try:
            return _encode(value, hole)
        except RecursionError:  # a line near the depth json can write, one level deeper
            return _flip(line, value, rng)

    mutate.__name__ = op.__name__
    return mutate


def _delete(value: Any, path: tuple, rng: Rng) -> None:
    parent, key = _parent(value, path)
    del parent[key]


def _swap(value: Any, path: tuple, rng: Rng) -> None:
    parent, key = _parent(value, path)
    old = parent[key]
    parent[key] = rng.pick([*SWAPS, [old], {"value": old}, str(old)[:50]])


def _retype(value: Any, path: tuple, rng: Rng) -> None:
    """The tag of the object holding ``path`` (or of the line) becomes a non-string."""
    parent, _ = _parent(value, path)
    target = parent if isinstance(parent, dict) else value if isinstance(value, dict) else None
    if target is not None:
        target[rng.pick(["type", "role", "subtype", "name"])] = rng.pick(SWAPS)


def _hostile(value: Any, path: tuple, rng: Rng) -> None:
    parent, key = _parent(value, path)
    parent[key] = rng.pick(HOSTILE)


def _huge(value: Any, path: tuple, rng: Rng) -> None:
    parent, key = _parent(value, path)
    # past 64 KB (a line's seed limit), and large enough to find quadratic work; larger
    # sizes only multiply the linear cost of every writer by the same factor
    parent[key] = rng.pick(["x", "\u00e9", "\n", "\\"]) * rng.pick([70_000, 100_000])


def _deep(value: Any, path: tuple, rng: Rng) -> str:
    parent, key = _parent(value, path)
    parent[key] = _HOLE
    depth = rng.pick([64, 600, 3000, 20_000])
    if rng.below(2):
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "{}" + "}" * depth


def _add_key(value: Any, path: tuple, rng: Rng) -> None:
    parent, key = _parent(value, path)
    target = parent if isinstance(parent, dict) else value
    if isinstance(target, dict):
        target[rng.pick(["zzUnknown", "type", "id", "content", "message", "payload", "parts"])] = rng.pick(SWAPS)


_BYTE_OPS = [_flip, _truncate, _splice]
_TREE_OPS = [_tree(op) for op in (_delete, _swap, _retype, _hostile, _huge, _deep, _add_key)]


def mutant(codec: str, rng: Rng) -> bytes:
    """A small session: a real file's first line, a window of its lines around one that
    is mutated (once or a few times), with a final LF or not."""
    files = seed_files(codec)
    if not files:
        return rng.pick([b"", b"\n", b"{}", b'{"type":{}}\n'])
    lines = rng.pick(files)
    i = rng.below(len(lines))
    window = lines[max(0, i - 2) : i + 3]
    k = min(i, 2)
    for _ in range(1 + rng.below(3)):
        window[k] = mutate_line(window[k], rng)
    if i > 2:
        window.insert(0, lines[0])
    return b"\n".join(window) + rng.pick([b"\n", b"", b"\r\n"])


def common_seeds() -> list[bytes]:
    """Common JSON documents: every golden ``common.json`` and ``expected.common.json``
    (the largest left out: they make slow mutants and no new shapes)."""
    if "common" not in _seed_cache:
        files = sorted(GOLDEN.glob("**/*common.json"))
        _seed_cache["common"] = [[p.read_bytes()] for p in files if p.stat().st_size <= 8 * _MAX_SEED_LINE]
    return [doc for (doc,) in _seed_cache["common"]]


def common_mutant(rng: Rng) -> bytes:
    """A golden Common JSON document changed once or a few times (as one line is)."""
    doc = rng.pick(common_seeds())
    for _ in range(1 + rng.below(3)):
        doc = mutate_line(doc, rng)
    return doc


# --- the regression corpus ----------------------------------------------------------


def regression_files() -> list[tuple[str, Path]]:
    """``(codec, file)`` for every input that once broke an invariant."""
    return [(p.parent.name, p) for p in sorted(REGRESSIONS.glob("*/*")) if p.is_file() and p.parent.name in CODECS]


# the targets beyond the codecs: the views behind each codec (``views/<codec>``), a listing
# of a store's file (``listing/<codec>``), and Common JSON with every writer behind it (``common_json``)
COMMON = "common_json"
VIEWS = "views"
LISTING = "listing"
USAGE = "usage"


def _regressions_of(target: str, codecs: Any) -> list[tuple[str, Path]]:
    return [
        (p.parent.name, p)
        for p in sorted((REGRESSIONS / target).glob("*/*"))
        if p.is_file() and p.parent.name in codecs
    ]


def view_regressions() -> list[tuple[str, Path]]:
    """``(codec, file)`` for every input that once broke a view of :func:`check_views`."""
    return _regressions_of(VIEWS, CODECS)


def listing_regressions() -> list[tuple[str, Path]]:
    """``(codec, file)`` for every input that once broke :func:`check_listing`."""
    return _regressions_of(LISTING, LISTED)


def usage_regressions() -> list[tuple[str, Path]]:
    """``(codec, file)`` for every input that once broke :func:`check_usage`."""
    return _regressions_of(USAGE, COUNTED)


def common_regressions() -> list[Path]:
    return sorted(p for p in (REGRESSIONS / COMMON).glob("*") if p.is_file())


def save_regression(codec: str, data: bytes) -> Path:
    """Keep an input that broke an invariant, named by its hash, for the suite to replay
    (``codec`` is a codec's name, ``views/<codec>`` or ``common_json``)."""
    folder = REGRESSIONS / codec
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()[:16]}.jsonl"
    path.write_bytes(data)
    return path


def harness_for(codec: str) -> str | None:
    """The generic codec's inputs are read the way a user's would: harness detected."""
    return None if codec == "jsonl" else codec


def run_random(codec: str, seed: int) -> bytes:
    """One random mutant of ``codec`` (for the atheris harnesses and quick loops)."""
    r = random.Random(seed)
    return mutant(codec, Rng(lambda n: r.randrange(n) if n > 0 else 0))
