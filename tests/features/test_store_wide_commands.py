"""The six harnesses of issue 18 in the commands that read every store: ``list``, ``usage``
and ``export --all --to html|parquet``. Their golden sessions, written back by their own
writer, are installed in a throw-away home; each must show once (a folder session too),
with its first prompt and as many messages as its conversation holds."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.paths import GOLDEN

from txcodec import api
from txcodec import sessions
from txcodec.cli import main
from txcodec.model import summary

NEW = ("kimi_cli", "mistral_vibe", "cline", "droid", "openhands", "aider")
# the environment variables that move these stores elsewhere, cleared for the test
STORE_ENV = (
    "KIMI_SHARE_DIR",
    "VIBE_HOME",
    "CLINE_DIR",
    "CLINE_DATA_DIR",
    "CLINE_SESSION_DATA_DIR",
    "OPENHANDS_CONVERSATIONS_DIR",
    "OPENHANDS_PERSISTENCE_DIR",
    "AIDER_CHAT_HISTORY_FILE",
    "FACTORY_HOME",
)
SESSIONS = {  # harness -> its golden sessions, as files or folders
    "kimi_cli": [GOLDEN / "kimi_cli" / c / "context.jsonl" for c in ("handwritten", "tool_call_resumed")],
    "mistral_vibe": [GOLDEN / "mistral_vibe" / "handwritten_legacy", GOLDEN / "mistral_vibe" / "unified_resumed"],
    "cline": sorted(GOLDEN.glob("cline/*/*.messages.json")),
    "droid": sorted(p for p in GOLDEN.glob("droid/*/*.jsonl") if p.name != "written.jsonl"),
    "openhands": sorted(p.parent for p in GOLDEN.glob("openhands/*/*/events")),
    "aider": [GOLDEN / "aider" / "tool_call_resumed" / ".aider.chat.history.md"],  # one history a project folder
}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("home")
    project = root / "project"
    project.mkdir()
    expected = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(root))
        for name in STORE_ENV:
            mp.delenv(name, raising=False)
        for harness, paths in SESSIONS.items():
            assert paths, harness
            for path in paths:
                conversation = api.to_common(api.load(path, harness))
                written, _ = api.convert(conversation, harness)
                api.install(written, harness, project if harness == "aider" else None)
                # what the user typed: not context a client injected (``<system-reminder>``...)
                first = next(
                    b.text
                    for m in conversation.messages
                    if m.role == "user"
                    for b in m.content
                    if getattr(b, "text", "").strip() and not b.text.lstrip().startswith("<")
                )
                # aider's history holds no id: the session is named by its project folder
                sid = project.name if harness == "aider" else written.session_id
                expected[(harness, sid)] = (first.strip(), len(conversation.messages))
    return root, project, expected


def _run(home, *args):
    root, project, _ = home
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(root))
        for name in STORE_ENV:
            mp.delenv(name, raising=False)
        mp.chdir(project)
        return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("harness", NEW)
def test_list_shows_each_session_once_with_its_prompt_and_messages(home, harness):
    result = _run(home, "list", "--harness", harness, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    wanted = {sid: v for (h, sid), v in home[2].items() if h == harness}
    assert sorted(r["session_id"] for r in rows) == sorted(wanted)  # one row a session, a folder once
    for row in rows:
        prompt, messages = wanted[row["session_id"]]
        assert row["harness"] == harness
        assert row["first_prompt"] == prompt[: summary.PROMPT_MAX]
        # the user's and the model's turns of the installed session (txcodec.model.summary), no tool result
        installed = api.to_common(sessions.load_row(harness, row["session_id"], row["path"]))
        assert row["messages"] == summary.message_count(installed) <= messages
        assert (row["title"] or row["first_prompt"]).strip()
        assert api.load(row["path"], harness).harness == harness  # the path is the session


def test_list_of_every_store_holds_the_six(home):
    result = _run(home, "list", "--json")
    assert result.exit_code == 0, result.output
    found = sorted((r["harness"], r["session_id"]) for r in json.loads(result.stdout))
    assert found == sorted(home[2])


@pytest.mark.parametrize("harness", NEW)
def test_usage_reads_the_store(home, harness):
    result = _run(home, "usage", "--harness", harness, "--by", "harness")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_export_all_to_html_writes_a_page_a_session(home, tmp_path):
    out = tmp_path / "pages"
    result = _run(home, "export", "--all", "--to", "html", "-o", str(out))
    assert result.exit_code == 0, result.output
    index = (out / "index.html").read_text(encoding="utf-8")
    pages = [p for p in out.rglob("*.html") if p.name != "index.html"]
    assert len(pages) == len(home[2])
    for (harness, sid), (prompt, _) in home[2].items():
        assert prompt[:40].replace("'", "&#39;").replace('"', "&#34;") in index or sid in index, (harness, sid)


def test_export_all_to_parquet_holds_every_session(home, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "dataset"
    result = _run(home, "export", "--all", "--to", "parquet", "-o", str(out))
    assert result.exit_code == 0, result.output
    from txcodec.export import dataset

    tables = dataset.read_tables(out)
    sessions = tables["sessions"].to_pylist()
    # one row a session, by its own id (aider's history holds none: its project folder names it)
    assert sorted(r["harness"] for r in sessions) == sorted(h for h, _ in home[2])
    assert {r["session_id"] for r in sessions if r["harness"] != "aider"} == {s for h, s in home[2] if h != "aider"}
    messages = tables["messages"].to_pylist()
    assert len(messages) == sum(n for _, n in home[2].values())
