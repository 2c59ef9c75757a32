"""``txcodec export``: one session as Common JSON, Markdown, a self-contained HTML page or
chat fine-tuning JSONL; many sessions (or ``--all``) as HTML pages with an index, a Parquet
dataset, or one Parquet file of chat examples."""

from __future__ import annotations

import os
from pathlib import Path

import click
import msgspec

from .. import sessions
from ..core.atomic import atomic_stream
from ..core.atomic import write_atomic
from ..core.errors import TxcodecError
from ..core.gcpause import no_cycle_collection
from ..kit.changes import to_json
from ..model.loss import LossReport
from ..model.loss import PageLoss
from ..model.summary import message_count
from .options import SessionParam
from .options import from_option
from .options import read_common
from .options import stdout_binary
from .options import user_errors
from .redact import echo_counts
from .redact import make_redactor
from .redact import redact_flag
from .store import filter_options
from .store import select


def _price(row):
    """A model's usage row in dollars for the HTML pages (None: unknown, shown as no cost)."""
    from ..usage import model_cost

    return model_cost(row)


def _markdown(conv, loss) -> bytes:
    from ..export import markdown

    return markdown.render(conv).encode("utf-8")


def _openai_chat(conv, loss) -> bytes:
    from ..export.training import openai_chat_lines

    return openai_chat_lines(conv, loss)


# one conversation in, one document out (html is streamed to its file: see _write_html)
FORMATS = {
    "common": lambda conv, loss: msgspec.json.format(to_json(conv), indent=2) + b"\n",
    "markdown": _markdown,
    "openai-chat": _openai_chat,
    "html": None,
}
# many sessions in, a dataset out (-o names a folder, or the file for hf)
DATASETS = ("parquet", "hf")


def _echo_loss(loss: LossReport, to_stderr: bool) -> None:
    text = msgspec.json.format(msgspec.json.encode(loss.to_dict()), indent=2).decode()
    click.echo(text, err=to_stderr)


def _write_html(conv, out: str) -> None:
    from ..export import html

    if out == "-":
        html.write(conv, stdout_binary(), price=_price)
        stdout_binary().flush()
        return
    with atomic_stream(out) as stream:  # never overwrites an existing file
        html.write(conv, stream, price=_price)


def _missing_folders(out: str) -> Path | None:
    """``out``'s folder when it does not exist yet (the write makes it, with its parents)."""
    parent = Path(out).parent
    return None if parent.exists() else parent


def _told(out: str, what: str, made: Path | None) -> None:
    """One line on stderr for a file written (stdout may be the file)."""
    if made is not None:
        click.echo(f"created folder {made}", err=True)
    click.echo(f"wrote {out}: {what}", err=True)


def _summary_ready() -> None:
    """What the summary needs, imported while the forked writer finishes its files (this
    process would only wait; in the child it would hold up the first take-out)."""
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401


def _parquet_writer():
    from ..export.parquet import start_writer

    return start_writer(waiting=_summary_ready)


def _export_parquet(
    paths: list[Path] | list[str],
    out: str,
    jobs: int | None,
    harnesses: dict[str, str] | None = None,
    quiet: bool = False,
    writer=None,
) -> None:
    """The dataset, with the batch's progress bar and summary (as ``convert`` shows them)."""
    from ..export import parquet
    from .progress import progress
    from .progress import summary_table

    outcomes = []
    writer = writer or _parquet_writer()
    with progress(len(paths), "exporting to parquet", enabled=not quiet) as advance, user_errors():

        def done(outcome) -> None:
            outcomes.append(outcome)
            advance()

        result = parquet.export(paths, out, jobs=jobs, harnesses=harnesses, on_outcome=done, writer=writer)
    summary_table(outcomes, f"exported to parquet: {out}", quiet=quiet)
    if not quiet:
        rows = ", ".join(f"{n} {name}" for name, n in sorted(result.rows.items())) or "no rows"
        click.echo(
            f"{len(result.written)} written ({rows}), {len(result.unchanged)} unchanged, "
            f"{len(result.failed)} failed: {out}",
            err=True,
        )
    if result.failed:
        raise SystemExit(1)


def _export_hf(paths: list[Path], out: str, show_loss: bool, redact=None) -> None:
    """One Parquet file of chat examples; a session that cannot be read is reported and
    left out, the others are written, and the exit status is 1 (as for every batch)."""
    from ..export.training import write_hf

    loss = LossReport()
    items = []
    failed = 0
    for path in paths:
        try:
            conv = read_common(path, None, LossReport())
            if redact is not None:
                conv = redact(conv)
        except (click.ClickException, TxcodecError) as exc:  # an internal error too: reported, not the batch's end
            why = exc.format_message() if isinstance(exc, click.ClickException) else f"{path}: {exc}"
            click.echo(f"txcodec: warning: {why}", err=True)
            failed += 1
            continue
        items.append(
            (
                conv,
                conv.meta.source_harness if isinstance(conv.meta.source_harness, str) else None,
                conv.meta.id if isinstance(conv.meta.id, str) else None,
            )
        )
    made = _missing_folders(out)
    with user_errors():
        write_hf(items, out, loss)
    _told(out, f"{len(items)} {'session' if len(items) == 1 else 'sessions'} as chat examples (hf)", made)
    if show_loss:
        _echo_loss(loss, to_stderr=False)
    if failed:
        click.echo(f"{len(items)} sessions written, {failed} failed: {out}", err=True)
        raise SystemExit(1)


def _redacting():
    """What --redact adds to an export: a conversation redacted (and the report of the run)."""
    from ..redact import Report
    from ..redact import redact_conversation

    with user_errors():
        redactor = make_redactor(None, (), None)
    report = Report()
    return (lambda conv: redact_conversation(conv, redactor, report)), redactor, report


def _redacted_copies(paths: list, redactor) -> tuple[list[str], object]:
    """The sessions redacted into a temporary folder (a dataset's workers read files): the
    copies' paths, and the folder (removed when the export is done)."""
    import tempfile

    from ..redact import redact_paths

    folder = tempfile.TemporaryDirectory(prefix="txcodec-redact-")
    copies = []
    with user_errors():
        for n, path in enumerate(paths):
            target = Path(folder.name) / str(n) / Path(path).name
            redact_paths([path], target, redactor)
            copies.append(str(target))
    return copies, folder


def _export_all(
    rows: list, fmt: str, out: str, jobs: int | None, show_loss: bool, writer=None, redact: bool = False
) -> None:
    """Every selected stored session (not the subagent chats listed under one)."""
    rows = [row for row in rows if row.parent is None and row.path]
    if redact and fmt != "html":
        convert, redactor, report = _redacting()
        if fmt == "parquet":
            copies, folder = _redacted_copies([row.path for row in rows], redactor)
            with folder:
                _export_parquet(copies, out, jobs, {c: row.harness for c, row in zip(copies, rows)}, writer=writer)
        else:
            _export_hf([Path(row.path) for row in rows], out, show_loss, convert)
        echo_counts(report)
        return
    if fmt == "html":
        from ..export import site

        redactor = redacted = None
        if redact:  # one table for the whole site: a value has one placeholder on every page
            from ..redact import Report

            with user_errors():
                redactor, redacted = make_redactor(None, (), None), Report()
        with user_errors():
            report = site.export_store(
                [msgspec.to_builtins(row) for row in rows], out, price=_price, redactor=redactor, redacted=redacted
            )
        if redacted is not None:
            echo_counts(redacted)
        for error in report.errors:
            click.echo(f"txcodec: warning: {error}", err=True)
        click.echo(
            f"{len(report.rendered)} pages written, {len(report.unchanged)} unchanged, "
            f"{len(report.errors)} failed: {Path(out) / 'index.html'}",
            err=True,
        )
        if report.errors:  # every format's batch says a failure the same way (docs/guarantees.md)
            raise SystemExit(1)
        return
    if fmt == "parquet":  # the store's listing knows each harness: nothing to detect
        # its paths are already written as pathlib writes them: the manifest's keys as they are
        _export_parquet([row.path for row in rows], out, jobs, {row.path: row.harness for row in rows}, writer=writer)
    else:
        _export_hf([Path(row.path) for row in rows], out, show_loss)


def register(group: click.Group) -> None:
    @group.command("export")
    @click.argument("paths", nargs=-1, type=SessionParam())
    @click.option("--to", "fmt", type=click.Choice([*FORMATS, *DATASETS]), default="common", show_default=True)
    @click.option(
        "-o",
        "--output",
        "out",
        type=str,
        default="-",
        show_default=True,
        help="Output file; '-' for stdout. A folder for --all and --to parquet.",
    )
    @from_option("The input's harness (detected when left out; with --all: only its store).")
    @click.option(
        "--loss",
        "show_loss",
        is_flag=True,
        help="Print the loss report as JSON (on stderr when the export goes to stdout).",
    )
    @click.option(
        "--all",
        "everything",
        is_flag=True,
        help="Every session in the stores (as `list` finds them, with its filters): pages in -o DIR with "
        "an index.html (--to html), or a dataset (--to parquet|hf). Unchanged sessions are not read again.",
    )
    @filter_options
    @click.option("--jobs", type=click.IntRange(1), help="Processes for --to parquet (default: the CPU count).")
    @redact_flag
    def export(
        paths: tuple[Path, ...],
        fmt: str,
        out: str,
        harness: str | None,
        show_loss: bool,
        everything: bool,
        project: str | None,
        since: str | None,
        until: str | None,
        grep: str | None,
        root: Path | None,
        jobs: int | None,
        redact: bool,
    ) -> None:
        """Export sessions (each a file, a session id or prefix, or latest[:HARNESS]).

        One session as Common JSON, Markdown, a self-contained HTML page, or chat
        fine-tuning JSONL (openai-chat). Several, or --all, as a Parquet dataset (parquet,
        docs/dataset.md) or one Parquet file of chat examples that Hugging Face `datasets`
        loads (hf). --all --to html -o DIR writes every stored session as a page, plus an
        index.html with search (docs/html.md).
        """
        if everything:
            if paths:
                raise click.UsageError("give either SESSION or --all, not both")
            if fmt not in ("html", *DATASETS):
                raise click.UsageError("--all exports pages or a dataset: use it with --to html, parquet or hf")
            if out == "-":
                raise click.UsageError("--all writes files: name the folder with -o")
            # the dataset's writer starts first: it gets pyarrow ready while the stores are listed
            writer = _parquet_writer() if fmt == "parquet" else None
            try:
                if fmt == "parquet" and all(value is None for value in (project, since, until, grep)):
                    # the dataset needs only each session's file: the stores need not read them to list them,
                    # nor look into their side folders (the export stamps those: dataset._side_stamp)
                    with user_errors():
                        index = sessions.session_files(harness, root=root, sides=False)
                else:
                    index = select(harness, project, since, until, grep, root, details=False, describe=fmt != "parquet")
            except BaseException:
                if writer is not None:
                    writer.abort()
                raise
            for error in index.errors:
                click.echo(f"txcodec: warning: {error}", err=True)
            _export_all(list(index), fmt, out, jobs, show_loss, writer, redact)
            return
        if any(value is not None for value in (project, since, until, grep, root)):
            raise click.UsageError(
                "--project, --since, --until, --grep and --root select stored sessions: use them with --all"
            )
        if not paths:
            raise click.UsageError("missing SESSION (or --all)")
        if fmt in DATASETS:
            if out == "-":
                raise click.UsageError(f"--to {fmt} writes files: name them with -o")
            if redact:
                convert, redactor, report = _redacting()
            if fmt == "parquet" and redact:
                copies, folder = _redacted_copies(list(paths), redactor)
                with folder:
                    _export_parquet(copies, out, jobs)
            elif fmt == "parquet":
                _export_parquet(list(paths), out, jobs)
            else:
                _export_hf(list(paths), out, show_loss, convert if redact else None)
            if redact:
                echo_counts(report)
            return
        if len(paths) != 1:
            raise click.UsageError(f"--to {fmt} exports one session at a time (or use --all --to html)")
        (path,) = paths
        if out != "-" and os.path.lexists(out):  # told before the read, not after it (the write refuses too)
            raise click.ClickException(f"{out} already exists; not overwritten")
        # a page shows no loss report: unless --loss asks for one, none is gathered
        loss = PageLoss() if fmt == "html" and not show_loss else LossReport()
        if redact:
            convert, _, report = _redacting()
        # as convert: the conversation's objects make no cycle, and the collector would only
        # scan them all again (between reading and writing, and once more when it resumes)
        made = _missing_folders(out) if out != "-" else None
        with user_errors(), no_cycle_collection():
            conv = read_common(path, harness, loss, streamed=True)  # read once, for this one document
            if redact:
                conv = convert(conv)  # a page made to be shared is redacted before it is written
            messages = message_count(conv)
            if fmt == "html":
                _write_html(conv, out)
            elif out == "-":
                stdout_binary().write(FORMATS[fmt](conv, loss))
                stdout_binary().flush()
            else:
                write_atomic(out, FORMATS[fmt](conv, loss))  # never overwrites an existing file
            del conv  # freed while the collector is off
        if redact:
            echo_counts(report)
        if out != "-":
            _told(out, f"{fmt}, {messages} {'message' if messages == 1 else 'messages'}", made)
        if show_loss:
            _echo_loss(loss, to_stderr=out == "-")
