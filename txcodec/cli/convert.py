"""``txcodec convert`` and ``txcodec resume``: Common-mediated conversion between harnesses."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click

from .. import api, batch, registry, sessions
from ..atomic import TargetExists, install_files, write_atomic
from ..batch import session_files
from ..errors import InputError
from ..loss import LossReport, summary
from .common import SessionParam, UsageProblem, echo_json, target_choice, user_errors
from .progress import progress
from .store import filter_options, select


def _summary(loss: LossReport, target: str, quiet: bool = False) -> None:
    if not quiet:
        click.echo(f"loss: {summary(loss.counts(), target)}", err=True)


def _write_out(written: registry.Written, out: Path) -> list[Path]:
    """One file to ``out``; several files beneath ``out`` as a folder (paths kept)."""
    if len(written.files) == 1 and not out.is_dir():
        data = written.files[written.main]
        if out.name.endswith(".zst"):  # named compressed: written compressed (read back by every command)
            import zstandard

            data = zstandard.ZstdCompressor().compress(data)
        return [write_atomic(out, data)]
    return install_files(out, written.files)


def _resume_line(harness: str, written: registry.Written) -> str:
    # the id came from a source file: quoted, it is one argument and never shell text
    sid = shlex.quote(written.session_id)
    lines = {"claude_code": f"claude --resume {sid}", "codex": f"codex resume {sid}", "gemini_cli": f"gemini --resume {sid}",
             "qwen_code": f"qwen --resume {sid}", "pi": f"pi --session {sid}",
             "copilot_cli": f"copilot --resume {sid}", "continue_cli": f"cn --fork {sid}",
             "opencode": f"opencode --session {sid}", "kilo": f"kilo --session {sid}",
             "cline": f"cline --id {sid}", "droid": f"droid exec --fork {sid}"}
    return lines.get(harness, f"(resume session {sid})")


def _project_dir(cwd: str | None) -> str:
    """The absolute project folder: the store's folder name and every record's ``cwd``
    are made from it, so a relative ``--cwd`` would name the wrong folder."""
    return os.path.abspath(cwd) if cwd is not None else os.getcwd()


def _install(written: registry.Written, harness: str) -> None:
    try:
        paths = api.install(written, harness)
    except TargetExists as exc:
        raise click.ClickException(f"{exc} (choose a new id with --session-id)") from exc
    for path in paths:
        click.echo(f"installed {path}", err=True)


def _run_from(cwd: str) -> None:
    """Claude Code, Gemini CLI, Qwen Code, pi, opencode and Kilo find a session by the
    folder they run in: say so when that is not here."""
    if os.path.abspath(os.getcwd()) != cwd:
        click.echo(f"run it from {cwd}:  cd {shlex.quote(cwd)}", err=True)


def _sources(srcs: tuple[str, ...], harness: str | None) -> tuple[list[Path], bool]:
    """The files named (folders searched, ids resolved) and whether this is a batch (more
    than one source, or a folder)."""
    files: list[Path] = []
    batch = len(srcs) > 1
    for name in srcs:
        path = Path(name)
        inner = sessions.session_in_folder(path) if path.is_dir() else None
        if inner is not None:  # a session that is a folder (cline)
            files.append(inner)
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


def _batch(files: list[Path], to: str, from_: str | None, out: Path | None, install: bool, skip_existing: bool,
           show_loss: bool, jobs: int | None, quiet: bool) -> None:
    """Convert every file, in parallel; a summary table at the end; exit 1 if any failed."""
    if out is None and not install:
        raise UsageProblem("converting several sessions needs -o DIR or --install")
    if out is not None and out.exists() and not out.is_dir():
        raise UsageProblem(f"{out}: not a folder (several sessions are written beneath -o DIR)")
    if not files:
        raise UsageProblem("no session to convert")
    loss_dir = str((out or Path.cwd()) / "loss") if show_loss else None
    work = [batch.ConvertJob(source=str(f), to=to, from_=from_, out=str(out) if out else None, install=install,
                             skip_existing=skip_existing, loss_dir=loss_dir) for f in files]
    outcomes = []
    with progress(len(work), f"converting to {to}", enabled=not quiet) as advance:
        for outcome in batch.run(work, batch.convert_one, jobs):
            outcomes.append(outcome)
            advance()
    _batch_table(outcomes, to, loss_dir, quiet)
    if any(o.status == "failed" for o in outcomes):
        raise SystemExit(1)


def _batch_table(outcomes: list[batch.Outcome], to: str, loss_dir: str | None, quiet: bool) -> None:
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True, highlight=False, markup=False, soft_wrap=False)
    failed = [o for o in outcomes if o.status == "failed"]
    by_status = Counter(o.status for o in outcomes)
    if quiet:
        for o in failed:
            click.echo(f"failed  {o.source}: {o.reason}", err=True)
        return
    table = Table(title=f"converted to {to}", box=None, header_style="bold", title_justify="left")
    table.add_column("result")
    table.add_column("sessions", justify="right")
    for status in ("converted", "skipped", "failed"):
        table.add_row(status + (" (already done)" if status == "skipped" else ""), str(by_status.get(status, 0)))
    console.print(table)
    for o in failed:  # whole lines, never wrapped: a script or a person greps them
        click.echo(f"failed  {o.source}: {o.reason}", err=True)
    kinds: Counter[str] = Counter()
    sessions_with: Counter[str] = Counter()
    for o in outcomes:
        kinds.update(o.losses)
        sessions_with.update(o.losses.keys())
    if kinds:
        losses = Table(box=None, header_style="bold")
        losses.add_column("loss kind (docs/loss.md)")
        losses.add_column("sessions", justify="right")
        losses.add_column("entries", justify="right")
        for kind, n in sorted(kinds.items()):
            losses.add_row(kind, str(sessions_with[kind]), str(n))
        console.print(losses)
        if loss_dir:
            console.print(f"loss reports: {loss_dir}")


def register(group: click.Group) -> None:
    @group.command("convert")
    @click.argument("srcs", nargs=-1, metavar="SRC...")
    @click.option("--from", "from_", type=str, metavar="NAME",
                  help="Source harness (detected when left out; 'common' for Common JSON); with --all, only its store.")
    @click.option("--to", "to", type=target_choice(), required=True, help="Target harness.")
    @click.option("-o", "--output", "out", type=click.Path(path_type=Path),
                  help="Output file, or a folder for several files or sessions.")
    @click.option("--install", is_flag=True, help="Install into the target's store (never overwrites).")
    @click.option("--all", "all_", is_flag=True, help="Every session in the stores (narrowed by the filters below).")
    @filter_options
    @click.option("-j", "--jobs", type=click.IntRange(min=1), help="Sessions converted at once (default: the CPU count).")
    @click.option("--skip-existing", is_flag=True, help="Skip a session whose converted files already exist.")
    @click.option("--cwd", type=str, help="The project folder the target client will resume from (one session).")
    @click.option("--session-id", type=str, help="The new session's id (one session; a UUID for Claude Code).")
    @click.option("--loss", "show_loss", is_flag=True,
                  help="The whole loss report: as JSON on stdout (one session), or one file per session in DIR/loss/.")
    @click.option("-q", "--quiet", is_flag=True, help="No loss line and no summary table, only errors.")
    @click.option("--prompt", "prompts", multiple=True,
                  help="The prompt of one run, for a stream_json capture that lacks it (repeat: one per run, in order).")
    @click.option("--input", "input_side", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                  help="The stdin side of a stream_json capture (the lines sent to --input-format stream-json), "
                       "kept in a file of its own: it gives the prompts.")
    @click.option("--stdin-side", is_flag=True,
                  help="With --to stream_json: write the user turns as stdin lines for "
                       "'claude -p --input-format stream-json', instead of the output capture.")
    def convert(srcs: tuple[str, ...], from_: str | None, to: str, out: Path | None, install: bool, all_: bool,
                project: str | None, since: str | None, until: str | None, grep: str | None, root: Path | None,
                jobs: int | None, skip_existing: bool, cwd: str | None, session_id: str | None, show_loss: bool,
                quiet: bool, prompts: tuple[str, ...], input_side: Path | None, stdin_side: bool) -> None:
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
            single_only = {"--cwd": cwd, "--session-id": session_id, "--prompt": prompts or None,
                           "--input": input_side, "--stdin-side": stdin_side or None}
            given = [name for name, value in single_only.items() if value is not None]
            if given:
                raise click.UsageError(f"{', '.join(given)}: for one session only")
            with user_errors():
                _batch(files, to, from_, out, install, skip_existing, show_loss, jobs, quiet)
            return
        (src,) = files
        with user_errors():
            if install or cwd is not None:
                cwd = _project_dir(cwd)
            written, loss = api.convert(src, to, from_=from_, session_id=session_id, cwd=cwd,
                                        prompts=list(prompts) if prompts else None, input_side=input_side,
                                        stdin_side=stdin_side)
            if install:
                _install(written, to)
                click.echo(_resume_line(to, written))
                if to in ("claude_code", "gemini_cli", "qwen_code", "pi", "opencode", "kilo"):
                    _run_from(cwd)
            elif out is not None:
                for path in _write_out(written, out):
                    click.echo(f"wrote {path}", err=True)
            elif not show_loss:
                sys.stdout.buffer.write(written.files[written.main])
                if len(written.files) > 1:
                    click.echo(f"note: {len(written.files) - 1} side files not shown; use -o DIR or --install", err=True)
            _summary(loss, to, quiet or show_loss)
            if show_loss:
                echo_json(loss.to_dict())

    @group.command("resume")
    @click.argument("src", type=SessionParam())
    @click.option("--from", "from_", type=str, metavar="NAME", help="Source harness (detected when left out).")
    @click.option("--to", "to", type=target_choice(), default="claude_code", show_default=True,
                  help="The client to continue in (a harness with a store).")
    @click.option("--cwd", type=str, help="Project folder (default: the current folder).")
    @click.option("--session-id", type=str, help="The new session's id.")
    @click.option("-q", "--quiet", is_flag=True, help="No loss line.")
    def resume(src: Path, from_: str | None, to: str, cwd: str | None, session_id: str | None, quiet: bool) -> None:
        """Convert SRC to the target harness, install it in that client's store, and
        continue it there (``claude --resume``, ``codex resume``, ...).

        The client runs in the project folder (--cwd) when it is on PATH; otherwise the
        command to run is printed."""
        with user_errors():
            if registry.get(to).store is None:
                raise click.ClickException(f"{registry.get(to).title} has no store to resume from")
            cwd = _project_dir(cwd)
            if not os.path.isdir(cwd):  # checked before installing: the client would run there
                raise click.ClickException(f"{cwd}: not a folder (--cwd)")
            written, loss = api.convert(src, to, from_=from_, session_id=session_id, cwd=cwd)
            _install(written, to)
            _summary(loss, to, quiet)
            line = _resume_line(to, written)
            argv = shlex.split(line)
            client = shutil.which(argv[0])
            if client is None:
                click.echo(f"{argv[0]} is not on PATH; run: {line}")
                _run_from(cwd)
                return
            click.echo(f"+ {line}", err=True)
            raise SystemExit(subprocess.call([client, *argv[1:]], cwd=cwd))
