"""``txcodec list`` (sessions in the harnesses' stores) and ``txcodec sample``.

Generic over the registry: every harness whose ``store`` module has ``default_root()``
and ``discover(root)`` is listed. An item becomes a dict (its ``to_dict()``, else
``msgspec.to_builtins``), read through a few keys, each with the aliases stores use
(``session_id``/``id``, ``updated``/``last_timestamp``/..., ``title``/``summary``/``name``,
``cwd``, ``status``, ``counts``); a store's result may carry ``errors``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import click
import msgspec

from .. import registry
from .common import echo_json, user_errors


def _stores(harness: str | None) -> dict[str, Any]:
    if harness is not None:
        found = registry.get(harness)
        if found.store is None:
            raise click.ClickException(f"{found.title} has no session store to list")
        return {harness: found.store}
    return {name: h.store for name, h in sorted(registry.harnesses().items()) if h.store is not None}


def _as_dict(item: Any) -> dict:
    if hasattr(item, "to_dict"):
        return item.to_dict()
    return msgspec.to_builtins(item, enc_hook=str)


# Stores name the same things differently: the first key present wins.
_ALIASES = {
    "id": ("session_id", "id"),
    "updated": ("updated", "last_timestamp", "last_updated", "started", "first_timestamp", "start_time"),
    "title": ("title", "summary", "name"),
}


def _field(item: dict, name: str) -> Any:
    for key in _ALIASES[name]:
        if item.get(key):
            return item[key]
    return None


def _messages(item: dict) -> int | None:
    counts = item.get("counts") or {}
    for value in (counts.get("messages"), item.get("messages")):
        if isinstance(value, int):
            return value
    if isinstance(item.get("user_messages"), int):
        return item["user_messages"] + item.get("assistant_messages", 0)
    return None


def _row(item: dict) -> str:
    counts = item.get("counts") or {}
    messages = _messages(item)
    children = counts.get("subagents", 0) + counts.get("workflow_agents", 0)
    when = (_field(item, "updated") or "")[:16].replace("T", " ")
    label = _field(item, "title") or item.get("cwd") or ""
    sizes = f"{messages if messages is not None else '-':>5} msg"
    if children:
        sizes += f" +{children} agents"
    return f"{when:16}  {item.get('status', ''):13}  {sizes:20}  {_field(item, 'id')}  {label}"


def _stored_sessions(root: Path | None, harness: str | None) -> tuple[list[dict], list[str]]:
    items, errors = [], []
    for name, store in _stores(harness).items():
        try:
            found = store.discover(root)
        except (OSError, ValueError) as exc:  # one store's trouble does not hide the others
            errors.append(f"{name}: {exc}")
            continue
        errors += [f"{name}: {e}" for e in getattr(found, "errors", [])]
        for item in found:
            row = _as_dict(item)
            row.setdefault("harness", name)
            items.append(row)
            errors += [f"{name}: {e}" for e in row.get("errors") or []]
    items.sort(key=lambda row: _field(row, "updated") or "", reverse=True)
    return items, errors


def register(group: click.Group) -> None:
    @group.command("list")
    @click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path),
                  help="Store folder to scan instead of each harness's default "
                       "(Claude Code: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects).")
    @click.option("--harness", metavar="NAME", help="Only this harness's store.")
    @click.option("--json", "as_json", is_flag=True, help="One JSON array with every detail.")
    def list_sessions(root: Path | None, harness: str | None, as_json: bool) -> None:
        """List the sessions found in the harnesses' stores, newest first.

        Sessions are grouped by id across project folders; a session whose main
        transcript was pruned while its subagents survive is listed as `pruned`, a file
        holding only metadata records as `metadata-only`. Files that cannot be read are
        reported on stderr and skipped.
        """
        with user_errors():
            items, errors = _stored_sessions(root, harness)
        for error in errors:
            click.echo(f"txcodec: warning: {error}", err=True)
        if as_json:
            echo_json(items)
            return
        if not items:
            click.echo("no sessions found", err=True)
        for item in items:
            click.echo(f"{item['harness']:12}  {_row(item)}")

    @group.command("sample")
    @click.option("--harness", default="claude_code", show_default=True, metavar="NAME",
                  help="Whose sample session.")
    def sample(harness: str) -> None:
        """Print the path of a small synthetic session bundled with txcodec.

        Try the other commands on it, e.g. `txcodec inspect "$(txcodec sample)"`.
        """
        click.echo(sample_path(harness))


def sample_path(harness: str) -> Path:
    folder = resources.files("txcodec") / "samples" / harness
    found = sorted(p for p in folder.iterdir() if p.name.endswith(".jsonl")) if folder.is_dir() else []
    if not found:
        raise click.ClickException(f"no sample session for {harness!r}")
    return Path(str(found[0]))
