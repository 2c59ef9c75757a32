"""opencode: sessions in ``$XDG_DATA_HOME/opencode/opencode.db``, in and out as export JSON.

``records`` (the export document), ``codec`` (bytes <-> document), ``store`` (the database,
read-only; install through ``opencode import``), ``read`` (-> Common), ``write`` (Common ->
an export ``opencode import`` takes) and ``dialect`` (what Kilo, a fork, changes).
"""

from __future__ import annotations

from typing import Any

from ...kit.registry import Harness
from ...kit.registry import lazy
from .codec import CODEC
from .dialect import OPENCODE
from .dialect import Dialect
from .store import STORE


def detector(dialect: Dialect):
    """An export document: ``info`` with a ``ses_`` id and ``messages`` of ``{info, parts}``.
    The version tells opencode (1.x) from Kilo (7.x), whose exports are otherwise the same."""

    def detect(sample: list[Any]) -> int:
        for value in sample[:1]:
            if (
                not isinstance(value, dict)
                or not isinstance(value.get("info"), dict)
                or not isinstance(value.get("messages"), list)
            ):
                continue
            info = value["info"]
            if not (isinstance(info.get("id"), str) and info["id"].startswith("ses_")):
                continue
            version = info.get("version") if isinstance(info.get("version"), str) else ""
            mine = version.split(".")[0] == dialect.version.split(".")[0]
            return 30 if mine else 10 if dialect is OPENCODE else 0
        return 0

    return detect


_READ = lazy(f"{__name__}.read", "read")  # one reader for opencode and Kilo, imported when first called


def writer(dialect: Dialect):
    """The dialect's writer (:func:`.write.writer`), its module imported when it first
    writes: listing every store (export --all) loads this package and writes nothing."""

    def write(conversation: Any, loss: Any, options: Any) -> Any:
        from .write import writer as make

        return make(dialect)(conversation, loss, options)

    return write


def harness(dialect: Dialect, codec: Any, store: Any, check: Any) -> Harness:
    return Harness(
        name=dialect.harness,
        title=dialect.title,
        codec=codec,
        detect=detector(dialect),
        read=_READ,
        write=writer(dialect),
        store=store.declared(),
        check_resume=check,
        resume=(dialect.binary, "--session", "{id}"),
        # the keys whose values are ids or hashes: never redacted (docs/redact.md)
        redact_keep=("id", "sessionID", "messageID", "parentID", "callID", "projectID", "providerID", "modelID"),
    )


HARNESS = harness(OPENCODE, CODEC, STORE, lazy("txcodec.resume_check.opencode", "check_resume"))
