"""The scenario library: genuine sessions made by the pinned real CLIs against the
scripted mock models, recorded under ``golden/<harness>/scenarios/<name>/``.

A scenario is a mock-model script, the prompts (and slash commands) to send, the real CLI
that runs them (through the :mod:`txcodec.resume_check` drivers) and the facts about the native
file it pins (``facts``: checks on the recorded bytes, run by ``tests/features/test_scenarios.py``
without the CLI). Regenerating drives every CLI once:

    python tests/support/scenarios [NAME ...]      # rewrites the recorded sessions
    python tests/support/scenarios HARNESS/NAME    # just that one (names repeat across harnesses)

Beside the native file, ``scenario.json`` keeps the prompts, the client version and
``resumed``: what the real client sent when it resumed the recorded file, in the view its
resume check compares (so the X -> X test resumes only our file).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOLDEN = ROOT / "golden"
HARNESSES = ["claude_code", "codex", "stream_json", "gemini_cli", "qwen_code", "pi"]
# issue 15's CLIs (more_clients.py): recorded, their facts and X -> X checked; they join
# HARNESSES, so the cross matrix, once docs/mapping.md "Scenarios" is regenerated with them
MORE = ["copilot_cli", "continue_cli", "opencode", "kilo"]


@dataclass
class Scenario:
    name: str
    harness: str
    about: str
    # run the real CLI in a throw-away folder: {relative path: bytes}, the main file first
    produce: Callable[[Path], dict[str, bytes]]
    prompts: list[str]
    facts: list[Callable[[list[dict[str, Any]]], None]] = field(default_factory=list)  # on the main file's lines
    covers: list[str] = field(default_factory=list)  # the issue-11 topics and bug classes it pins
    # context the client showed the model that is no message (hook output, mode reminders), in
    # order, with message texts between as anchors: every target's request must hold them so
    seen: list[str] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return GOLDEN / self.harness / "scenarios" / self.name

    @property
    def main(self) -> Path:
        meta = json.loads((self.folder / "scenario.json").read_text())
        return self.folder / meta["main"]

    def lines(self) -> list[dict[str, Any]]:
        if self.main.suffix == ".json":  # a document (Continue, opencode, Kilo): one object, maybe pretty-printed
            value = json.loads(self.main.read_bytes())
            return [value] if isinstance(value, dict) else []
        out = []
        for raw in self.main.read_bytes().splitlines():
            try:
                value = json.loads(raw)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
        return out


def all_scenarios() -> list[Scenario]:
    from . import claude_code
    from . import codex
    from . import gemini_cli
    from . import more_clients
    from . import pi
    from . import qwen_code
    from . import stream_json

    found = [s for module in (claude_code, stream_json, codex, gemini_cli, qwen_code, pi) for s in module.SCENARIOS]
    found += more_clients.SCENARIOS
    names = [(s.harness, s.name) for s in found]
    assert len(names) == len(set(names)), "scenario names repeat"
    return found


def recorded(harness: str | None = None) -> list[Scenario]:
    """The scenarios whose session is recorded (all of them once regenerated)."""
    return [
        s
        for s in all_scenarios()
        if (harness is None or s.harness == harness) and (s.folder / "scenario.json").is_file()
    ]


def regenerate(names: list[str] | None = None) -> None:
    import shutil
    import tempfile

    from txcodec.kit import registry

    from .views import check_resume
    from .views import resumed_view

    chosen = [
        s
        for s in all_scenarios()
        if not names or s.name in names or s.harness in names or f"{s.harness}/{s.name}" in names
    ]
    for scenario in chosen:
        with tempfile.TemporaryDirectory(prefix=f"scenario-{scenario.name}-") as tmp:
            files = scenario.produce(Path(tmp))
        if scenario.folder.exists():
            shutil.rmtree(scenario.folder)
        for rel, data in files.items():
            (scenario.folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (scenario.folder / rel).write_bytes(data)
        main = next(iter(files))
        meta = {"about": scenario.about, "prompts": scenario.prompts, "main": main, "covers": scenario.covers}
        # a capture is not resumable; the CLI's own session file of the same run is
        resumable, as_harness = main, scenario.harness
        if scenario.harness == "stream_json":
            resumable = next(r for r in files if r.startswith("cli_session/") and r.count("/") == 1)
            as_harness = "claude_code"
            meta["cli_session"] = resumable
        if registry.get(as_harness).check_resume is not None:
            report = check_resume(as_harness, scenario.folder / resumable)
            meta["client"] = report.client
            meta["resumed"] = resumed_view(as_harness, report) if report.resumed else None
            if not report.resumed:
                meta["not_resumed"] = (report.rejected, report.stderr[-500:])
        (scenario.folder / "scenario.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(f"{scenario.harness}/{scenario.name}: {', '.join(files)}; resumed: {bool(meta.get('resumed'))}")
