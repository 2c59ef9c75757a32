"""Helpers the command modules share."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click
import msgspec

from ..kit import registry


class _HarnessChoice(click.Choice):
    """The registered harnesses, looked up when first needed: building the command
    line then imports no harness package, so ``txcodec --help`` starts fast."""

    def __init__(self, writable: bool = False, extra: tuple[str, ...] = ()) -> None:
        super().__init__((), case_sensitive=True)
        self.writable, self.extra = writable, extra

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        found = sorted(registry.harnesses().items())
        return (*(n for n, h in found if h.write is not None or not self.writable), *self.extra)

    @choices.setter
    def choices(self, value: object) -> None:
        pass

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and value not in self.extra:
            value = registry.canonical(value)  # claude, Codex, gemini-cli: the ids they mean
        # a built-in harness is checked alone: listing the choices imports every harness
        if (
            value in self.extra
            or value in registry.BUILTIN
            and (not self.writable or registry.get(value).write is not None)
        ):
            return value
        if value not in self.choices:  # the same line as --from's: the closest name first
            import difflib

            names = [*self.choices, *registry.ALIASES]
            close = difflib.get_close_matches(str(value).lower(), names, n=1)
            hint = f" (did you mean {registry.canonical(close[0])!r}?)" if close else ""
            self.fail(f"unknown harness {value!r}{hint}; known: {', '.join(self.choices)}", param, ctx)
        return super().convert(value, param, ctx)


class _CanonicalChoice(click.Choice):
    """A fixed list of harness ids that takes their short names and any case too."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return super().convert(registry.canonical(value) if isinstance(value, str) else value, param, ctx)


def canonical_choice(names: list[str]) -> click.Choice:
    """A choice of some harness ids (``sample --harness``), named as everywhere else."""
    return _CanonicalChoice(names)


def harness_choice() -> click.Choice:
    return _HarnessChoice()


def canonical_harness(ctx: Any, param: Any, value: Any) -> Any:
    """An option callback: a harness name as its id (``claude`` → ``claude_code``, any
    case); an unknown name is left for the command to report."""
    return registry.canonical(value) if isinstance(value, str) else value


_TIMEZONE = "txcodec.timezone"


def timezone_option() -> Any:
    """``--timezone ZONE``: the zone of the days (and zoneless times) that ``--since`` and
    ``--until`` name; kept for :func:`chosen_timezone`, so a command needs no parameter."""

    def keep(ctx: click.Context, param: Any, value: str | None) -> str | None:
        if value is not None:
            from ..core.dates import zone

            try:
                zone(value)
            except ValueError as exc:
                raise click.BadParameter(str(exc), ctx, param) from None
            ctx.meta[_TIMEZONE] = value
        return value

    return click.option(
        "--timezone",
        metavar="ZONE",
        expose_value=False,
        callback=keep,
        help="The zone of the days --since/--until name: an IANA name (Europe/Berlin) or UTC; default: the system's.",
    )


def chosen_timezone() -> str | None:
    """The ``--timezone`` of the command running (None: the system's zone)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_TIMEZONE) if ctx is not None else None


def echo_json(value: Any) -> None:
    try:
        click.echo(msgspec.json.format(msgspec.json.encode(value), indent=2).decode())
    except (msgspec.EncodeError, UnicodeEncodeError):
        # a path that is not UTF-8 holds lone surrogates, as os.fsdecode reads it (the
        # listing warns about it): written as \udcXX escapes, which json.loads reads back
        # and os.fsencode turns into the file's own bytes
        import json

        click.echo(json.dumps(msgspec.to_builtins(value), indent=2, ensure_ascii=True))


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn library errors into one clear line and exit status 1."""
    try:
        yield
    except (click.ClickException, BrokenPipeError):  # a reader that stopped (`| head`): click ends quietly
        raise
    except (OSError, ValueError, msgspec.MsgspecError) as exc:
        raise click.ClickException(str(exc)) from exc


def stdout_binary() -> Any:
    return sys.stdout.buffer


def read_common(
    path: Any, harness: str | None = None, loss: Any = None, *, streamed: bool = False, messages: bool = False
) -> Any:
    """The Common conversation in the file at ``path``; errors name the file. A file no
    harness recognizes (empty, or not a known session format) is refused here, with a
    hint, rather than read as generic JSONL.

    ``streamed``: the session is read once, as it is decoded (as ``convert`` reads it),
    when its harness can: its bytes and typed records are never all held at once.
    ``messages`` (with ``streamed``): a ``StreamedConversation`` where the harness reads a
    message at a time (``api.to_common_streamed``); errors while it is read are the
    library's own, for :func:`user_errors`."""
    from .. import api

    try:
        session = (api.load_once if streamed else api.load)(path, harness)
        if harness is None and session.harness == "jsonl":
            what = "empty file" if not session.lines else "no known session format in its first lines"
            raise click.ClickException(f"{path}: {what}; name its harness with --from")
        return api.to_common_streamed(session, loss) if messages else api.to_common(session, loss)
    except click.ClickException:
        raise
    except (OSError, ValueError, msgspec.MsgspecError) as exc:
        raise click.ClickException(str(exc) if str(exc).startswith(f"{path}:") else f"{path}: {exc}") from exc


def complete_harness(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """The registered harnesses starting with what was typed (a ``shell_complete``)."""
    return [n for n in sorted(registry.harnesses()) if n.startswith(incomplete)]


def complete_list(choices: tuple[str, ...]) -> Any:
    """A ``shell_complete`` for a comma-separated list of ``choices``: the one being typed."""

    def complete(ctx: Any, param: Any, incomplete: str) -> list[str]:
        done, _, last = incomplete.rpartition(",")
        head = done + "," if done else ""
        return [head + c for c in choices if c.startswith(last) and c not in done.split(",")]

    return complete


class SessionParam(click.ParamType):
    """A session named the way every command accepts: a path, a session id, an id prefix,
    ``latest`` or ``latest:<harness>`` (looked up in the stores by :mod:`txcodec.sessions`).
    The value is the file's path."""

    name = "SESSION"

    def __init__(self, dir_okay: bool = False, stdin_ok: bool = False):
        self.dir_okay, self.stdin_ok = dir_okay, stdin_ok

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from pathlib import Path

        if isinstance(value, Path):
            return value
        if value == "-" and self.stdin_ok:  # standard input, where the command reads one
            return Path(value)
        path = Path(value)
        if path.exists():
            if path.is_dir() and not self.dir_okay:
                found = registry.session_in_folder(
                    path
                )  # a folder that is one session (cline, Kimi CLI, Vibe, OpenHands)
                if found is not None:
                    return found
                self.fail(f"{value}: is a folder, not a session file", param, ctx)
            return path
        from .. import sessions  # only for a name that is no path
        from ..core.errors import InputError

        try:
            return sessions.resolve(value)
        except InputError as exc:
            self.fail(str(exc), param, ctx)

    def shell_complete(self, ctx: Any, param: Any, incomplete: str) -> list[Any]:
        """The ids of the sessions in the stores that start with what was typed (newest
        first; ``latest`` too), and file names as the shell completes them."""
        from click.shell_completion import CompletionItem

        found = []
        if incomplete and not incomplete.startswith((".", "/", "~")) and "/" not in incomplete:
            from .. import sessions

            try:
                rows = sessions.discover(details=False)
            except (OSError, ValueError, msgspec.MsgspecError):  # no store to read: files only
                rows = []
            seen: dict[str, None] = {}
            for row in rows:
                if row.session_id.startswith(incomplete) and row.parent is None:
                    seen[row.session_id] = None
            found = [CompletionItem(sid) for sid in list(seen)[:50]]
            found += [
                CompletionItem(w)
                for w in ("latest", *(f"latest:{h}" for h in sessions.stores()))
                if w.startswith(incomplete)
            ]
        return [*found, CompletionItem(incomplete, type="file")]


class AliasOption(click.Option):
    """An option whose later names are old spellings kept working but not shown in help
    (``--from`` is the input harness everywhere; ``--harness`` still works where it was
    the name)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        opts = self.opts
        try:
            self.opts = opts[:1]
            return super().get_help_record(ctx)
        finally:
            self.opts = opts


def from_option(help: str = "The input's harness (detected when left out).", **kwargs: Any) -> Any:
    """``--from NAME`` (old name ``--harness``), completing the harness names."""
    return click.option(
        "--from",
        "--harness",
        "harness",
        cls=AliasOption,
        metavar="NAME",
        help=help,
        callback=canonical_harness,
        shell_complete=complete_harness,
        **kwargs,
    )


def target_choice(extra: tuple[str, ...] = ()) -> click.Choice:
    """The harnesses that can be written (shown in help, completed by the shell), looked
    up when first needed."""
    return _HarnessChoice(writable=True, extra=extra)


class UsageProblem(click.ClickException):
    """A usage error told in one line (exit status 2), without click's usage banner."""

    exit_code = 2
