"""The throw-away folders a resume check runs a client in: a root in the temp folder with a
HOME and a project folder below it, removed when the check ends."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any
from typing import TypeVar

_Box = TypeVar("_Box", bound="TempFolders")


def temp_root(name: str) -> Path:
    """A new folder ``txcodec-<name>-*`` in the temp folder."""
    return Path(tempfile.mkdtemp(prefix=f"txcodec-{name}-"))


class TempFolders:
    """For a class with a ``root`` folder: ``home`` and ``cwd`` (the project) below it, made
    on entering (``with box:``), and the root removed on leaving. A client whose store or
    HOME sits elsewhere names its folders in :meth:`folders`."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        return self.root / "project"

    def folders(self) -> list[Path]:
        """What entering makes, in order."""
        return [self.home, self.cwd]

    def __enter__(self: _Box) -> _Box:
        for folder in self.folders():
            folder.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
