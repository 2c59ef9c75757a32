"""A SQLite store redacted: the real ``opencode`` imports a session with fake secrets planted
into a database, and ``txcodec redact`` on the store's folder writes each session's export
document, redacted, that loads and verifies (docs/redact.md#what-the-output-is)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import GOLDEN
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec import api
from txcodec.kit import registry
from txcodec.redact import Redactor
from txcodec.redact import redact_paths
from txcodec.resume_check.report import find_client
from txcodec.verify import verify_file

pytestmark = pytest.mark.real_client


def test_a_database_store_is_redacted_as_exports(tmp_path: Path) -> None:
    if find_client("opencode") is None:
        pytest.fail("the opencode CLI is missing: npm install --prefix clients (see clients/package.json)")
    source = sorted((GOLDEN / "opencode" / "scenarios").glob("*/export.json"))[0]
    planted = plant(source.read_bytes(), "opencode")
    root = tmp_path / "data" / "opencode"
    root.mkdir(parents=True)
    registry.get("opencode").store.install({"planted.json": planted}, root)
    db = root / "opencode.db"
    assert leaks(api.load(db).dump().decode())  # the database holds the planted values
    report = redact_paths([root], tmp_path / "out", Redactor())
    exports = sorted((tmp_path / "out").rglob("*.export/*.json"))
    assert len(exports) == 1, report.notes
    assert any("database" in note for _, note in report.notes)
    text = exports[0].read_text()
    assert not leaks(text)
    assert not any(leaks(str(p)) for p in (tmp_path / "out").rglob("*"))
    assert api.load(exports[0]).harness == "opencode"
    assert verify_file(exports[0]).ok
