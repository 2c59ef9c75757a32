"""Run one job per session across processes: batch conversion and the Parquet export.

:func:`run` hands each item to a worker function in a pool of processes (or in this
process with ``jobs=1``) and yields an :class:`Outcome` per item as they finish; a job that
raises becomes a ``failed`` outcome naming the error, so one bad session never stops the
batch. Items travel to the workers in small chunks (one task per item would spend more on
the pool's messages than on a small session), and the workers are forked after
``prepare`` has imported what they need, so no worker imports it again.
:func:`convert_one` is the worker behind ``txcodec convert SRC... -o DIR``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec


class Outcome(msgspec.Struct, kw_only=True):
    """What happened to one item: ``converted``, ``skipped`` (``reason`` says why) or
    ``failed`` (``reason`` is the error, one line); ``outputs`` are the files written;
    ``losses`` counts the loss report's entries by kind; ``data`` is whatever else the
    worker hands back (the export's rows)."""

    source: str
    status: str
    reason: str | None = None
    session_id: str | None = None
    outputs: list[str] = msgspec.field(default_factory=list)
    losses: dict[str, int] = msgspec.field(default_factory=dict)
    data: Any = None


def default_jobs() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def run(
    items: Iterable[Any],
    work: Callable[[Any], Outcome],
    jobs: int | None = None,
    *,
    prepare: Callable[[], None] | None = None,
    chunk: int | None = None,
    in_process: bool = False,
) -> Iterator[Outcome]:
    """``work(item)`` for every item, ``jobs`` processes at a time (``work`` and the items
    must pickle: a module-level function and plain values), yielding outcomes as chunks of
    ``chunk`` items finish (default: small enough to keep every worker busy to the end).
    ``prepare()`` runs here before the workers start: what it imports, they inherit.
    ``in_process`` runs every item here, as ``jobs=1`` does: the caller knows the work is
    too little to pay for starting and feeding a pool."""
    items = list(items)
    jobs = min(jobs or default_jobs(), len(items)) or 1
    if jobs == 1 or in_process:
        for item in items:
            yield _guarded(work, item)
        return
    if prepare is not None:
        prepare()
    size = chunk or max(1, min(32, len(items) // (jobs * 4)))
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    from concurrent.futures import FIRST_COMPLETED  # slow to import: only for several files
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import wait

    todo = iter(chunks)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
        # a few chunks per worker in flight, and a finished one let go once yielded: the
        # outcomes waiting here (an export's rows) stay bounded however many items there are
        pending = {pool.submit(_run_chunk, work, part): part for part in itertools.islice(todo, 2 * jobs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                part = pending.pop(future)
                for more in itertools.islice(todo, 1):
                    pending[pool.submit(_run_chunk, work, more)] = more
                try:
                    outcomes = future.result()
                except Exception as exc:  # the worker process itself died (killed, out of memory)
                    outcomes = [
                        Outcome(source=str(_source(item)), status="failed", reason=_one_line(exc)) for item in part
                    ]
                del future
                yield from outcomes


def _context() -> Any:
    # forked workers start at once with the parent's imports; elsewhere, the platform's way
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else methods[0])


def _run_chunk(work: Callable[[Any], Outcome], items: list[Any]) -> list[Outcome]:
    return [_guarded(work, item) for item in items]


def _guarded(work: Callable[[Any], Outcome], item: Any) -> Outcome:
    try:
        return work(item)
    except Exception as exc:  # any error of one session is that session's outcome, not the batch's
        source = str(_source(item))
        return Outcome(source=source, status="failed", reason=_one_line(exc).removeprefix(f"{source}: "))


def _source(item: Any) -> Any:
    return getattr(item, "source", item)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if isinstance(exc, (OSError, ValueError)) else f"{type(exc).__name__}: {text}"


def import_readers(harnesses: Iterable[str] | None = None) -> None:
    """Import the readers of ``harnesses`` (default: all), for :func:`run`'s ``prepare``."""
    from importlib import import_module

    from .kit import registry

    for name in harnesses if harnesses is not None else registry.harnesses():
        harness = registry.get(name)
        if harness.read is not None:
            import_module(harness.read.__module__)


# -- batch conversion ------------------------------------------------------------------------------


class ConvertJob(msgspec.Struct, kw_only=True, frozen=True):
    """One conversion: ``source`` (a file) to harness ``to``, written under ``out`` (a
    folder, laid out as the target's store) or installed in the target's store."""

    source: str
    to: str
    from_: str | None = None
    out: str | None = None
    install: bool = False
    skip_existing: bool = False
    loss_dir: str | None = None
    default_cwd: str | None = None  # the project folder of a session that records none
    # a txcodec.redact.RedactTable: the output redacted with the run's table (one object shared
    # by every job, so a chunk of jobs pickles it once)
    redact: Any = None


def prepare_convert(to: str) -> None:
    """What every conversion to ``to`` imports: the readers and that writer."""
    from importlib import import_module

    from . import api  # noqa: F401
    from .kit import registry  # noqa: F401

    import_readers()
    writer = registry.get(to).write
    if writer is not None:
        import_module(writer.__module__)


def convert_one(job: ConvertJob) -> Outcome:
    """Convert one session as ``job`` says; an existing target is ``skipped`` with
    ``skip_existing``, else ``failed``. Never overwrites."""
    from . import api
    from .core.atomic import TargetExists

    if _harness_of(job) == job.to:
        return Outcome(source=job.source, status="skipped", reason=f"already {job.to}")
    written, loss = api.convert(job.source, job.to, from_=job.from_, default_cwd=job.default_cwd)
    redacted = None
    if job.redact is not None:
        from .redact import Report
        from .redact import redact_written
        from .redact import redactor_for

        report = Report()
        written = redact_written(written, job.to, redactor_for(job.redact), report)
        redacted = report.counts()
    counts = loss.counts()
    outcome = Outcome(
        source=job.source, status="converted", session_id=written.session_id, losses=counts, data=redacted
    )
    if job.out is not None:
        root = Path(job.out)
        if job.skip_existing and all((root / rel).exists() for rel in written.files):
            return _skipped(outcome)
    else:
        root = None
    try:
        # -o names a store root: the store's own install merges what sessions share there
        # (Gemini CLI's projects.json, kimi.json, Continue's sessions.json)
        paths = api.install(written, job.to, root)
    except TargetExists:
        if job.skip_existing:
            return _skipped(outcome)
        raise
    outcome.outputs = [str(p) for p in paths]
    if job.loss_dir is not None and loss:
        from .core.atomic import write_atomic

        name = f"{written.session_id}.{job.to}.loss.json"
        data = msgspec.json.format(msgspec.json.encode(loss.to_dict()), indent=2)
        if job.redact is not None:  # the report names the source's files (a home folder) and quotes it
            data = redactor_for(job.redact).redact_bytes(data, name, Report())
        write_atomic(Path(job.loss_dir) / name, data, overwrite=True)
    return outcome


def _harness_of(job: ConvertJob) -> str | None:
    """The source's harness, named or detected from the head of its file (None for a
    folder or a database: its reader says)."""
    if job.from_ is not None:
        return job.from_
    from .kit.detect import detect
    from .kit.detect import is_document

    path = Path(job.source)
    if not path.is_file() or is_document(path):
        return None
    try:
        if path.suffix == ".zst":
            from .core.zst import read_bytes

            return detect(read_bytes(path))
        with open(path, "rb") as f:
            return detect(f.read(1 << 20))
    except OSError:
        return None


def _skipped(outcome: Outcome) -> Outcome:
    outcome.status, outcome.reason, outcome.losses, outcome.data = "skipped", "already done", {}, None
    return outcome


def session_files(folder: Path) -> list[Path]:
    """The session files under ``folder``: every .jsonl (and .jsonl.zst) file, and Gemini
    CLI's legacy ``session-*.json``, except the subagent transcripts and side files that
    belong to a session (Claude Code's ``<id>/subagents/``, Gemini CLI's
    ``chats/<parent id>/``), converted with it."""
    from .verify import collect

    out = []
    for path in collect([folder]):
        parts = path.relative_to(folder).parts
        if "subagents" in parts or "workflows" in parts or "tool-results" in parts:
            continue
        if len(path.parts) >= 3 and path.parts[-3] == "chats":  # a Gemini CLI subagent chat
            continue
        if path.name.endswith((".json", ".json.zst")) and not path.name.startswith("session-"):
            continue  # JSON documents are side files, but Gemini CLI's legacy session-*.json
        out.append(path)
    return out
