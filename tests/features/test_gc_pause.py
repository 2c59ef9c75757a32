"""Conversion pauses the cycle collector (txcodec.core.gcpause.no_cycle_collection), and the
collector's switch is the whole process's: two threads converting at once must not turn
it back on while either still runs, and the state the first found is the one restored."""

from __future__ import annotations

import gc
import os
import threading

import pytest

import txcodec
from txcodec.core.forking import forked_map
from txcodec.core.gcpause import frozen
from txcodec.core.gcpause import no_cycle_collection


@pytest.fixture(autouse=True)
def _collector_restored():
    before = gc.isenabled()
    yield
    (gc.enable if before else gc.disable)()


def test_a_pause_that_ends_first_leaves_the_other_threads_pause_in_place():
    gc.enable()
    inside, first_ended = threading.Event(), threading.Event()
    seen: list[bool] = []

    def second() -> None:
        with no_cycle_collection():
            inside.set()
            first_ended.wait(10)
            seen.append(gc.isenabled())  # the first pause has ended, this one has not

    with no_cycle_collection():
        thread = threading.Thread(target=second)
        thread.start()
        assert inside.wait(10)
    first_ended.set()
    thread.join(10)
    assert seen == [False]
    assert gc.isenabled()  # both ended: back on, as the first pause found it


def test_collection_switched_off_by_the_caller_stays_off():
    gc.disable()
    with no_cycle_collection(), no_cycle_collection():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_threads_converting_at_once_leave_collection_as_they_found_it():
    gc.enable()
    data = txcodec.sample("claude_code").read_bytes()
    errors: list[BaseException] = []

    def convert() -> None:
        try:
            for _ in range(5):
                txcodec.convert(data, "codex", from_="claude_code")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=convert) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert gc.isenabled()


def _collecting(_: int) -> tuple[bool, int]:
    return gc.isenabled(), os.getpid()


def test_workers_are_forked_with_the_collector_on_and_the_answers_come_back_with_it_paused():
    """forked_map pauses collection only while the answers come back (they hold no cycle),
    after its workers are forked: a worker, which may read a session whole, collects."""
    gc.enable()
    answers = forked_map(_collecting, list(range(8)), 2)
    assert all(on for on, _ in answers)
    assert {pid for _, pid in answers} - {os.getpid()}  # read in forked workers
    assert gc.isenabled()


def test_a_freeze_leaves_out_what_is_alive_and_ends_as_it_found_the_collector():
    assert gc.get_freeze_count() == 0
    kept = [[n] for n in range(1000)]
    with frozen():
        assert gc.get_freeze_count() >= len(kept)
        with frozen():  # within a freeze of its own: joins it, which the outer one ends
            late = [[n] for n in range(10)]
        assert gc.get_freeze_count() >= len(kept) + len(late)
    assert gc.get_freeze_count() == 0
