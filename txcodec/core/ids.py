"""Ids from a source are data: they name a file, a folder or a command only once checked.

A session id, agent id or similar read from a transcript can hold anything: ``../victim``,
``$(touch /tmp/x)``, a UUID followed by a newline, 400 characters. Every writer, reader
and installer that builds a path or a command from one goes through this module.

The rules (docs/guarantees.md, "Ids and file names"):

- an id may name a file or folder when it is 1 to :data:`MAX_ID` characters of
  ``[A-Za-z0-9._-]`` starting with a letter or digit (so never ``.``, ``..`` or a hidden
  name); the whole string must match (``fullmatch``: ``$`` would accept a trailing
  newline);
- a UUID is checked the same way, hex digits and hyphens only, nothing around them;
- a relative path a writer returns is :func:`safe_relpath`: POSIX separators, no empty,
  ``.`` or ``..`` part, not absolute, no NUL, control character or backslash.

When a source id cannot be used, writers derive a UUIDv5 from it (:func:`derive_uuid`)
and say so in the loss report; a caller's own ``--session-id`` that breaks the rules is
refused with :class:`~txcodec.core.errors.UnsafeId`.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any
from typing import Callable

from .errors import UnsafeId

try:  # CPython's own SHA-1: a record's name is one short block, and OpenSSL's set-up and
    # state copy cost more than hashing it (0.7 against 1.1 us a name; the same digests)
    from _sha1 import sha1 as _sha1
except ImportError:  # a Python built without it
    from hashlib import sha1 as _sha1

MAX_ID = 128  # well under NAME_MAX (255 bytes) once a client adds a prefix and a suffix
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
# a path part may hold anything a client puts in a file name except these
_BAD_PART = re.compile(r"[\x00-\x1f\x7f\\]")
_NAME_MAX = 255


def is_safe_id(value: Any) -> bool:
    """``value`` may name a file or folder as it is."""
    return isinstance(value, str) and 0 < len(value) <= MAX_ID and _SAFE_ID.fullmatch(value) is not None


def is_uuid(value: Any) -> bool:
    """``value`` is a UUID in its 8-4-4-4-12 hex form, with nothing before or after."""
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def check_id(value: Any, what: str = "id") -> str:
    """``value`` when it may name a file; else :class:`UnsafeId`."""
    if not is_safe_id(value):
        raise UnsafeId(
            f"{what} {shown(value)} cannot name a file: use 1-{MAX_ID} of A-Z a-z 0-9 . _ - "
            "starting with a letter or digit"
        )
    return value


def check_uuid(value: Any, what: str = "session id", why: str = "") -> str:
    """``value`` when it is a UUID; else :class:`UnsafeId` (``why`` says who needs one)."""
    if not is_uuid(value):
        raise UnsafeId(f"{what} {shown(value)} is not a UUID{f' ({why})' if why else ''}")
    return value


def derive_uuid(namespace: uuid.UUID, value: str) -> str:
    """A stable UUIDv5 standing in for an id that cannot be used as it is: ``uuid5``,
    but a lone surrogate in ``value`` (JSON allows one) is hashed rather than refused.

    Writers call this once per record, so the string is made from the digest directly
    (the version and variant bits set as ``uuid.UUID(bytes=..., version=5)`` sets them,
    the test pins the equality) instead of through a ``uuid.UUID`` object."""
    return _uuid5_text(_sha1(namespace.bytes + value.encode("utf-8", "surrogatepass")).hexdigest())


def uuid_namer(namespace: uuid.UUID, prefix: str) -> Callable[[str], str]:
    """``lambda name: derive_uuid(namespace, prefix + name)``, for a writer that names
    every record under one prefix (``<session>/main/<n>``): the namespace and prefix are
    hashed once, and each name only continues a copy of that state."""
    state = _sha1(namespace.bytes + prefix.encode("utf-8", "surrogatepass"))
    copy, variant = state.copy, _VARIANT

    def named(name: str) -> str:
        h = copy()
        h.update(name.encode("utf-8", "surrogatepass"))
        x = h.hexdigest()
        return f"{x[:8]}-{x[8:12]}-5{x[13:16]}-{variant[x[16]]}{x[17:20]}-{x[20:32]}"

    return named


# The hex digit at the variant's place, its two top bits set to RFC 4122's 10.
_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}


def _uuid5_text(x: str) -> str:
    """The UUID text of a SHA-1 hex digest's first 16 bytes, version 5 (the 13th digit)
    and the RFC 4122 variant (the 17th) set."""
    return f"{x[:8]}-{x[8:12]}-5{x[13:16]}-{_VARIANT[x[16]]}{x[17:20]}-{x[20:32]}"


def shown(value: Any) -> str:
    """``value`` for a message: quoted, escaped, cut when long."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def is_safe_relpath(rel: Any) -> bool:
    """``rel`` is a relative POSIX path that stays where it is put: no absolute path, no
    empty, ``.`` or ``..`` part, no NUL, control character or backslash, parts within
    the file name limit."""
    if not isinstance(rel, str) or not rel or rel.startswith("/"):
        return False
    for part in rel.split("/"):
        if part in ("", ".", "..") or _BAD_PART.search(part) or len(part.encode("utf-8", "surrogatepass")) > _NAME_MAX:
            return False
    return True


def safe_relpath(rel: Any) -> str:
    if not is_safe_relpath(rel):
        raise UnsafeId(f"file name {shown(rel)} is not a safe relative path")
    return rel


def inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """``path``, symlinks resolved, is ``root`` (resolved) or lies beneath it: a symlinked
    folder or file that leads out of ``root`` is not inside it."""
    top = Path(root).resolve()
    real = Path(path).resolve()
    return real == top or top in real.parents


# --- working directories -------------------------------------------------------------
# A cwd names the project folder a client resumes from, and several stores make a folder
# name out of it: one with a control character (NUL, newline) can name no real folder.

MAX_CWD = 4096  # PATH_MAX
_BAD_CWD = re.compile(r"[\x00-\x1f\x7f]")


def is_safe_cwd(cwd: Any) -> bool:
    return isinstance(cwd, str) and 0 < len(cwd) <= MAX_CWD and _BAD_CWD.search(cwd) is None


def checked_cwd(cwd: str | None) -> str | None:
    """A caller's cwd (``--cwd``): ``None`` when not given, :class:`UnsafeId` when unusable."""
    if cwd is None or cwd == "":
        return None
    if not is_safe_cwd(cwd):
        raise UnsafeId(f"cwd {shown(cwd)} cannot name a folder (control characters, or too long)")
    return cwd


def source_cwd(cwd: Any, loss: Any) -> str | None:
    """A source's cwd when it can name a folder; an unusable one is reported in ``loss``
    (``write:cwd``) and ``None`` returned, so the writer falls back to its default."""
    if cwd is None or cwd == "" or not isinstance(cwd, str):
        return None
    if not is_safe_cwd(cwd):
        loss.add("write:cwd", f"source cwd {shown(cwd)} cannot name a folder; not used")
        return None
    return cwd
