"""opencode 1.18.33 and Kilo 7.7.7 (its fork), run for real against the loopback Chat
Completions mock.

opencode: a genuine session (two prompts with a tool call each, the second a ``run
--session``) is generated; its database is read without changing a byte, and reads as its
``opencode export`` does. For both clients: the golden export and its converted copy are
imported (``import FILE``, the way txcodec installs) and resumed with the same history;
X -> Claude Code -> X and X -> Codex resume; ``convert --install`` then the printed
session resumes; a file the client silently starts over from is reported as not resumed.
Kilo imports an opencode export unchanged.

CI cost: opencode runs take 20-30 s, Kilo runs about a minute under load; the runs of a
test go in parallel: about five minutes in all, one claude and two codex runs included.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.chat_views import view
from support.paths import GOLDEN

from txcodec import api
from txcodec.cli import main
from txcodec.harnesses.opencode.dialect import KILO
from txcodec.harnesses.opencode.dialect import OPENCODE
from txcodec.kit import registry
from txcodec.resume_check import opencode as oc
from txcodec.resume_check.mock.openai_chat import MODEL
from txcodec.resume_check.mock.openai_chat import text
from txcodec.resume_check.mock.openai_chat import tool_call

pytestmark = pytest.mark.real_client

DIALECTS = [OPENCODE, KILO]
TIMEOUT = 300


def golden(dialect) -> Path:
    return GOLDEN / dialect.harness / "tool_call_resumed" / "export.json"


def check(dialect, path: Path):
    return oc.check_resume(path, timeout=TIMEOUT, dialect=dialect)


@pytest.fixture(scope="module", autouse=True)
def _installed():
    for dialect in DIALECTS:
        try:
            oc.client_binary(dialect)
        except oc.ClientMissing as exc:
            pytest.fail(str(exc))


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> tuple[Path, Path, str]:
    """(export printed by the client, a copy of the database, the session id)."""
    out = tmp_path_factory.mktemp("opencode")
    with oc.Opencode() as box:
        (box.cwd / "hello.txt").write_text("hello world\n")
        first = box.run(
            "read hello.txt",
            [tool_call("read", {"filePath": str(box.cwd / "hello.txt")}, say="Reading."), text("It says hello world.")],
            timeout=TIMEOUT,
        )
        assert first.exit_code == 0, first.stderr
        (sid,) = box.sessions()
        second = box.run(
            "count the words",
            [tool_call("bash", {"command": "wc -w hello.txt", "description": "count"}, id="call_mock_2"), text("Two.")],
            session=sid,
            timeout=TIMEOUT,
        )
        assert second.exit_code == 0, second.stderr
        sent = oc.history_sent(second.bodies[0], "count the words")
        exported = box.export(sid)
        assert view(sent) == view(api.to_common(api.load(exported)).messages[:4])
        # the database, read while no client runs: not a byte changes, no file appears
        files = sorted(p.name for p in box.data.iterdir())
        digest = hashlib.sha256(box.database.read_bytes()).hexdigest()
        from_db = registry.get("opencode").store.load(sid, box.data)
        assert (
            hashlib.sha256(box.database.read_bytes()).hexdigest() == digest
            and sorted(p.name for p in box.data.iterdir()) == files
        )
        assert api.to_common(from_db).messages == api.to_common(api.load(exported)).messages
        (out / "export.json").write_bytes(exported)
    return out / "export.json", sid


def _convert(path: Path, source: str, target: str, tmp: Path) -> Path:
    written, _ = api.convert(path, target, from_=source, cwd="/tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / f"{target}-{Path(written.main).name}"
    out.write_bytes(written.files[written.main])
    return out


def test_genuine_export_round_trips_and_reads(genuine):
    path, sid = genuine
    session = api.load(path)
    assert session.harness == "opencode" and session.dump() == path.read_bytes() and not session.diagnostics
    c = api.to_common(session)
    assert c.meta.id == sid and [m.role for m in c.messages] == ["user", "assistant", "user", "assistant"] * 2


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.harness)
def test_roundtrip_resumes_with_the_same_history(dialect, genuine, tmp_path):
    sources = [golden(dialect)] + ([genuine[0]] if dialect is OPENCODE else [])
    copies = [_convert(p, dialect.harness, dialect.harness, tmp_path / str(i)) for i, p in enumerate(sources)]
    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(lambda p: check(dialect, p), sources + copies))
    for report in reports:
        assert report.resumed, (report.rejected, report.stderr)
    for i, source in enumerate(sources):
        expected = view(api.to_common(api.load(source)).messages)
        assert view(reports[i].sent) == expected and view(reports[len(sources) + i].sent) == expected


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.harness)
def test_to_claude_and_back_and_to_codex(dialect, tmp_path):
    from txcodec.resume_check import claude_code as claude
    from txcodec.resume_check import codex

    source = golden(dialect)
    expected = view(api.to_common(api.load(source)).messages)
    claude_file = _convert(source, dialect.harness, "claude_code", tmp_path)
    codex_file = _convert(source, dialect.harness, "codex", tmp_path)
    back = _convert(claude_file, "claude_code", dialect.harness, tmp_path / "back")
    with ThreadPoolExecutor(3) as pool:
        claude_run = pool.submit(claude.check_resume, claude_file)
        codex_run = pool.submit(codex.check_resume, codex_file, timeout=TIMEOUT)
        back_run = pool.submit(check, dialect, back)
        claude_report, codex_report, back_report = claude_run.result(), codex_run.result(), back_run.result()
    assert claude_report.resumed, claude_report.stderr
    sent = claude_report.sent
    if sent and sent[-1].role == "user" and getattr(sent[-1].content[-1], "text", None) == claude.RESUME_PROMPT:
        sent[-1].content.pop()
    claude_view = [
        (r, [b for b in blocks if not (b[0] == "text" and b[1].startswith("<system-reminder>"))])
        for r, blocks in view(sent)
    ]
    assert [m for m in claude_view if m[1]] == expected
    assert back_report.resumed, (back_report.rejected, back_report.stderr)
    assert view(back_report.sent) == expected
    assert codex_report.resumed, (codex_report.rejected, codex_report.stderr)

    def texts(view_):  # tool names may be mapped to codex's own: compare texts and outputs
        return [(role, [b for b in blocks if b[0] in ("text", "output")]) for role, blocks in view_]

    sent = codex.comparable(codex_report.sent)
    assert texts(sent) == texts(codex.comparable(api.to_common(api.load(source)).messages))
    assert sum(b[0] == "call" for _, blocks in sent for b in blocks) == 2


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.harness)
def test_install_then_the_printed_session_resumes_and_silent_starts_fail(dialect, tmp_path):
    """``convert --install`` imports with the client itself (into ``$XDG_DATA_HOME/<app>``)
    and prints ``<client> --session <id>``; that session, run with ``run --session <id>``
    and the sandbox's model, sends the history. An export whose messages hold only
    bookkeeping parts imports, and the client then starts over with exit 0: NOT resumed."""
    source = GOLDEN / "pi" / "tool_call" / "session.jsonl"  # from another harness: provider "txcodec"
    expected = view(api.to_common(api.load(source)).messages)
    silent = json.loads(golden(dialect).read_bytes())
    for message in silent["messages"]:
        message["parts"] = [p for p in message["parts"] if p["type"] in ("step-start", "step-finish")]
    silent_file = tmp_path / "silent.json"
    silent_file.write_text(json.dumps(silent))
    with oc.Opencode(dialect) as box, ThreadPoolExecutor(2) as pool:
        silent_run = pool.submit(check, dialect, silent_file)
        env = {**box.env(), "PWD": None}
        result = CliRunner().invoke(
            main, ["convert", "--to", dialect.harness, "--install", "--cwd", str(box.cwd), str(source)], env=env
        )
        assert result.exit_code == 0, result.output
        command = result.stdout.strip()
        sid = command.split()[-1]
        assert command == f"cd {shlex.quote(str(box.cwd))} && {dialect.binary} --session {sid}" and box.sessions() == [
            sid
        ]
        tables = dialect.extra_tables
        from txcodec.harnesses.opencode.store import tables as db_tables

        assert set(tables) <= db_tables(box.database)
        # why install goes through the client: import files a session under the folder it
        # runs in (it rewrites ``directory``; a session imported elsewhere does not run
        # here), and creates and migrates the database itself
        box.import_file(GOLDEN / "opencode" / "handwritten" / "export.json")
        from txcodec.harnesses.opencode.store import connect

        con = connect(box.database)
        try:
            directories = dict(con.execute("select id, directory from session").fetchall())
            migrations = con.execute("select count(*) from migration").fetchone()[0]
        finally:
            con.close()
        assert directories == {sid: str(box.cwd), "ses_0000000000001AAAAAAAAAAAAA": str(box.cwd)}  # was /home/user/proj
        assert migrations >= 38
        run = box.run("continue", session=sid, model=f"mock/{MODEL}", timeout=TIMEOUT)
        assert run.exit_code == 0, run.stderr
        assert view(oc.history_sent(run.bodies[0], "continue", oc.injected(dialect))) == expected
        again = CliRunner().invoke(main, ["convert", "--to", dialect.harness, "--install", str(source)], env=env)
        assert again.exit_code != 0 and "already exists" in again.output
        report = silent_run.result()
    assert not report.resumed and "new session" in " ".join(report.rejected), (report.rejected, report.stderr)


def test_kilo_imports_an_opencode_export_unchanged():
    report = check(KILO, golden(OPENCODE))
    assert report.resumed, (report.rejected, report.stderr)
    assert view(report.sent) == view(api.to_common(api.load(golden(OPENCODE))).messages)
