"""Issue 34.12: one date grammar for every ``--since``/``--until`` (``txcodec.core.dates``),
units that cannot be misread, and ``--timezone``."""

from __future__ import annotations

import json
from datetime import UTC
from datetime import date
from datetime import datetime

import pytest
from click.testing import CliRunner

from txcodec import api
from txcodec.cli import main
from txcodec.core.dates import parse_day
from txcodec.core.dates import parse_when

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("90s", datetime(2026, 12, 1, 11, 58, 30, tzinfo=UTC)),
        ("30min", datetime(2026, 12, 1, 11, 30, tzinfo=UTC)),
        ("12h", datetime(2026, 12, 1, 0, 0, tzinfo=UTC)),
        ("7d", datetime(2026, 11, 24, 12, 0, tzinfo=UTC)),
        ("2w", datetime(2026, 11, 17, 12, 0, tzinfo=UTC)),
        ("3mo", datetime(2026, 9, 1, 12, 0, tzinfo=UTC)),
        ("3 months", datetime(2026, 9, 1, 12, 0, tzinfo=UTC)),
        ("1y", datetime(2025, 12, 1, 12, 0, tzinfo=UTC)),
        ("today", datetime(2026, 12, 1, tzinfo=UTC)),
        ("20261130", datetime(2026, 11, 30, tzinfo=UTC)),
    ],
)
def test_one_grammar(text, want):
    assert parse_when(text, now=NOW, tz="UTC") == want


def test_a_bare_m_is_refused_with_a_hint():
    with pytest.raises(ValueError, match="minutes or months.*3min or 3mo"):
        parse_when("3m", now=NOW)


def test_a_day_is_a_day_in_the_zone():
    assert parse_when("2026-11-30", tz="Asia/Tokyo") == datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    assert parse_when("2026-11-30T10:00", tz="Europe/Berlin") == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    # 23:30 UTC on the 30th is already the 1st in Tokyo
    late = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)
    assert parse_day("today", now=late, tz="Asia/Tokyo") == date(2026, 12, 1)
    assert parse_day("today", now=late, tz="UTC") == date(2026, 11, 30)
    with pytest.raises(ValueError, match="not a time zone"):
        parse_when("today", tz="Mars/Olympus")


@pytest.mark.parametrize(
    "command",
    [["list"], ["usage", str(api.sample())], ["metrics", str(api.sample())], ["convert", "--all", "--to", "codex"]],
)
def test_every_command_takes_the_same_forms(command, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    for ok in ("2w", "today", "3mo", "30min"):
        out = runner.invoke(main, [*command, "--since", ok, "--timezone", "UTC"])
        assert "not a date" not in out.output and "minutes or months" not in out.output, (command, ok, out.output)
    bad = runner.invoke(main, [*command, "--since", "3m"])
    assert bad.exit_code != 0 and "3min or 3mo" in bad.output, bad.output


def test_usage_days_follow_the_timezone():
    # the sample's calls are at 10:00 UTC on 2026-09-18: still the 18th in UTC, the 18th in Tokyo (19:00)
    # but in Honolulu (UTC-10) they fall at 00:00 on the 18th; in Pago Pago (UTC-11) on the 17th
    def days(zone: str) -> list[str]:
        out = CliRunner().invoke(
            main, ["usage", str(api.sample()), "--by", "day", "--json", "--no-cost", "--timezone", zone]
        )
        assert out.exit_code == 0, out.output
        return [r["day"] for r in json.loads(out.stdout)["rows"]]

    assert days("UTC") == ["2026-09-18"]
    assert days("Pacific/Pago_Pago") == ["2026-09-17"]
