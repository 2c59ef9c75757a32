"""Atomic writes and all-or-nothing installs (docs/guarantees.md, "Atomic installs").

A file is written to a temporary beside its target (``.<name>.txcodec-<pid>-<random>.tmp``:
a dotfile no client loads), flushed to disk, then linked into place; a reader never sees a
half-written file, and an existing file is never replaced unless asked.

An install writes every file of a session to such temporaries first, then links the side
files, and the main transcript last: the main file is what makes a session visible to its
client, so a crash at any moment leaves nothing, or side files that no client loads
without it. Temporaries left by a killed run are removed by the next install into the
same folders; side files a killed run already linked are taken as done when they hold
the very bytes asked for, so a retry finishes the install instead of refusing. Folders an
install made for its files are removed again when it fails.

A store with a registry file (``kimi.json``, Continue's ``sessions.json``) updates it
with :func:`update_locked`: read, change and atomic replace under an ``flock`` on the
folder that holds it, so parallel installs keep every entry; the kernel drops the lock of
a killed process, so a kill never blocks the next install.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import StoreError
from .errors import TxcodecError
from .errors import UnsafeId
from .ids import inside
from .ids import is_safe_relpath
from .ids import shown


class TargetExists(TxcodecError, FileExistsError):
    """A file the write would replace exists; nothing was written."""


_TEMP = re.compile(r"\..*\.txcodec-(\d+)-[0-9a-f]{8}\.tmp")
_STALE_AFTER = 24 * 3600  # a live process's temporary this old is left over all the same


def _temp_path(path: Path) -> Path:
    # the name is cut so that the temporary stays within NAME_MAX when the target does; the
    # random part is os.urandom's, as secrets.token_hex's is (importing secrets brings hmac
    # and OpenSSL's hashlib: 4.5 ms of every writing command's start-up)
    return path.with_name(f".{path.name[:96]}.txcodec-{os.getpid()}-{os.urandom(4).hex()}.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's process, alive
        return True
    return True


def clean_stale(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporaries our killed runs left in ``folder`` (their process is gone,
    or they are a day old); returns what was removed. Other files are never touched."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        found = _TEMP.fullmatch(entry.name)
        if found is None or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(found.group(1))
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > _STALE_AFTER
        except OSError:
            continue
        if pid != os.getpid() and (old or not _alive(pid)):
            try:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            except OSError:
                pass
    return removed


@contextlib.contextmanager
def _temp_file(path: Path, mode: int | None) -> Iterator[tuple[Path, BinaryIO]]:
    """A new temporary file beside ``path`` and its handle: on disk (fsynced) when the block
    ends, removed when it raises. ``mode`` None is the usual mode (0666 less the umask)."""
    tmp = _temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK if mode is None else mode)
        with os.fdopen(fd, "wb") as f:
            yield tmp, f
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise


def _write_temp(path: Path, data: bytes, mode: int | None) -> Path:
    with _temp_file(path, mode) as (tmp, f):
        f.write(data)
    return tmp


def _link(tmp: Path, path: Path) -> None:
    """``tmp`` to ``path``, never replacing ``path``: link() fails if the target exists,
    where rename() would silently replace it."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise TargetExists(f"{path} already exists; not overwritten") from None
    _unlink(tmp)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False, mode: int | None = None
) -> Path:
    """``mode`` None gives a new file the usual mode (0666 less the umask)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _publish(_write_temp(path, data, mode), path, overwrite)
    return path


def _publish(tmp: Path, path: Path, overwrite: bool) -> None:
    """A complete temporary file put in place as ``path`` (replacing it only when
    ``overwrite``), and the folder synced so the new name survives a crash; the temporary
    file is removed when it cannot be put there."""
    try:
        if overwrite:
            os.replace(tmp, path)
        else:
            _link(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def atomic_stream(path: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[BinaryIO]:
    """:func:`write_atomic` for output made piece by piece (an HTML page as it renders):
    the file appears whole when the block ends, and not at all when it raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _temp_file(path, None) as (tmp, f):
        yield f
    _publish(tmp, path, overwrite)


def _same_bytes(path: Path, data: bytes) -> bool:
    """``path`` is a regular file (not a symlink) holding exactly ``data``."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


class Staged:
    """Every file of one install written to temporaries, not yet linked: :meth:`commit`
    puts them in place (side files first, the main file last), :meth:`discard` removes them."""

    def __init__(self, root: Path, files: list[tuple[Path, bytes]]) -> None:
        self.root = root
        self.files = files  # (target, data), the main file first
        self.temps: dict[Path, Path] = {}  # target -> its temporary
        self.reused: list[Path] = []  # side files a killed run already put in place
        self.made: list[Path] = []  # folders this install created, parents first
        # every file, the main one too, is already in place with these very bytes: a
        # killed install that only missed its registration (when staged with ``complete_ok``)
        self.complete = False

    @property
    def main(self) -> Path:
        return self.files[0][0]

    def write(self, mode: int | None, complete_ok: bool = False) -> None:
        main = self.files[0][0]
        folders = sorted({target.parent for target, _ in self.files})
        for folder in folders:
            clean_stale(folder)  # first: a refused retry still takes our debris away
        if complete_ok and all(_same_bytes(target, data) for target, data in self.files):
            self.complete = True
            self.reused = [target for target, _ in self.files]
            return
        for target, data in self.files:
            if os.path.lexists(target):
                if target != main and _same_bytes(target, data):
                    self.reused.append(target)  # an interrupted install of this very session
                    continue
                what = (
                    "already exists; not overwritten"
                    if target == main
                    else (
                        "already exists with other content; not overwritten (a side file of another session "
                        "under this id, or left by an interrupted install: remove it to retry)"
                    )
                )
                raise TargetExists(f"{target} {what}")
        for folder in folders:
            self._make(folder)
            if not inside(self.root, folder):  # a symlinked folder made meanwhile
                raise StoreError(f"{folder} leads out of {self.root} (a symlink); not written")
        for target, data in self.files:
            if target not in self.reused:
                self.temps[target] = _write_temp(target, data, mode)

    def _make(self, folder: Path) -> None:
        missing = []
        parent = folder
        while not os.path.lexists(parent) and parent != parent.parent:
            missing.append(parent)
            parent = parent.parent
        folder.mkdir(parents=True, exist_ok=True)
        self.made += [f for f in reversed(missing) if f not in self.made]

    def commit(self) -> list[Path]:
        if self.complete:
            return [target for target, _ in self.files]
        main = self.files[0][0]
        linked: list[Path] = []
        try:
            for target, _ in self.files[1:]:
                if target in self.temps:
                    _link(self.temps[target], target)
                    del self.temps[target]  # only once linked: a failed link's temporary is discarded below
                    linked.append(target)
            for folder in sorted({t.parent for t, _ in self.files[1:]}):
                _fsync_dir(folder)  # the side files are on disk before the main file names them
            _link(self.temps[main], main)
            del self.temps[main]
        except BaseException:
            for path in linked:  # all or nothing: a session missing its side files is worse than none
                _unlink(path)
            self.discard()
            raise
        _fsync_dir(main.parent)
        return [target for target, _ in self.files]

    def discard(self) -> None:
        """Remove the temporaries, and the folders this install made when they are empty
        again (a failed install leaves no empty session folder)."""
        for tmp in self.temps.values():
            _unlink(tmp)
        self.temps.clear()
        for folder in reversed(self.made):
            try:
                os.rmdir(folder)  # only when empty: someone else's file keeps it
            except OSError:
                pass
        self.made.clear()

    def undo(self) -> None:
        """Take a committed install back out (its registration failed after all): the
        files it linked, then its empty folders. Files a killed run had left are kept."""
        for target, _ in self.files:
            if target not in self.reused:
                _unlink(target)
        self.discard()


def stage(
    root: str | os.PathLike[str],
    files: Iterable[tuple[str, bytes]],
    mode: int | None = 0o600,
    *,
    complete_ok: bool = False,
) -> Staged:
    """Check every relative path (it must stay under ``root``, no symlink leading out) and
    that no file exists (our own side files from a killed run excepted), then write the
    temporaries. Nothing is visible until :meth:`Staged.commit`. Session files are private
    by default (0600), as the clients write their own.

    ``complete_ok``: when every file, the main one included, is already in place with the
    very bytes asked for, nothing is written and :attr:`Staged.complete` is set; the
    caller then finishes (registers) or refuses the install."""
    root = Path(root)
    targets = []
    for rel, data in files:
        if not is_safe_relpath(rel):
            raise UnsafeId(f"{shown(rel)} escapes {root} or is not a safe relative file name; nothing written")
        target = root / rel
        if not inside(root, target.parent):
            raise StoreError(f"{target.parent} leads out of {root} (a symlink); nothing written")
        if target.is_symlink():  # never written through, wherever it points
            raise StoreError(f"{target} is a symlink; nothing written")
        targets.append((target, data))
    if not targets:
        raise StoreError("nothing to install")
    staged = Staged(root, targets)
    try:
        staged.write(mode, complete_ok)
    except BaseException:
        staged.discard()
        raise
    return staged


def install_files(root: str | os.PathLike[str], files: dict[str, bytes]) -> list[Path]:
    """Write every file under ``root``, the first (the main transcript) last; refuse,
    before anything is visible, when a path would leave ``root`` or a file exists. When a
    step fails anyway (a full disk), what this call put in place is removed again."""
    return stage(root, files.items()).commit()


LOCK_TIMEOUT = 60.0  # seconds an install waits for another one's registry update


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """An exclusive ``flock`` for the block on the folder that holds the registry file
    ``path``: every txcodec process (and thread) updating a registry there takes turns.
    Locking the folder leaves no lock file behind in the client's store, and the kernel
    releases the lock when its holder dies, so a killed install never blocks the next."""
    folder = Path(path).parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise StoreError(f"{folder}: cannot open to lock it ({exc.strerror or exc})") from exc
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreError(f"{path} is being updated by another process (waited {timeout:.0f} s)") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


def update_locked(
    path: str | os.PathLike[str], change: Callable[[bytes | None], bytes | None], *, mode: int | None = None
) -> bool:
    """Read, change and atomically replace the registry file ``path`` under :func:`locked`:
    ``change`` gets its bytes (None when there is no such file) and returns the new bytes,
    or None to leave it as it is (it raises to refuse). Returns whether it was written."""
    path = Path(path)
    with locked(path):
        clean_stale(path.parent)  # a killed update's temporary
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        new = change(old)
        if new is None or new == old:
            return False
        write_atomic(path, new, overwrite=True, mode=mode)
        return True


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
