"""Atomic writes: a temp file in the target folder, fsync, then rename. A reader never
sees a half-written file, and an existing file is never replaced unless asked."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import TxcodecError


class TargetExists(TxcodecError, FileExistsError):
    """A file the write would replace exists; nothing was written."""


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False, mode: int | None = None
) -> Path:
    """``mode`` None gives a new file the usual mode (0666 less the umask)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK if mode is None else mode)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() fails if the target exists, where rename() would silently replace it
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise TargetExists(f"{path} already exists; not overwritten") from None
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return path


def install_files(root: str | os.PathLike[str], files: dict[str, bytes]) -> list[Path]:
    """Write every file under ``root``; refuse (before writing anything) when one exists
    or a relative path would escape ``root``. When a write fails anyway (a file appeared
    meanwhile, a full disk), the files already written are removed again."""
    root = Path(root).resolve()
    targets = []
    for rel, data in files.items():
        target = (root / rel).resolve()
        if root != target and root not in target.parents:
            raise ValueError(f"{rel!r} escapes {root}")
        if target.exists():
            raise TargetExists(f"{target} already exists; not overwritten")
        targets.append((target, data))
    done: list[Path] = []
    try:
        for target, data in targets:
            # session files are private, as the clients write their own (0600)
            done.append(write_atomic(target, data, mode=0o600))
    except BaseException:
        # all or nothing: a session missing its side files is worse than none
        for path in done:
            path.unlink(missing_ok=True)
        raise
    return done


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, before any thread runs
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
