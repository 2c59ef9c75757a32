"""Date filters shared by ``list``, ``convert --all`` and ``usage``: ``--since``/``--until``
take a date (``2026-11-30``), a date and time (ISO 8601), ``today``/``yesterday``, or an age
such as ``7d``, ``12h``, ``2w`` (that long before now). Everything is compared in UTC; a
timestamp without a zone is taken as UTC."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

from .errors import InputError

_AGE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(text: str, *, end: bool = False, now: datetime | None = None) -> datetime:
    """The instant ``text`` names. With ``end=True`` a bare date means the end of that day
    (``--until 2026-11-30`` includes the 30th)."""
    now = now or datetime.now(UTC)
    value = text.strip().lower()
    age = _AGE.match(value)
    if age:
        return now - timedelta(**{_UNITS[age.group(2)]: int(age.group(1))})
    if value in ("today", "yesterday"):
        day = now.date() - timedelta(days=value == "yesterday")
        return _day(day, end)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return _day(date.fromisoformat(value), end)
        return _utc(datetime.fromisoformat(text.strip()))
    except ValueError:
        raise InputError(f"{text!r}: not a date (use 2026-11-30, an ISO time, today, or an age like 7d)") from None


def _day(day: date, end: bool) -> datetime:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start + timedelta(days=1) - timedelta(microseconds=1) if end else start


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_timestamp(value: str | None) -> datetime | None:
    """A timestamp as recorded by a harness (ISO 8601, ``Z`` or offset), or ``None``."""
    if not value:
        return None
    try:
        return _utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def within(value: str | None, since: datetime | None, until: datetime | None) -> bool:
    """Whether a recorded timestamp falls in [since, until]; an unknown one passes only
    when there is no bound."""
    if since is None and until is None:
        return True
    moment = parse_timestamp(value)
    if moment is None:
        return False
    return (since is None or moment >= since) and (until is None or moment <= until)
