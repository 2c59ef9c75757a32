"""Following with and without ``watchfiles`` (the serve extra; docs/live.md#waiting-for-changes):
notified, a follow looks when the operating system reports a change in the session's folder;
without it, the base install polls (a ``stat`` every interval). Both print what ``show`` prints."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest
from support.paths import GOLDEN

from txcodec import api
from txcodec.core.errors import TxcodecError
from txcodec.export import terminal
from txcodec.live import Changes
from txcodec.live import Watcher
from txcodec.live import follow

SOURCE = next((GOLDEN / "claude_code" / "scenarios" / "write_edit").glob("*.jsonl"))


def _write_later(path: Path, lines: list[bytes]) -> threading.Thread:
    def write() -> None:
        for line in lines:
            time.sleep(0.05)
            with path.open("ab") as file:
                file.write(line)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def _followed(path: Path, **options) -> list[str]:
    view = terminal.FollowView()
    return [text for event in follow(path, idle=1.5, **options) for _, text in view.lines(event)]


def test_notified_a_follow_looks_at_each_change_without_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interval no poll would reach in the test's time: every line still arrives, and
    the waits were woken by the changes."""
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    path = tmp_path / SOURCE.name
    path.write_bytes(lines[0])
    slept: list[float] = []
    woken: list[bool] = []
    real = Changes.wait
    monkeypatch.setattr(Changes, "wait", lambda self, seconds: woken.append(real(self, seconds)) or woken[-1])
    thread = _write_later(path, lines[1:])
    out = _followed(path, notify=True, interval=3600.0, sleep=slept.append)
    thread.join()
    assert all(s < 3600 for s in slept)
    assert sum(woken) >= len(lines) // 2  # most lines (written 0.05 s apart) woke a wait of their own
    assert out[1:] == terminal.render(api.to_common(api.load(path))).splitlines()[1:]


def test_without_watchfiles_a_follow_polls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # the base install: not importable
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    path = tmp_path / SOURCE.name
    path.write_bytes(lines[0])
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    thread = _write_later(path, lines[1:])
    out = _followed(path, interval=0.05, sleep=sleep)
    thread.join()
    assert slept and min(slept) >= 0.05  # a look every interval
    assert out[1:] == terminal.render(api.to_common(api.load(path))).splitlines()[1:]
    assert not Changes([tmp_path]).notified
    with pytest.raises(TxcodecError, match=r"^watching files needs watchfiles: pip install 'txcodec\[serve\]'$"):
        Changes([tmp_path], use=True)


def test_a_wait_is_woken_by_a_change_and_times_out_without_one(tmp_path: Path) -> None:
    changes = Changes([tmp_path], use=True)
    try:
        assert changes.notified
        assert changes.wait(0.3) is False  # nothing changed (the watch starts with this wait)
        (tmp_path / "s.jsonl").write_bytes(b"{}\n")
        assert changes.wait(5.0) is True
    finally:
        changes.close()


def test_watch_watches_its_store_folder(tmp_path: Path) -> None:
    assert Watcher("claude_code", tmp_path).folders() == [tmp_path]
    assert Watcher("claude_code", tmp_path / "absent").folders() == []
