"""The one date grammar of every ``--since``/``--until`` (``list``, ``convert --all``,
``export --all``, ``usage``, ``metrics``; docs/cli.md#dates):

* a day: ``2026-11-30`` or ``20261130``, ``today``, ``yesterday``;
* a time: ISO 8601 (``2026-11-30T10:00``, ``…Z``, ``…+02:00``);
* an age, that long before now: a number and a unit, ``90s``, ``30min``, ``12h``, ``7d``,
  ``2w``, ``3mo`` (calendar months), ``1y``; the long words (``minutes``, ``months``) too. A
  bare ``m`` is refused: it could be minutes or months.

A day, and a time written without a zone, are in the ``--timezone`` zone (an IANA name
such as ``Europe/Berlin``, or ``UTC``; by default the system's own). A day as ``--until``
includes the whole day. Timestamps recorded by a harness carry their zone (one without is
taken as UTC)."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from datetime import tzinfo

from .errors import InputError

_AGE = re.compile(r"^(\d+)\s*([a-z]+)$")
_UNITS = {
    "s": "seconds",
    "sec": "seconds",
    "secs": "seconds",
    "second": "seconds",
    "seconds": "seconds",
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hr": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
    "w": "weeks",
    "week": "weeks",
    "weeks": "weeks",
    "mo": "months",
    "month": "months",
    "months": "months",
    "y": "years",
    "year": "years",
    "years": "years",
}
FORMS = "2026-11-30, an ISO time, today, yesterday, or an age: 90s, 30min, 12h, 7d, 2w, 3mo, 1y"


def zone(name: str | None) -> tzinfo:
    """The zone ``--timezone`` names: an IANA name, ``UTC``, or None for the system's own."""
    if name is None or name.lower() == "local":
        return datetime.now().astimezone().tzinfo or UTC
    if name.upper() in ("UTC", "Z"):
        return UTC
    from zoneinfo import ZoneInfo
    from zoneinfo import ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"--timezone {name!r}: not a time zone (use an IANA name such as Europe/Berlin, or UTC)"
        ) from None


def parse_when(
    text: str, *, end: bool = False, now: datetime | None = None, tz: tzinfo | str | None = None
) -> datetime:
    """The instant ``text`` names, in UTC. With ``end=True`` a day means the end of that
    day (``--until 2026-11-30`` includes the 30th). ``tz``: the zone of a day and of a
    zoneless time (a :class:`tzinfo` or a name, see :func:`zone`; None: the system's)."""
    where = tz if isinstance(tz, tzinfo) else zone(tz)
    now = now or datetime.now(UTC)
    value = text.strip().lower()
    age = _AGE.match(value)
    if age and age.group(2) in ("m", "mn"):
        raise InputError(f"{text!r}: is that minutes or months? Write {age.group(1)}min or {age.group(1)}mo")
    if age and age.group(2) in _UNITS:
        n, unit = int(age.group(1)), _UNITS[age.group(2)]
        if unit in ("months", "years"):
            return _months_before(now, n * (12 if unit == "years" else 1))
        return now - timedelta(**{unit: n})
    if value in ("today", "yesterday"):
        day = now.astimezone(where).date() - timedelta(days=value == "yesterday")
        return _day(day, end, where)
    if re.fullmatch(r"\d{8}", value):
        value = f"{value[:4]}-{value[4:6]}-{value[6:]}"
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return _day(date.fromisoformat(value), end, where)
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"{text!r}: not a date (use {FORMS})") from None
    return (moment.replace(tzinfo=where) if moment.tzinfo is None else moment).astimezone(UTC)


def parse_day(text: str, *, now: datetime | None = None, tz: tzinfo | str | None = None) -> date:
    """The day ``text`` names in the zone (``usage`` counts whole days): a day is itself,
    a time or an age the day its instant falls on there."""
    where = tz if isinstance(tz, tzinfo) else zone(tz)
    return parse_when(text, now=now, tz=where).astimezone(where).date()


def _months_before(now: datetime, months: int) -> datetime:
    total = now.year * 12 + now.month - 1 - months
    year, month = divmod(total, 12)
    month += 1
    days = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day  # the month's length
    return now.replace(year=year, month=month, day=min(now.day, days))


def _day(day: date, end: bool, where: tzinfo) -> datetime:
    start = datetime(day.year, day.month, day.day, tzinfo=where)
    if end:
        nxt = day + timedelta(days=1)
        return datetime(nxt.year, nxt.month, nxt.day, tzinfo=where).astimezone(UTC) - timedelta(microseconds=1)
    return start.astimezone(UTC)


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
