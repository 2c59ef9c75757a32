"""Redaction: sessions made safe to share, still valid native files (docs/redact.md).

:class:`Redactor` holds what one run knows: the detectors, the placeholders given so far (the
same value always gets the same one), the values found (redacted wherever they appear again)
and the user names seen in home folders. :func:`redact_paths` mirrors files and folders into
an output folder; :meth:`Redactor.redact_bytes` redacts one file's bytes in memory (``export``
and ``convert`` use it through :func:`redact_conversation`).
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import itertools
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import InputError
from ..core.errors import InternalError
from ..kit import registry
from .detect import BY_CONTEXT
from .detect import EXTRA
from .detect import PERSONAL_KINDS
from .detect import Detector
from .detect import MissingExtra
from .detect import merge
from .rewrite import rewrite_json
from .rewrite import rewrite_text

__all__ = [
    "EXTRA",
    "Finding",
    "MissingExtra",
    "RedactTable",
    "Redactor",
    "Report",
    "load_config",
    "redact_conversation",
    "redact_paths",
    "redactor_for",
]

CONFIG = ".txcodec-redact.toml"
# user names that name no one: a home folder of these is a machine's, not a person's
# up to this many known forms, each is searched alone (benchmarks/bench_redact.py)
_FORMS_ONE_BY_ONE = 24
_GENERIC_USERS = {
    "root", "user", "users", "ubuntu", "runner", "admin", "vscode", "node", "codespace", "work", "home",
    "test", "shared", "public", "guest", "default", "nobody", "app", "docker", "ec2-user", "linuxbrew", "dev",
}  # fmt: skip
# a home folder's user name, after one of detect.PLACES (found in the rules' pass)
_HOME_NAME = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._-]{1,62}")
# The keys whose values are structure in any JSON file (Common JSON's, a document's), besides
# those a harness declares (Harness.redact_keep)
COMMON_KEEP = frozenset(
    {
        "id", "session_id", "tool_use_id", "parent_id", "uuid", "signature", "encrypted", "hash", "sha256", "file_id",
        "source_ids", "message_id", "boundary_id", "logical_parent_id", "preserved_ids", "agent_id", "parent_agent_id",
    }
)  # fmt: skip


class Finding(msgspec.Struct, frozen=True):
    """One replaced value: where, what kind, its placeholder and a short keyed hash of it
    (never the value)."""

    kind: str
    file: str
    line: int
    path: str  # the JSON path in the line, "" for text
    placeholder: str
    hash: str


class Report(msgspec.Struct):
    findings: list[Finding] = msgspec.field(default_factory=list)
    # files kept as text (not JSON), files not written (binary, database), with why
    notes: list[tuple[str, str]] = msgspec.field(default_factory=list)
    written: list[str] = msgspec.field(default_factory=list)
    files: int = 0

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.kind for f in self.findings).most_common())


class RedactTable(msgspec.Struct, frozen=True):
    """What a run's :class:`Redactor` knows, as plain data a batch's worker processes get (a
    fork or a pickle): its settings, its seed, the values found so far and the user names. Every
    worker rebuilds the same redactor from it (:func:`redactor_for`), so a value gets the same
    placeholder in every session of the batch."""

    seed: str
    keep: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    allow: tuple[str, ...] = ()
    allow_patterns: tuple[str, ...] = ()
    known: tuple[tuple[str, str], ...] = ()
    users: tuple[str, ...] = ()


def load_config(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """``.txcodec-redact.toml``: ``[patterns]`` kind = "regex", ``[allow]`` values = [...],
    patterns = [...], and ``keep = [...]`` categories."""
    if path is None:
        if not Path(CONFIG).is_file():
            return {}
        path = CONFIG
    import tomllib

    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML: {exc}") from None
    allow = data.get("allow", {})
    return {
        "extra": [(str(k), str(v)) for k, v in data.get("patterns", {}).items()],
        "allow": [str(v) for v in allow.get("values", [])],
        "allow_patterns": [str(v) for v in allow.get("patterns", [])],
        "keep": [str(v) for v in data.get("keep", [])],
    }


def _munged(path_part: str) -> str:
    """A name as a project folder's name writes it (every character but a letter or a digit
    a dash: Claude Code's ``-home-alice-smith-…``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path_part)


class Redactor:
    """One run's state. ``seed`` makes placeholders (and the report's hashes) depend on the
    values alone, so runs over different files agree."""

    def __init__(
        self,
        *,
        seed: str | None = None,
        keep: Iterable[str] = (),
        extra: Iterable[tuple[str, str]] = (),
        allow: Iterable[str] = (),
        allow_patterns: Iterable[str] = (),
        users: Iterable[str] = (),
        hosts: Iterable[str] = (),
        detector: Detector | None = None,
    ) -> None:
        keep = list(keep)
        extra, allow, allow_patterns = list(extra), list(allow), list(allow_patterns)
        self._settings = (tuple(keep), tuple(extra), tuple(allow), tuple(allow_patterns))
        self.detector = detector or Detector(extra=extra, allow=allow, allow_patterns=allow_patterns, keep=keep)
        self.keep_users = "user" in self.detector.kept
        self.seed = seed
        self._key = (seed or secrets.token_hex(16)).encode()
        self._names: dict[str, str] = {}
        self._counts: Counter[str] = Counter()
        self.known: dict[str, str] = {}  # a value found once -> its kind, redacted wherever it is
        self._forms: dict[str, str] = {}  # each known value's forms in a raw text -> the value
        self._forms_ac: Any = None  # (how many forms, the forms as bytes, their automaton)
        self.users: set[str] = set()
        for user in users:
            self.add_user(user)
        for host in hosts:
            if host and host not in ("localhost",) and "host" not in self.detector.kept:
                self._know(host, "host")
        self._keeps: dict[str, frozenset[str]] = {}

    # --- what the run knows --------------------------------------------------------------
    def add_user(self, name: str) -> None:
        if self.keep_users or name.lower() in _GENERIC_USERS or len(name) < 3 or name in self.users:
            return
        self.users.add(name)
        self._know(name, "user")
        munged = _munged(name)
        if munged != name:
            self._names.setdefault(munged, self.placeholder("user", name))
            self._know(munged, "user")

    def _know(self, value: str, kind: str) -> None:
        if value in self.known:
            return
        self.known[value] = kind
        encoded = msgspec.json.encode(value).decode()[1:-1]
        # the forms a value takes in a file's raw text: as it is, escaped in a JSON string,
        # and escaped twice (a JSON text inside a string)
        forms = {value, encoded, msgspec.json.encode(encoded).decode()[1:-1]}
        for form in forms:
            self._forms.setdefault(form, value)

    def learn(self, data: bytes) -> list[tuple[int, int, str]]:
        """The first pass over a file: the user names its home folders hold, and the values its
        findings hold (so that a value found in one place is redacted in every other). Returns
        the findings in the raw bytes, which :meth:`redact_bytes` takes to skip searching again."""
        places: dict[bytes, list[int]] = {}
        spans = self.detector.raw_spans(data, places)
        names: dict[bytes, int] = {}  # each name, and where it is first
        for prefix, starts in places.items():
            for start in starts:
                match = _HOME_NAME.match(data, start + len(prefix))
                if match is not None and names.get(match.group(), start + 1) > start:
                    names[match.group()] = start
        for name in sorted(names, key=names.__getitem__):
            self.add_user(name.decode("utf-8", "replace"))
        for start, end, kind in spans:
            if kind not in PERSONAL_KINDS and not (kind in BY_CONTEXT and _structural(data, start)):
                self._know(_unescaped(data[start:end].decode("utf-8", "replace")), kind)
        return spans

    def _literal_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the known values (in any of their forms) are in a decoded string."""
        found = []
        for form, value in self._forms.items():
            at = text.find(form)
            if at < 0:
                continue
            kind = self.known[value]
            while at >= 0:
                end = at + len(form)
                if kind not in ("user", "host") or _word_at(text, at, end, len(value) < 5 and kind == "user"):
                    found.append((at, end, kind))
                at = text.find(form, end)
        return found

    def _raw_literal_hits(self, data: bytes) -> list[int]:
        """Where the known values (in any of their forms) start in a file's bytes."""
        if not self._forms:
            return []
        if self._forms_ac is None or self._forms_ac[0] != len(self._forms):
            import ahocorasick_rs

            forms = [form.encode("utf-8", "surrogateescape") for form in self._forms]
            # A few forms are found quicker one by one (a one-pattern automaton is a SIMD
            # substring search, ~20 times the speed of a many-pattern one on transcripts)
            if len(forms) <= _FORMS_ONE_BY_ONE:
                automata = [([form], ahocorasick_rs.BytesAhoCorasick([form])) for form in forms]
            else:
                automata = [(forms, ahocorasick_rs.BytesAhoCorasick(forms))]
            self._forms_ac = (len(self._forms), automata)
        _, automata = self._forms_ac
        found = [
            (forms[index], start, end)
            for forms, automaton in automata
            for index, start, end in automaton.find_matches_as_indexes(data, overlapping=True)
        ]
        hits = []
        for form, start, end in found:
            value = self._forms[form.decode("utf-8", "surrogateescape")]
            kind = self.known[value]
            if kind in ("user", "host"):
                window = data[max(0, start - 8) : end + 1].decode("latin-1")
                offset = min(start, 8)
                if not _word_at(window, offset, offset + end - start, len(value) < 5 and kind == "user"):
                    continue
            hits.append(start)
        return hits

    def learn_sessions(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """A batch's first pass: every session's files (its main file and side files) learned
        before any session is redacted, so that a value found in one is redacted in all."""
        for given in paths:
            path = Path(given)
            if not path.exists():
                continue
            for file, _ in _files(path):
                try:
                    data = file.read_bytes()
                except OSError:
                    continue  # the conversion or the page says so, naming the file
                if file.suffix == ".zst":
                    from ..core.zst import decompress

                    data = decompress(data, file)
                if not data.startswith(_SQLITE) and b"\x00" not in data[:8192]:
                    self.learn(data)

    def table(self) -> RedactTable:
        """What this run knows, for a batch's workers (placeholders made from the values: the
        same in every worker, a seed drawn for the run when none was given)."""
        if self.seed is None:
            raise InternalError("a table for several processes needs a seeded Redactor")
        keep, extra, allow, allow_patterns = self._settings
        return RedactTable(
            seed=self.seed,
            keep=keep,
            extra=extra,
            allow=allow,
            allow_patterns=allow_patterns,
            known=tuple(self.known.items()),
            users=tuple(sorted(self.users)),
        )

    @classmethod
    def from_table(cls, table: RedactTable) -> Redactor:
        redactor = cls(
            seed=table.seed,
            keep=table.keep,
            extra=table.extra,
            allow=table.allow,
            allow_patterns=table.allow_patterns,
            users=table.users,
        )
        for value, kind in table.known:
            redactor._know(value, kind)
        return redactor

    # --- placeholders ----------------------------------------------------------------------
    def placeholder(self, kind: str, value: str) -> str:
        found = self._names.get(value)
        if found is not None:
            return found
        if self.seed is not None:
            n = self.digest(value)[:6]
        else:
            self._counts[kind] += 1
            n = str(self._counts[kind])
        # a user name is written as a path can hold it, and as a project folder name
        # writes it, so that a redacted cwd and its munged folder name still agree
        name = f"redacted-user-{n}" if kind == "user" else f"«redacted:{kind}:{n}»"
        self._names[value] = name
        return name

    def digest(self, value: str) -> str:
        return hmac.new(self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:10]

    # --- finding ---------------------------------------------------------------------------
    def find(self, text: str, path: Any = None) -> list[tuple[int, int, str]]:
        """The findings in one decoded string (or a text line)."""
        spans = self.detector.spans(text)
        if self._forms:
            extra = self._literal_spans(text)
            if extra:
                spans = merge(spans + extra)
        return spans

    def keep_for(self, harness: str | None) -> frozenset[str]:
        """The keys whose values are structure: the harness's own (``redact_keep``) and
        the ones every JSON file shares."""
        name = harness or ""
        if name not in self._keeps:
            found = registry.find(name) if name else None
            self._keeps[name] = COMMON_KEEP | frozenset(found.redact_keep if found is not None else ())
        return self._keeps[name]

    # --- rewriting -------------------------------------------------------------------------
    def redact_bytes(
        self,
        data: bytes,
        name: str,
        report: Report,
        harness: str | None = None,
        spans: list[tuple[int, int, str]] | None = None,
    ) -> bytes:
        """A file's bytes redacted: JSON lines (or one JSON document) by their string values,
        anything else as text. Lines with nothing to redact keep their bytes. ``spans``: the
        findings :meth:`learn` returned for these bytes."""
        if spans is None:
            spans = self.learn(data)
        hits = [start for start, _, _ in spans] + self._raw_literal_hits(data)
        if not hits:
            return data
        keep = self.keep_for(harness)
        first = data.lstrip()[:1]
        if first not in (b"{", b"["):
            return self._redact_text(data, name, report)
        lines = data.split(b"\n")
        if len(lines) > 2 and data.lstrip()[:1] in (b"{", b"[") and _json(lines[0]) is None and _json(data) is not None:
            lines = [data]  # one pretty-printed document
        starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        by_line: dict[int, list[int]] = {}
        for hit in hits:
            index = bisect.bisect_right(starts, hit) - 1
            by_line.setdefault(index, []).append(hit - starts[index])
        wanted = sorted(by_line)
        changed = False
        text_lines = 0
        for index in wanted:
            line = lines[index].decode("utf-8", "surrogateescape")
            number = index + 1
            body, cr = (line[:-1], "\r") if line.endswith("\r") else (line, "")
            if _json(body) is not None:
                raw = lines[index]
                at = sorted(by_line[index]) if raw.isascii() else sorted(_char_offsets(raw, by_line[index]))
                new, found = rewrite_json(body, self.find, self.placeholder, keep, at)
                if found and _json(new) is None:
                    raise InternalError(f"{name}:{number}: redaction would leave a line that is not JSON")
                for kind, where, value in found:
                    # a JSON path names the keys on the way, and a key may be data (a path)
                    where = rewrite_text(where, self.find, self.placeholder)[0] if len(where) > 8 else where
                    report.findings.append(
                        Finding(kind, name, number, where, self.placeholder(kind, value), self.digest(value))
                    )
            else:
                new, found_text = rewrite_text(body, self.find, self.placeholder)
                if found_text:
                    text_lines += 1
                for kind, _, value in found_text:
                    report.findings.append(
                        Finding(kind, name, number, "", self.placeholder(kind, value), self.digest(value))
                    )
            if new != body:
                changed = True
                lines[index] = (new + cr).encode("utf-8", "surrogateescape")
        if text_lines:
            report.notes.append((name, f"{text_lines} line(s) not JSON: redacted as text"))
        if not changed:
            return data
        return b"\n".join(lines)

    def _redact_text(self, data: bytes, name: str, report: Report) -> bytes:
        """A file that is no JSON (a tool result, a file-history backup, a Markdown history)
        redacted as text, whole (a PEM key spans lines), its findings reported by line."""
        text = data.decode("utf-8", "surrogateescape")
        new, found = rewrite_text(text, self.find, self.placeholder)
        if not found:
            return data
        for kind, offset, value in found:
            line = text.count("\n", 0, offset) + 1
            report.findings.append(Finding(kind, name, line, "", self.placeholder(kind, value), self.digest(value)))
        report.notes.append((name, "not JSON: redacted as text"))
        return new.encode("utf-8", "surrogateescape")

    def redact_name(self, name: str) -> str:
        """A file or folder name with what it holds replaced, as a path can hold it."""
        found = self.find(name)
        if not found:
            return name
        pieces, done = [], 0
        for start, end, kind in found:
            pieces += [name[done:start], self.placeholder(kind, name[start:end])]
            done = end
        pieces.append(name[done:])
        safe = re.sub(r"[«»]", "", "".join(pieces)).replace(":", "-").replace("/", "-").replace("\\", "-")
        return safe if safe not in ("", ".", "..") else "redacted"


_STRUCTURAL = re.compile(rb'(?<!\\)":\s*"$')


def _structural(data: bytes, start: int) -> bool:
    """Whether a value found by the name before it is a JSON member's value in the file's own
    structure (``"key":"v2:…"``: the name is a key of the record, not text in a string)."""
    return _STRUCTURAL.search(data[max(0, start - 8) : start]) is not None


def _char_offsets(raw: bytes, offsets: list[int]) -> list[int]:
    """Byte offsets in a UTF-8 line as offsets in its decoded text."""
    return [len(raw[:offset].decode("utf-8", "surrogateescape")) for offset in offsets]


def _unescaped(raw: str) -> str:
    """A value as found in a raw JSON text, its escapes undone where it has any."""
    if "\\" not in raw:
        return raw
    value = raw
    for _ in range(2):  # a JSON text in a string: escaped twice
        try:
            decoded = msgspec.json.decode(f'"{value}"')
        except msgspec.DecodeError:
            break
        if decoded == value:
            break
        value = decoded
    return value


def _word_at(text: str, start: int, end: int, home_only: bool) -> bool:
    """Whether the name at ``text[start:end]`` stands alone (and, for a short name, is a
    home folder's)."""
    if start > 0 and text[start - 1].isalnum() or end < len(text) and text[end].isalnum():
        return False
    if home_only:
        before = text[max(0, start - 8) : start]
        return before.endswith(("/home/", "/Users/", "-home-", "-Users-", "\\Users\\"))
    return True


def _json(text: str | bytes) -> Any:
    """The JSON value ``text`` holds, or None (for any text that is not one JSON object or array)."""
    if not text or text.lstrip()[:1] not in ("{", "[", b"{", b"["):
        return None
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError):  # nested too deep: its text is redacted
        return None


def _strings(value: Any) -> list[str]:
    out: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return out


# --- files and folders ----------------------------------------------------------------------

_SQLITE = b"SQLite format 3\x00"


def _files(path: Path) -> list[tuple[Path, Path]]:
    """(file, its path relative to what is mirrored) for a file, its side files, or a folder."""
    if path.is_dir():
        return [(p, p.relative_to(path.parent)) for p in sorted(path.rglob("*")) if p.is_file()]
    found = [(path, Path(path.name))]
    harness = _harness_of(path)
    store = registry.get(harness).store if harness else None
    if store is not None and store.side_files is not None:
        for side in store.side_files(path).values():
            for extra in side:
                extra = Path(extra)
                if extra.is_file() and extra.parent.is_relative_to(path.parent):
                    found.append((extra, extra.relative_to(path.parent)))
    return list(dict.fromkeys(found))


def _harness_of(path: Path, data: bytes | None = None) -> str | None:
    """The harness of a session file, by its first line's signature or by detection; None for
    any other file."""
    if path.suffix not in (".jsonl", ".json", ".ndjson"):
        return None
    from ..kit.detect import detect

    try:
        head = data if data is not None else path.open("rb").read(1 << 16)
        name = registry.sniff(head.split(b"\n", 1)[0]) or detect(head[: head.rfind(b"\n") + 1] or head)
    except (OSError, ValueError):
        return None
    return None if name == "jsonl" else name


def redact_paths(
    paths: Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None,
    redactor: Redactor,
    *,
    write: bool = True,
) -> Report:
    """Redact files and folders into ``out`` (folders mirrored, names redacted too); with
    ``write`` False only the report is made."""
    from ..core.atomic import write_atomic

    report = Report()
    jobs: list[tuple[Path, Path]] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(f"{path}: no such file or folder")
        jobs += _files(path)
    datas = {}
    learned = {}
    for file, _ in jobs:  # first pass: the values to redact wherever they are
        try:
            data = file.read_bytes()
        except OSError as exc:
            report.notes.append((redactor.redact_name(str(file)), f"not read: {exc.strerror}"))
            continue
        if file.suffix == ".zst":
            from ..core.zst import decompress

            data = decompress(data, file)
        datas[file] = data
        if not data.startswith(_SQLITE) and b"\x00" not in data[:8192]:
            learned[file] = redactor.learn(data)
    single = len(jobs) == 1 and out is not None and not Path(out).is_dir() and Path(out).suffix != ""
    for file, rel in jobs:
        if file not in datas:
            continue
        if file.is_symlink():  # a link is not followed out of the folder: said, not written
            report.notes.append(
                (str(Path(*[redactor.redact_name(p) for p in rel.parts])), "a symbolic link: not written")
            )
            continue
        data = datas.pop(file)
        # the report names a file as it is written (its name redacted: a home folder's user name
        # is in many a path)
        target_rel = Path(*[redactor.redact_name(part) for part in rel.parts])
        name = str(target_rel)
        report.files += 1
        if data.startswith(_SQLITE):
            _redact_database(file, target_rel, out if write else None, redactor, report)
            continue
        if b"\x00" in data[:8192]:
            report.notes.append((name, "binary: not written"))
            continue
        new = redactor.redact_bytes(data, name, report, _harness_of(file, data), learned.pop(file, None))
        if not write or out is None:
            continue
        target = Path(out) if single else Path(out) / target_rel
        if file.suffix == ".zst":
            import zstandard

            new = zstandard.ZstdCompressor().compress(new)
        write_atomic(target, new)
        report.written.append(str(target))
    return report


def _database_sessions(db: Path) -> tuple[str, list[Any]] | None:
    """The harness whose store a SQLite file fits best, and the sessions in it (each a
    NativeSession: the session's export document), or None when no store reads it."""
    dialects = [h for h in registry.harnesses().values() if h.store is not None and h.store.open is not None]
    if not dialects:
        return None
    dialects.sort(key=lambda h: h.store.database_fit(db), reverse=True)
    harness = dialects[0]
    store = harness.store
    ids = [info.id for info in store.discover(db.parent) if str(info.path) == str(db)]
    if not ids:  # a database not named as the store names its own: its only session
        return harness.name, [store.open(db, None)]
    return harness.name, [store.open(db, session_id) for session_id in ids]


def _redact_database(db: Path, rel: Path, out: Any, redactor: Redactor, report: Report) -> None:
    """A database store is redacted as its sessions' export documents, one file a session
    under ``<name>.export/`` (the database itself is not written: an export is what the
    client imports)."""
    from ..core.atomic import write_atomic
    from ..core.ids import check_id

    try:
        found = _database_sessions(db)
    except (InputError, OSError, ValueError) as exc:
        report.notes.append((str(rel), f"a SQLite database no store reads ({type(exc).__name__}): not written"))
        return
    if found is None:
        report.notes.append((str(rel), "a SQLite database no store reads: not written"))
        return
    harness, sessions = found
    folder = rel.with_name(rel.name + ".export")
    for session in sessions:
        data = session.dump()
        session_id = check_id(_json(data).get("info", {}).get("id", "session") if _json(data) else "session")
        name = str(folder / f"{redactor.redact_name(session_id)}.json")
        new = redactor.redact_bytes(data, name, report, harness, redactor.learn(data))
        if out is not None:
            target = Path(out) / name
            write_atomic(target, new)
            report.written.append(str(target))
    report.notes.append(
        (str(rel), f"a {harness} database: {len(sessions)} session(s) exported and redacted into {folder}")
    )


_WORKER_REDACTORS: dict[str, Redactor] = {}


def redactor_for(table: RedactTable) -> Redactor:
    """The redactor a batch's worker uses for ``table``'s run: built once a process."""
    found = _WORKER_REDACTORS.get(table.seed)
    if found is None:
        _WORKER_REDACTORS.clear()  # one run at a time: the last run's values are not kept
        found = _WORKER_REDACTORS[table.seed] = Redactor.from_table(table)
    return found


def redact_written(written: Any, harness: str, redactor: Redactor, report: Report) -> Any:
    """A converter's output (``registry.Written``) redacted: each file's bytes as the target
    harness's, and the files' names and the project folder as text (``convert --redact``)."""
    learned = {rel: redactor.learn(data) for rel, data in written.files.items()}
    files = {}
    for rel, data in written.files.items():
        name = "/".join(redactor.redact_name(part) for part in rel.split("/"))
        files[name] = redactor.redact_bytes(data, name, report, harness, learned[rel])
    cwd = written.cwd
    if cwd is not None:
        new, _ = rewrite_text(cwd, redactor.find, redactor.placeholder)
        cwd = new
    return registry.Written(session_id=written.session_id, files=files, cwd=cwd)


def redact_conversation(conversation: Any, redactor: Redactor, report: Report, name: str = "<conversation>") -> Any:
    """A Common conversation with its text redacted (for ``export --redact`` and
    ``convert --redact``): its Common JSON, redacted as any JSON document, read back."""
    from ..kit.changes import to_json
    from ..model.common_json import from_json

    data = to_json(conversation)
    return from_json(redactor.redact_bytes(data, name, report))
