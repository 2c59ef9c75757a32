"""``txcodec convert`` and ``txcodec resume``: Common-mediated conversion between harnesses."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from .. import api
from .. import batch
from .. import sessions
from ..batch import session_files
from ..core.atomic import TargetExists
from ..core.atomic import install_files
from ..core.atomic import write_atomic
from ..core.errors import InputError
from ..kit import registry
from ..model.loss import LossReport
from ..model.loss import summary
from .options import SessionParam
from .options import UsageProblem
from .options import canonical_harness
from .options import complete_harness
from .options import echo_json
from .options import target_choice
from .options import user_errors
from .progress import progress
from .progress import summary_table
from .redact import echo_counts
from .redact import make_redactor
from .redact import redact_flag
from .store import filter_options
from .store import select


def _summary(loss: LossReport, target: str, quiet: bool = False) -> None:
    if not quiet:
        click.echo(f"loss: {summary(loss.counts(), target)}", err=True)


# names that say "a file": a target that writes a folder refuses them as -o
_FILE_SUFFIXES = (".jsonl", ".json", ".zst", ".md", ".txt", ".db", ".html")


def _write_out(written: registry.Written, out: Path, to: str, force: bool = False) -> list[Path]:
    """One file to ``out``; several files beneath ``out`` as a folder (paths kept).
    ``force`` replaces what is there."""
    if len(written.files) == 1 and not out.is_dir():
        data = written.files[written.main]
        if out.name.endswith(".zst"):  # named compressed: written compressed (read back by every command)
            import zstandard

            data = zstandard.ZstdCompressor().compress(data)
        try:
            return [write_atomic(out, data, overwrite=force)]
        except TargetExists as exc:
            raise click.ClickException(f"{exc} (--force replaces it)") from exc
    if not out.is_dir() and out.name.lower().endswith(_FILE_SUFFIXES):
        raise click.UsageError(
            f"-o {out}: {registry.get(to).title} writes a folder of {len(written.files)} files "
            f"({', '.join(written.files)}); give -o a folder name"
        )
    if force:
        for rel in written.files:
            (out / rel).unlink(missing_ok=True)
    try:
        paths = install_files(out, written.files)
    except TargetExists as exc:
        raise click.ClickException(f"{exc} (--force replaces it)") from exc
    click.echo(f"made the folder {out}/ with {len(paths)} files; the session: {out / written.main}", err=True)
    return paths


def _resume_argv(harness: str, written: registry.Written) -> list[str] | None:
    """The client's command continuing ``written``, as its harness registers it."""
    return registry.get(harness).resume_argv(written.session_id)


def _resume_line(harness: str, written: registry.Written) -> str:
    """The shell line that continues the installed session: in its project folder (the
    client looks the session up there, and the resumed agent works there). Everything from
    a source file is quoted: the id and the folder are each one argument, never shell text."""
    argv = _resume_argv(harness, written)
    if argv is None:
        return f"# {registry.get(harness).title} has no command to resume session {shlex.quote(written.session_id)}"
    line = shlex.join(argv)
    if written.cwd is not None and not _here(written.cwd):
        line = f"cd {shlex.quote(written.cwd)} && {line}"
    return line


def _here(folder: str) -> bool:
    return os.path.realpath(folder) == os.path.realpath(os.getcwd())


def _project_dir(cwd: str | None) -> str | None:
    """The absolute project folder given with ``--cwd`` (the store's folder name and every
    record's ``cwd`` are made from it, so a relative one would name the wrong folder)."""
    return os.path.abspath(cwd) if cwd is not None else None


def _install(written: registry.Written, harness: str, reraise: bool = False) -> None:
    try:
        paths = api.install(written, harness)
    except TargetExists as exc:
        if reraise:
            raise
        raise click.ClickException(f"{exc} (choose a new id with --session-id)") from exc
    for path in paths:
        click.echo(f"installed {path}", err=True)


def _installed_copy(written: registry.Written, harness: str) -> bool | None:
    """Whether the target's store holds ``written`` as it is (None: the store keeps it
    where a plain path cannot tell, a database or a merged file)."""
    store = registry.get(harness).store
    if store is None:
        return None
    root = store.root_for(written.cwd) if store.root_for is not None and written.cwd else store.default_root()
    main = Path(root) / written.main
    if not main.is_file():
        return None
    return main.read_bytes() == written.files[written.main]


def _revision_id(written: registry.Written) -> str:
    """The id of the session's revision these files are: the same source gives the same id,
    so a third resume of an unchanged source reopens the revision, never makes another."""
    import hashlib
    import uuid

    digest = hashlib.sha256(written.files[written.main]).hexdigest()
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"txcodec-revision:{written.session_id}:{digest}"))


def _install_or_reopen(
    written: registry.Written, to: str, src: Path, from_: str | None, cwd: str | None
) -> registry.Written:
    """Install ``written``; when the target has the session already, reopen it if it is
    the same, else install (or reopen) the revision of the changed source, saying which."""
    title = registry.get(to).title
    try:
        _install(written, to, reraise=True)
        return written
    except TargetExists:
        pass
    if _installed_copy(written, to) is not False:
        click.echo(f"{title} has session {written.session_id} already: reopening it", err=True)
        return written
    first = written.session_id
    revision, _ = api.convert(
        src, to, from_=from_, session_id=_revision_id(written), cwd=_project_dir(cwd), default_cwd=os.getcwd()
    )
    try:
        _install(revision, to, reraise=True)
        click.echo(
            f"the source changed since it was installed as {first}: installed a new revision, {revision.session_id}",
            err=True,
        )
    except TargetExists:
        click.echo(f"{title} has this revision already ({revision.session_id}): reopening it", err=True)
    return revision


def _sources(srcs: tuple[str, ...], harness: str | None) -> tuple[list[Path], bool]:
    """The files named (folders searched, ids resolved) and whether this is a batch (more
    than one source, or a folder)."""
    files: list[Path] = []
    batch = len(srcs) > 1
    for name in srcs:
        path = Path(name)
        folder_session = registry.session_in_folder(path) if path.is_dir() else None
        if folder_session is not None:  # a folder that is one session (cline, Kimi CLI, Vibe, OpenHands)
            files.append(folder_session)
        elif path.is_dir():
            files += session_files(path)
            batch = True
        elif path.exists():
            files.append(path)
        else:  # an id, a prefix or latest: looked up in the --from store when one is named
            try:
                files.append(sessions.resolve(name, harness if harness != "common" else None))
            except InputError as exc:
                raise click.BadParameter(str(exc), param_hint="SRC") from exc
    return files, batch


def _batch(
    files: list[Path],
    to: str,
    from_: str | None,
    out: Path | None,
    install: bool,
    skip_existing: bool,
    show_loss: bool,
    jobs: int | None,
    quiet: bool,
    redact: bool = False,
) -> None:
    """Convert every file, in parallel; a summary table at the end; exit 1 if any failed.
    With ``redact``, every session is learned first and the run's table goes to every
    worker: a value gets the same placeholder in every session."""
    if out is None and not install:
        raise UsageProblem("converting several sessions needs -o DIR or --install")
    if out is not None and out.exists() and not out.is_dir():
        raise UsageProblem(f"{out}: not a folder (several sessions are written beneath -o DIR)")
    if not files:
        raise UsageProblem("no session to convert")
    loss_dir = str((out or Path.cwd()) / "loss") if show_loss else None
    # installed sessions go under their own project folder, as one --install does
    default_cwd = os.getcwd() if install else None
    table = None
    if redact:
        import secrets

        redactor = make_redactor(secrets.token_hex(16), (), None)
        redactor.learn_sessions(files)
        table = redactor.table()
    work = [
        batch.ConvertJob(
            source=str(f),
            to=to,
            from_=from_,
            out=str(out) if out else None,
            install=install,
            skip_existing=skip_existing,
            loss_dir=loss_dir,
            default_cwd=default_cwd,
            redact=table,
        )
        for f in files
    ]
    outcomes = []
    with progress(len(work), f"converting to {to}", enabled=not quiet) as advance:
        for outcome in batch.run(work, batch.convert_one, jobs, prepare=lambda: batch.prepare_convert(to)):
            outcomes.append(outcome)
            advance()
    summary_table(outcomes, f"converted to {to}", loss_dir, quiet)
    if redact:  # the counts only: each worker's findings stay in it
        counts: dict[str, int] = {}
        for outcome in outcomes:
            for kind, n in (outcome.data or {}).items():
                counts[kind] = counts.get(kind, 0) + n
        echo_counts(counts)
    if any(o.status == "failed" for o in outcomes):
        raise SystemExit(1)


def register(group: click.Group) -> None:
    @group.command("convert")
    @click.argument("srcs", nargs=-1, metavar="SRC...", shell_complete=SessionParam().shell_complete)
    @click.option(
        "--from",
        "from_",
        type=str,
        metavar="NAME",
        callback=canonical_harness,
        shell_complete=complete_harness,
        help="Source harness (detected when left out; 'common' for Common JSON); with --all, only its store.",
    )
    @click.option("--to", "to", type=target_choice(), required=True, help="Target harness.")
    @click.option(
        "-o",
        "--output",
        "out",
        type=click.Path(path_type=Path),
        help="Output file, or a folder for several files or sessions.",
    )
    @click.option("--install", is_flag=True, help="Install into the target's store (never overwrites).")
    @click.option("--all", "all_", is_flag=True, help="Every session in the stores (narrowed by the filters below).")
    @filter_options
    @click.option(
        "-j", "--jobs", type=click.IntRange(min=1), help="Sessions converted at once (default: the CPU count)."
    )
    @click.option("--skip-existing", is_flag=True, help="Skip a session whose converted files already exist.")
    @click.option("-f", "--force", is_flag=True, help="Replace the -o file (or the files it would write) if there.")
    @click.option(
        "--cwd",
        type=str,
        help="The project folder the target client will resume from (one session; "
        "default: the session's own, else the current folder).",
    )
    @click.option("--session-id", type=str, help="The new session's id (one session; a UUID for Claude Code).")
    @click.option(
        "--loss",
        "show_loss",
        is_flag=True,
        help="The whole loss report: as JSON on stdout (one session), or one file per session in DIR/loss/.",
    )
    @click.option("-q", "--quiet", is_flag=True, help="No loss line and no summary table, only errors.")
    @click.option(
        "--prompt",
        "prompts",
        multiple=True,
        help="The prompt of one run, for a stream_json capture that lacks it (repeat: one per run, in order).",
    )
    @click.option(
        "--input",
        "input_side",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="The stdin side of a stream_json capture (the lines sent to --input-format stream-json), "
        "kept in a file of its own: it gives the prompts.",
    )
    @click.option(
        "--stdin-side",
        is_flag=True,
        help="With --to stream_json: write the user turns as stdin lines for "
        "'claude -p --input-format stream-json', instead of the output capture.",
    )
    @redact_flag
    def convert(
        srcs: tuple[str, ...],
        from_: str | None,
        to: str,
        out: Path | None,
        install: bool,
        all_: bool,
        project: str | None,
        since: str | None,
        until: str | None,
        grep: str | None,
        root: Path | None,
        jobs: int | None,
        skip_existing: bool,
        force: bool,
        cwd: str | None,
        session_id: str | None,
        show_loss: bool,
        quiet: bool,
        prompts: tuple[str, ...],
        input_side: Path | None,
        stdin_side: bool,
        redact: bool,
    ) -> None:
        """Convert sessions to another harness's native format.

        SRC is a file, a folder (every session in it), a session id, an id prefix or
        latest[:HARNESS]; --all takes every session in the stores, narrowed by --from,
        --project, --since, --until and --grep. One session goes to stdout, to -o FILE,
        or into the target's store with --install. Several go beneath -o DIR (laid out
        as the target's store) or into the store, converted in parallel; a bad session
        is reported and the others still converted. Exit status: 0 when every session
        was converted (or skipped), 1 when any failed.
        """
        if out is not None and install:
            raise click.UsageError("-o and --install exclude each other")
        if force and out is None:
            raise click.UsageError("--force replaces what -o names: give -o")
        if all_ and srcs:
            raise click.UsageError("--all takes no SRC")
        if not all_ and not srcs:
            raise click.UsageError("name at least one SRC, or --all")
        filtered = any(v is not None for v in (project, since, until, grep, root))
        if filtered and not all_:
            raise click.UsageError("--project, --since, --until, --grep and --root select sessions for --all")
        if all_:
            rows = select(from_, project, since, until, grep, root, details=False)
            files, many = [Path(r.path) for r in rows if r.parent is None and r.path], True
        else:
            with user_errors():
                files, many = _sources(srcs, from_)
        if many:
            single_only = {
                "--cwd": cwd,
                "--session-id": session_id,
                "--prompt": prompts or None,
                "--input": input_side,
                "--stdin-side": stdin_side or None,
                "--force": force or None,
            }
            given = [name for name, value in single_only.items() if value is not None]
            if given:
                raise click.UsageError(f"{', '.join(given)}: for one session only")
            with user_errors():
                _batch(files, to, from_, out, install, skip_existing, show_loss, jobs, quiet, redact)
            return
        (src,) = files
        with user_errors():
            written, loss = api.convert(
                src,
                to,
                from_=from_,
                session_id=session_id,
                cwd=_project_dir(cwd),
                prompts=list(prompts) if prompts else None,
                input_side=input_side,
                stdin_side=stdin_side,
                default_cwd=os.getcwd() if install else None,
            )
            _refuse_empty(src, loss)
            if redact:
                from ..redact import Report
                from ..redact import redact_written

                report = Report()
                written = redact_written(written, to, make_redactor(None, (), None), report)
                echo_counts(report)
            if install:
                _install(written, to)
                click.echo(_resume_line(to, written))
                if written.cwd is not None and not os.path.isdir(written.cwd):
                    click.echo(
                        f"note: {written.cwd} (the session's project folder) does not exist here; "
                        "create it, or install with --cwd DIR",
                        err=True,
                    )
            elif out is not None:
                for path in _write_out(written, out, to, force):
                    click.echo(f"wrote {path}", err=True)
            elif not show_loss:
                sys.stdout.buffer.write(written.files[written.main])
                if len(written.files) > 1:
                    click.echo(
                        f"note: {len(written.files) - 1} side files not shown; use -o DIR or --install", err=True
                    )
            _summary(loss, to, quiet or show_loss)
            if show_loss:
                echo_json(loss.to_dict())

    @group.command("resume")
    @click.argument("src", type=SessionParam())
    @click.option(
        "--from",
        "from_",
        type=str,
        metavar="NAME",
        callback=canonical_harness,
        shell_complete=complete_harness,
        help="Source harness (detected when left out).",
    )
    @click.option(
        "--to",
        "to",
        type=target_choice(),
        default="claude_code",
        show_default=True,
        help="The client to continue in (a harness with a store).",
    )
    @click.option("--cwd", type=str, help="Project folder (default: the session's own, else the current folder).")
    @click.option("--session-id", type=str, help="The new session's id.")
    @click.option("-q", "--quiet", is_flag=True, help="No loss line.")
    def resume(src: Path, from_: str | None, to: str, cwd: str | None, session_id: str | None, quiet: bool) -> None:
        """Convert SRC to the target harness, install it in that client's store, and
        continue it there (``claude --resume``, ``codex resume``, ...).

        The session is filed under its own project folder (or --cwd) and the client runs
        there when it is on PATH; otherwise the command to run is printed."""
        with user_errors():
            target = registry.get(to)
            if target.store is None:
                raise click.ClickException(f"{target.title} has no store to resume from")
            if target.resume is None:
                raise click.ClickException(f"{target.title} registers no command to resume a session")
            written, loss = api.convert(
                src, to, from_=from_, session_id=session_id, cwd=_project_dir(cwd), default_cwd=os.getcwd()
            )
            _refuse_empty(src, loss)
            # checked before installing: the client runs there
            if written.cwd is not None and not os.path.isdir(written.cwd):
                whose = "--cwd" if cwd is not None else "the session's project folder; choose one with --cwd DIR"
                raise click.ClickException(f"{written.cwd}: not a folder here ({whose})")
            if session_id is not None:
                _install(written, to)
            else:
                written = _install_or_reopen(written, to, src, from_, cwd)
            _summary(loss, to, quiet)
            argv = _resume_argv(to, written)
            client = shutil.which(argv[0])
            if client is None:
                click.echo(f"{argv[0]} is not on PATH; run: {_resume_line(to, written)}")
                return
            click.echo(f"+ {_resume_line(to, written)}", err=True)
            raise SystemExit(subprocess.call([client, *argv[1:]], cwd=written.cwd))


def _refuse_empty(src: Any, loss: Any) -> None:
    """A conversion that would write no conversation is an error, not a success: nothing is
    written or installed (issue 31: a file no reader makes a message of gave a 0-byte file)."""
    empty = [e for e in loss.entries if e.kind == "write:no-conversation"]
    if empty:
        raise click.ClickException(f"{src}: no conversation to write ({empty[0].detail}); nothing written")
