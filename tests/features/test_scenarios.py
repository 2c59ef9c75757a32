"""The scenario library (``tests/support/scenarios/``) through the whole matrix, with the real
clients.

- the facts each scenario pins hold on its recorded native file (no CLI);
- X -> Common -> X: the real X resumes our file with what it sent for its own file
  (recorded in ``scenario.json`` when the session was made), normalised only by the
  view each client's resume check documents;
- X -> Y for every Y with a real client: Y resumes the converted file, and every user
  text, assistant text, tool call and result, and thinking text the source resumes with
  reaches what Y sends, or the loss report names its kind (``DECLARES``).

``docs/mapping.md`` ("Scenarios") is generated from the same runs and checked here
(``TXCODEC_UPDATE_MAPPING=1`` rewrites it).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.paths import ROOT
from support.scenarios import HARNESSES
from support.scenarios import MORE
from support.scenarios import recorded
from support.scenarios.views import check_resume
from support.scenarios.views import claude_sent_texts
from support.scenarios.views import facts_of
from support.scenarios.views import haystack
from support.scenarios.views import resumed_view
from support.scenarios.views import sent_texts
from support.scenarios.views import unseen

from txcodec import api
from txcodec.kit import registry
from txcodec.kit.registry import WriteOptions
from txcodec.kit.write import carry_context
from txcodec.kit.write import name_persisted_outputs
from txcodec.model.common import Thinking
from txcodec.model.loss import LossReport

pytestmark = pytest.mark.real_client

RESUMABLE = [h for h in HARNESSES if registry.get(h).check_resume is not None]
SCENARIOS = recorded()
# a fact missing from what the target sent is declared when the loss report has one of
# these write kinds (their meaning: docs/mapping.md)
DECLARES = {
    "thinking": (
        "write:thinking",
        "write:thinking-without-text",
        "write:thinking-without-signature",
        "write:redacted-thinking",
    ),
    # a call Codex renames to its own tool (Bash -> exec_command): kept under that name
    "tool-call": ("write:subagent", "write:subagents", "write:children", "write:tool-mapped"),
    "tool-result": ("write:persisted-output", "write:result-block"),
    "user-text": ("write:hidden-by-client", "write:command"),
    "assistant-text": (),
}


def _id(s) -> str:
    return f"{s.harness}-{s.name}"


def _save(written, folder: Path) -> Path:
    for rel, data in written.files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder / written.main


def _convert(scenario, target: str, folder: Path):
    """(conversation, written main file, loss report)."""
    loss = LossReport()
    session = api.load(scenario.main, scenario.harness)
    if scenario.harness == "stream_json":  # a capture lacks the prompts given on argv
        session.prompts = list(scenario.prompts)
    conversation = api.to_common(session, loss)
    # as api.convert does: another client's context reaches the writer as its text, and an
    # output saved beside the source that the target does not write back is named
    written = registry.get(target).write(carry_context(conversation, target, loss), loss, WriteOptions())
    if not registry.get(target).writes_persisted_output:
        name_persisted_outputs(conversation, registry.get(target).title, loss)
    return conversation, _save(written, folder), loss


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_scenario_facts_hold_on_the_recorded_session(scenario):
    lines = scenario.lines()
    assert lines
    for fact in scenario.facts:
        fact(lines)


SAME = [s for s in SCENARIOS if s.harness in RESUMABLE or s.harness in MORE]
# documented, pinned client quirks where our file cannot resume exactly like the
# client's own, by scenario id: why (empty now)
QUIRKS: dict[str, str] = {}


@pytest.mark.parametrize("scenario", SAME, ids=_id)
def test_x_common_x_resumes_like_the_original(scenario, tmp_path):
    meta = json.loads((scenario.folder / "scenario.json").read_text())
    assert meta.get("resumed"), f"the recorded original did not resume: {meta.get('not_resumed')}"
    _, path, _ = _convert(scenario, scenario.harness, tmp_path)
    report = check_resume(scenario.harness, path, like=scenario.main)
    assert report.resumed, (report.rejected, report.stderr[-1500:])
    assert resumed_view(scenario.harness, report) == meta["resumed"]


CAPTURES = [s for s in SCENARIOS if s.harness == "stream_json"]


@pytest.mark.parametrize("scenario", CAPTURES, ids=_id)
def test_a_capture_resumes_like_the_clis_own_session_file(scenario, tmp_path):
    """stream-json -> Claude Code: the real claude resumes our file with what it sends
    for the session file it wrote itself during the same run (compaction, local
    commands and all)."""
    meta = json.loads((scenario.folder / "scenario.json").read_text())
    assert meta.get("resumed"), meta.get("not_resumed")
    _, path, _ = _convert(scenario, "claude_code", tmp_path)
    report = check_resume("claude_code", path)
    assert report.resumed, (report.rejected, report.stderr[-1500:])
    expected = json.loads(json.dumps(meta["resumed"]).replace('"/usage"', '"/cost"').replace('"usage"', '"cost"'))
    # ^ a pinned client quirk: 2.1.332 records the /cost the user typed as /usage (the
    # claude_code local_commands scenario pins it); a capture shows /cost. And the
    # capture prints a command's output without the trailing newlines the file keeps.
    assert _stdout_trimmed(resumed_view("claude_code", report)) == _stdout_trimmed(expected)


def _stdout_trimmed(view: list) -> list:
    for _, blocks in view:
        for block in blocks:
            if block[0] == "envelope" and "local-command-stdout" in block[1]:
                block[1]["local-command-stdout"] = block[1]["local-command-stdout"].rstrip()
    return view


# --- X -> Y ----------------------------------------------------------------------------


def expected_facts(scenario, conversation) -> list[tuple[str, str]]:
    """What the source client resumes with: the facts of the conversation from its last
    compaction on (the summary, the preserved messages, what came after) that are in
    what the real source client sent when it resumed the recorded file (so not, say,
    Claude Code's own API-error notes or earlier thinking, which it does not resend)."""
    messages = conversation.messages
    if conversation.epochs:
        epoch = conversation.epochs[-1]
        keep = set(epoch.preserved_ids)
        messages = [m for m in messages[: epoch.start] if keep & set(m.source_ids)] + messages[epoch.start :]
    resumed = json.dumps(json.loads((scenario.folder / "scenario.json").read_text()).get("resumed"))
    return [(k, f) for k, f in facts_of(messages) if json.dumps(f)[1:-1] in resumed]


# Clients that keep a conversation's earlier thinking in the file but do not send it
# again: Claude Code 2.1.332 (txcodec.resume_check.claude_code.comparable) and Gemini CLI (its
# thoughts are not part of the resumed request: tests/harnesses/gemini_cli/test_gemini_cli_real.py). There a
# thinking fact must be in the written file instead.
THINKING_NOT_RESENT = {"claude_code", "gemini_cli"}


def cross(scenario, target: str, folder: Path) -> dict:
    """Convert and resume with the real target; what reached it and what was declared."""
    conversation, path, loss = _convert(scenario, target, folder)
    report = check_resume(target, path)
    sent = haystack(report.sent)
    if target in THINKING_NOT_RESENT:
        written = api.to_common(api.load(path, target))
        held = "\n".join(b.thinking for m in written.messages for b in m.content if isinstance(b, Thinking))
    kinds = {k for k in loss.counts() if k.startswith("write:")}
    kept, declared, missing = [], [], []
    for kind, fact in expected_facts(scenario, conversation):
        if fact in sent or (kind == "thinking" and target in THINKING_NOT_RESENT and fact in held):
            kept.append((kind, fact))
        elif kinds & set(DECLARES[kind]):
            declared.append((kind, fact))
        else:
            missing.append((kind, fact[:120]))
    return {
        "resumed": report.resumed,
        "why": (report.rejected, report.stderr[-800:]),
        "kept": kept,
        "declared": declared,
        "missing": missing,
        "kinds": sorted(kinds),
        # the client's context is not in Claude's report: its system entries are read anew
        "unseen": unseen(
            scenario.seen, claude_sent_texts(path) if target == "claude_code" and scenario.seen else sent_texts(report)
        ),
    }


PAIRS = [(s, t) for s in SCENARIOS if s.harness in HARNESSES for t in RESUMABLE if t != s.harness]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> dict:
    """Every pair, run two at a time (each resume is one real client process)."""
    root = tmp_path_factory.mktemp("matrix")

    def one(pair):
        scenario, target = pair
        folder = root / f"{_id(scenario)}-{target}"
        try:
            return pair, cross(scenario, target, folder)
        except Exception as exc:  # reported by the test of that pair
            return pair, {"error": f"{type(exc).__name__}: {exc}"}

    with ThreadPoolExecutor(max_workers=int(os.environ.get("TXCODEC_MATRIX_JOBS", "2"))) as pool:
        return {(_id(s), t): r for (s, t), r in pool.map(one, PAIRS)}


@pytest.mark.parametrize("scenario,target", PAIRS, ids=lambda v: v if isinstance(v, str) else _id(v))
def test_x_to_y_resumes_with_every_fact_kept_or_declared(scenario, target, matrix):
    result = matrix[(_id(scenario), target)]
    assert "error" not in result, result["error"]
    assert result["resumed"], result["why"]
    assert not result["missing"], result["missing"]


SEEN_PAIRS = [(s, t) for s, t in PAIRS if s.seen]


@pytest.mark.parametrize("scenario,target", SEEN_PAIRS, ids=lambda v: v if isinstance(v, str) else _id(v))
def test_x_to_y_shows_the_model_the_context_in_place(scenario, target, matrix):
    """Class 3: context the source client showed the model that is no message (hook
    ``additionalContext``, the plan-mode reminders: the scenario's ``seen`` texts) reaches the
    request the real target sends, in the original's order among the messages."""
    result = matrix[(_id(scenario), target)]
    assert "error" not in result, result["error"]
    assert not result["unseen"], result["unseen"]


# --- docs/mapping.md ----------------------------------------------------------------------

MAPPING = ROOT / "docs" / "mapping.md"
HEADING = "## Scenarios"


def mapping_section(matrix: dict) -> str:
    """Per source harness, a table: a row per scenario, a column per target; each cell
    what reached the real target (kept) and what the loss report named (declared)."""
    out = [
        HEADING,
        "",
        "Generated by `tests/features/test_scenarios.py` (`TXCODEC_UPDATE_MAPPING=1` rewrites it) from the scenario",
        "library (`tests/support/scenarios/`): each scenario's recorded session converted to every other harness and",
        "resumed by the real target client. A cell counts the source's facts (user and assistant texts,",
        "tool calls and results, thinking text: what the source client resumes with) that reached the",
        "request the target sent (kept) or that the loss report names (declared, with the kinds); a",
        "missing fact fails the test. stream_json has no client to resume it, so it is a source only.",
        "",
    ]
    for source in HARNESSES:
        scenarios = [s for s in SCENARIOS if s.harness == source]
        targets = [t for t in RESUMABLE if t != source]
        if not scenarios:
            continue
        out += [
            f"### From {source}",
            "",
            "| scenario | " + " | ".join(f"`{t}`" for t in targets) + " |",
            "|---|" + "---|" * len(targets),
        ]
        for s in scenarios:
            cells = []
            for t in targets:
                r = matrix.get((_id(s), t), {})
                if "error" in r or not r:
                    cells.append("error")
                    continue
                total = len(r["kept"]) + len(r["declared"]) + len(r["missing"])
                cell = f"{len(r['kept'])}/{total} kept"
                if r["declared"]:
                    cell += f", {len(r['declared'])} declared"
                if r["missing"]:
                    cell += f", **{len(r['missing'])} missing**"
                if not r["resumed"]:
                    cell += ", **not resumed**"
                kinds = [k for k in r["kinds"] if k not in ("write:cwd",)]
                if kinds:
                    cell += "<br>" + " ".join(f"`{k}`" for k in kinds)
                cells.append(cell)
            out.append(f"| {s.name} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def test_mapping_doc_shows_every_scenario_pair(matrix):
    text = MAPPING.read_text(encoding="utf-8")
    section = mapping_section(matrix)
    head, found, tail = text.partition(HEADING)
    current = found + tail.split("\n## ", 1)[0] if found else ""
    rest = ("\n## " + tail.split("\n## ", 1)[1]) if found and "\n## " in tail else ""
    if os.environ.get("TXCODEC_UPDATE_MAPPING") == "1":
        MAPPING.write_text(
            (head.rstrip() + "\n\n" if found else text.rstrip() + "\n\n") + section + rest, encoding="utf-8"
        )
        return
    assert current.rstrip() == section.rstrip(), (
        "docs/mapping.md Scenarios is stale: TXCODEC_UPDATE_MAPPING=1 pytest tests/features/test_scenarios.py"
    )
