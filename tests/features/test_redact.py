"""``txcodec redact``: fake secrets of every family planted in genuine sessions of several
harnesses are gone from the output (no value, no 12-character fragment of one, file names
included), the output still decodes to the same records line for line and verifies, and no
report, log line or error message holds a value (docs/redact.md)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from support import fuzzing
from support.paths import GOLDEN
from support.planted_secrets import FAMILIES
from support.planted_secrets import USER
from support.planted_secrets import _alnum
from support.planted_secrets import _b64
from support.planted_secrets import leaks
from support.planted_secrets import plant

from txcodec import api
from txcodec.cli import main
from txcodec.redact import Redactor
from txcodec.redact import Report
from txcodec.redact import redact_paths
from txcodec.verify import verify_file

SOURCES = {
    "claude_code": sorted((GOLDEN / "claude_code").glob("*/*.jsonl"))[:6],
    "codex": sorted((GOLDEN / "codex" / "scenarios").glob("*/rollout.jsonl"))[:3],
    "gemini_cli": sorted((GOLDEN / "gemini_cli" / "scenarios").glob("*/session-*.jsonl"))[:3],
    "qwen_code": sorted((GOLDEN / "qwen_code" / "scenarios").glob("*/*.jsonl"))[:3],
    "pi": sorted((GOLDEN / "pi" / "scenarios").glob("*/session.jsonl"))[:3],
    "opencode": sorted((GOLDEN / "opencode" / "scenarios").glob("*/export.json"))[:2],
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """A store-like folder of planted sessions: a Claude Code project folder named after the
    user's home (``-home-<user>-work``) with a session's side folder, and the other
    harnesses' files."""
    root = tmp_path_factory.mktemp("planted")
    for harness, files in SOURCES.items():
        assert files, harness
        for n, source in enumerate(files):
            if harness == "claude_code":
                folder = root / "claude" / f"-home-{USER}-work"
            else:
                folder = root / harness / f"{n}"
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / source.name
            target.write_bytes(plant(source.read_bytes(), harness))
            side = source.with_suffix("")
            if side.is_dir():
                for file in side.rglob("*"):
                    if file.is_file():
                        dest = folder / side.name / file.relative_to(side)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        data = file.read_bytes()
                        dest.write_bytes(plant(data, harness) if file.suffix == ".jsonl" else data)
    # a tool result side file and a file-history backup: plain text, every family in it
    text = "\n".join(family[1].replace("\\n", "\n") for family in FAMILIES) + "\n"
    (root / "claude" / "tool-results").mkdir()
    (root / "claude" / "tool-results" / "toolu_01.txt").write_text(text)
    (root / "file-history").mkdir()
    (root / "file-history" / f"{USER}-notes@v2").write_text(text)
    return root


@pytest.fixture(scope="module")
def redacted(planted: Path, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("redacted") / "out"
    result = CliRunner().invoke(main, ["redact", str(planted), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output + (result.stderr if result.stderr_bytes is not None else "")


def test_every_family_is_planted(planted: Path) -> None:
    text = "\n".join(p.read_text(errors="replace") for p in planted.rglob("*") if p.is_file())
    missing = [
        family
        for family, _, values in FAMILIES
        if not any(v in text or json.dumps(v)[1:-1] in text or v.replace("\\n", "\n") in text for v in values)
    ]
    assert not missing
    assert len(FAMILIES) >= 25 + 5  # secrets of 25 families and more, and the personal data


def test_no_planted_value_nor_fragment_remains(redacted: tuple[Path, str]) -> None:
    out, _ = redacted
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 20
    leaked = {}
    for path in files:
        found = leaks(path.read_text(errors="replace")) + leaks(str(path.relative_to(out)))
        if found:
            leaked[str(path.relative_to(out))] = found
    assert not leaked


def test_the_report_holds_no_value(redacted: tuple[Path, str]) -> None:
    _, output = redacted
    assert "redacted" in output
    assert not leaks(output)


def _by_name(root: Path) -> dict[str, Path]:
    """The files under ``root`` by their path, the user's name and its placeholders made one."""
    return {
        re.sub(r"redacted-user-\d+", "U", str(p.relative_to(root))).replace(USER, "U"): p
        for p in root.rglob("*")
        if p.is_file()
    }


def test_outputs_decode_to_the_same_records_and_verify(planted: Path, redacted: tuple[Path, str]) -> None:
    out, _ = redacted
    outputs = _by_name(out / planted.name)
    checked = 0
    for rel, source in sorted(_by_name(planted).items()):
        assert rel in outputs, rel
        if source.suffix not in (".jsonl", ".json"):
            continue
        target = outputs[rel]
        before, after = source.read_bytes(), target.read_bytes()
        assert before.count(b"\n") == after.count(b"\n"), rel
        a, b = api.load(source), api.load(target)
        assert a.harness == b.harness
        assert [type(r).__name__ for r in a.records] == [type(r).__name__ for r in b.records], rel
        assert len(b.diagnostics) == len(a.diagnostics), rel
        assert verify_file(target).ok, rel
        # only the lines with something to redact changed
        lines_before, lines_after = before.split(b"\n"), after.split(b"\n")
        changed = [i for i, (x, y) in enumerate(zip(lines_before, lines_after)) if x != y]
        assert all(leaks(lines_before[i].decode(errors="replace")) for i in changed), rel
        assert len(changed) < len(lines_before) or len(lines_before) == 1, rel
        checked += 1
    assert checked >= 15


def test_munged_project_folder_agrees_with_the_cwd(redacted: tuple[Path, str]) -> None:
    out, _ = redacted
    (folder,) = out.rglob("-home-redacted-user-*-work")
    session = next(folder.glob("*.jsonl"))
    cwds = {json.loads(line).get("cwd") for line in session.read_text().splitlines() if line.strip()}
    cwds.discard(None)
    assert cwds and {re.sub(r"[^A-Za-z0-9]", "-", cwd) for cwd in cwds} == {folder.name}


def test_same_value_same_placeholder_and_seed_agrees(tmp_path: Path) -> None:
    value = "ghp_" + _alnum("same", 36)
    line = json.dumps({"type": "user", "text": f"first {value}", "more": f"again {value}"}).encode() + b"\n"
    outs = []
    for _ in range(2):
        report = Report()
        outs.append(Redactor(seed="s3").redact_bytes(line, "x.jsonl", report))
    assert outs[0] == outs[1]
    placeholders = {f.placeholder for f in report.findings}
    assert len(placeholders) == 1 and len(report.findings) == 2
    unseeded = Redactor().redact_bytes(line, "x.jsonl", Report())
    assert b"\xc2\xabredacted:github-token:1\xc2\xbb" in unseeded


def test_structure_fields_are_left_alone() -> None:
    """Ids, hashes, signatures and encrypted_content are structure: a harness's redact_keep."""
    blob = "gAAAAB" + _b64("enc", 300) + " password=Zz" + _alnum("x", 10)
    line = json.dumps({"type": "reasoning", "encrypted_content": blob, "summary": []}).encode()
    assert Redactor().redact_bytes(line, "r.jsonl", Report(), "codex") == line
    redacted = Redactor().redact_bytes(line, "r.jsonl", Report(), None)
    assert redacted != line  # the same line outside Codex: the key is not known as structure


def test_unchanged_lines_keep_their_bytes() -> None:
    lines = [b'{"a":"caf\\u00e9 \\/ x","b":1}', b'{"t":"token=' + _alnum("k", 20).encode() + b' \\u00e9"}', b"not json"]
    data = b"\n".join(lines) + b"\n"
    out = Redactor().redact_bytes(data, "f.jsonl", Report()).split(b"\n")
    assert out[0] == lines[0] and out[2] == lines[2]
    assert out[1].startswith(b'{"t":"token=\\u00abredacted:env-secret:1\\u00bb \\u00e9"}')  # escaped as its string


def test_check_and_dry_run(planted: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    checked = runner.invoke(main, ["redact", str(planted / "pi"), "--check"])
    assert checked.exit_code == 1
    assert not leaks(checked.output)
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes((GOLDEN / "pi" / "scenarios").glob("*/session.jsonl").__next__().read_bytes())
    assert runner.invoke(main, ["redact", str(clean), "--check", "--keep", "paths"]).exit_code == 0
    dry = runner.invoke(main, ["redact", str(planted / "codex"), "--dry-run", "--json"])
    assert dry.exit_code == 0
    report = json.loads(dry.output.splitlines()[0])
    assert report["findings"] and not report["written"]
    assert not leaks(dry.output)


def test_keep_and_config(tmp_path: Path) -> None:
    line = b'{"text":"mail qlorp.zyx@mailhost.io, build ZZ-123456-QQ"}\n'
    config = tmp_path / "r.toml"
    config.write_text('[patterns]\nbuild-id = "ZZ-\\\\d{6}-QQ"\n[allow]\nvalues = []\n')
    src = tmp_path / "s.jsonl"
    src.write_bytes(line)
    result = CliRunner().invoke(main, ["redact", str(src), "--dry-run", "--config", str(config), "--keep", "emails"])
    assert result.exit_code == 0, result.output
    assert "build-id" in result.output and "email" not in result.output.split("file(s)")[0]


def test_missing_input_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["redact", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and "Traceback" not in result.output


def _decodes(line: bytes) -> bool:
    try:
        msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):  # nested deeper than a decoder goes: redacted as text
        return False
    return True


_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck))


def test_a_line_nested_deeper_than_the_decoder_goes_is_redacted_as_text():
    """Found by the fuzzed sessions above: a record nested 20,000 deep made the document
    check raise RecursionError. Such a line is redacted as text, and nothing else moves."""
    name, secret, _ = FAMILIES[0]
    deep = b'{"a":' * 20000 + b"1" + b"}" * 20000
    line = b'{"type":"user","parentUuid":' + deep + b',"note":"' + secret.encode() + b'"}'
    source = b"\n".join([line, b'{"type":"user","message":{"role":"user","content":"hi"}}', line, b""])
    out = Redactor().redact_bytes(source, "deep.jsonl", Report(), "claude_code")
    assert out.count(b"\n") == source.count(b"\n") and not leaks(out.decode())
    assert out.split(b"\n")[1] == source.split(b"\n")[1]


@pytest.mark.parametrize("codec", ["claude_code", "codex", "gemini_cli", "qwen_code", "pi"])
def test_redaction_never_makes_a_file_invalid(codec: str) -> None:
    """Fuzzed sessions (the fuzz layer's mutants) with secrets planted: the output has the
    same line count, each line that was JSON still is, the records are of the same types,
    and the file round-trips byte for byte."""

    @settings(max_examples=25, derandomize=True, **_SETTINGS)
    @given(st.data())
    def run(data) -> None:
        rng = fuzzing.Rng(lambda n: data.draw(st.integers(0, max(n - 1, 0))))
        source = fuzzing.mutant(codec, rng)
        family = FAMILIES[data.draw(st.integers(0, len(FAMILIES) - 1))]
        try:
            source = plant(source, codec) if source.strip() else source
        except (ValueError, RecursionError):
            pass
        source = source.replace(b"/home/", f"/home/{USER}/{family[1]}/".encode(), 1)
        out = Redactor().redact_bytes(source, "fuzzed.jsonl", Report(), codec)
        assert out.count(b"\n") == source.count(b"\n")
        for before, after in zip(source.split(b"\n"), out.split(b"\n")):
            if before != after and _decodes(before):
                msgspec.json.decode(after)  # a changed line that was JSON still is
        a, b = api.load(source, codec), api.load(out, codec)
        assert [type(r).__name__ for r in a.records] == [type(r).__name__ for r in b.records]
        assert b.dump() == out

    run()


def test_a_side_file_and_a_single_session(tmp_path: Path) -> None:
    source = next(p for p in (GOLDEN / "claude_code").glob("*/*.jsonl") if p.with_suffix("").is_dir())
    copy = tmp_path / "in" / source.name
    shutil.copytree(source.with_suffix(""), copy.with_suffix(""))
    copy.write_bytes(plant(source.read_bytes(), "claude_code"))
    report = redact_paths([copy], tmp_path / "out", Redactor())
    written = {Path(p).relative_to(tmp_path / "out").parts[0] for p in report.written}
    assert copy.name in written and copy.stem in written  # the session and its folder


@pytest.fixture(scope="module")
def one_planted(tmp_path_factory) -> Path:
    source = GOLDEN / "claude_code" / "edit_read_write"
    (original,) = source.glob("*.jsonl")
    folder = tmp_path_factory.mktemp("one") / f"-home-{USER}-work"
    folder.mkdir()
    path = folder / original.name
    path.write_bytes(plant(original.read_bytes(), "claude_code"))
    return path


@pytest.mark.parametrize("fmt", ["common", "markdown", "openai-chat", "html", "hf", "parquet"])
def test_export_redact(one_planted: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / ("out" if fmt == "parquet" else f"out.{fmt}")
    plain = CliRunner().invoke(main, ["export", str(one_planted), "--to", fmt, "-o", str(tmp_path / f"plain.{fmt}")])
    assert plain.exit_code == 0, plain.output
    written = tmp_path / f"plain.{fmt}"
    before = (
        b"".join(p.read_bytes() for p in written.rglob("*") if p.is_file())
        if written.is_dir()
        else written.read_bytes()
    )
    if fmt not in ("parquet", "hf"):  # the plain export shows what --redact must hide (Parquet compresses)
        assert leaks(before.decode(errors="replace"))
    result = CliRunner().invoke(main, ["export", str(one_planted), "--to", fmt, "-o", str(out), "--redact"])
    assert result.exit_code == 0, result.output
    assert "redacted:" in result.output
    files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else [out]
    if fmt in ("parquet", "hf"):
        import pyarrow.parquet as pq

        texts = [str(pq.read_table(p).to_pylist()) for p in files if p.suffix in (".parquet", ".hf")]
        assert texts
        assert not leaks("\n".join(texts))
    else:
        assert not leaks(out.read_text())
    assert not leaks(result.output)


def test_convert_redact(one_planted: Path, tmp_path: Path) -> None:
    out = tmp_path / "codex"
    result = CliRunner().invoke(main, ["convert", str(one_planted), "--to", "codex", "-o", str(out), "--redact"])
    assert result.exit_code == 0, result.output
    files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else [out]
    for path in files:
        assert not leaks(path.read_text()) and not leaks(str(path))
        assert verify_file(path).ok
    assert not leaks(result.output)


@settings(max_examples=200, derandomize=True, **_SETTINGS)
@given(st.text(max_size=40), st.text(max_size=40), st.booleans())
def test_a_span_is_replaced_where_its_characters_were(prefix: str, suffix: str, ascii_only: bool) -> None:
    """Whatever escapes the string holds around it, the decoded result is the decoded input
    with the value, and only it, replaced."""
    token = "ghp_" + _alnum("span", 36)
    value = f"{prefix} {token} {suffix}"
    line = json.dumps({"text": value}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    out = Redactor().redact_bytes(line, "s.jsonl", Report())
    assert json.loads(out) == {"text": f"{prefix} «redacted:github-token:1» {suffix}"}


def test_a_compressed_session_is_redacted_compressed(tmp_path: Path) -> None:
    import zstandard

    source = next((GOLDEN / "pi" / "scenarios").glob("*/session.jsonl"))
    planted = plant(source.read_bytes(), "pi")
    packed = tmp_path / "session.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(planted))
    out = tmp_path / "out"
    redact_paths([packed], out, Redactor())
    (written,) = out.rglob("*.zst")
    data = zstandard.ZstdDecompressor().decompressobj().decompress(written.read_bytes())
    assert data.count(b"\n") == planted.count(b"\n")
    assert not leaks(data.decode()) and leaks(planted.decode())
    assert verify_file(written).ok


def test_the_goldens_hold_nothing_to_redact() -> None:
    """Precision: the golden sessions of every harness (ids, hashes, signatures, encrypted
    reasoning, usage blocks, paths of the machine that made them) hold no secret and no one's
    personal data, and ``--check`` says so."""
    result = CliRunner().invoke(main, ["redact", str(GOLDEN), "--check"])
    assert result.exit_code == 0, result.output[-3000:]
    assert "nothing redacted" in result.output


def test_without_the_extra_one_line_names_it(tmp_path: Path, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "detect_secrets", None)  # an import of it fails, as when not installed
    monkeypatch.setitem(sys.modules, "detect_secrets.core.plugins.util", None)
    src = tmp_path / "s.jsonl"
    src.write_bytes(b'{"text":"hello"}\n')
    for args in (["redact", str(src), "--check"], ["export", str(src), "--to", "markdown", "--redact"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert lines == ["Error: redaction needs detect-secrets: pip install 'txcodec[redact]'"]


def test_a_key_split_across_a_patch_lines_goes_whole() -> None:
    """A structured patch gives each line of a file a string of its own: a PEM key's body lines
    hold nothing a rule sees alone, and go with the BEGIN line before them."""
    body = [_b64(f"patch{i}", 64) for i in range(5)]
    lines = [
        " x = 1",
        "+-----BEGIN OPENSSH PRIVATE KEY-----",
        *(f"+{b}" for b in body),
        "+-----END OPENSSH PRIVATE KEY-----",
        " y",
    ]
    record = {"type": "user", "toolUseResult": {"structuredPatch": [{"oldStart": 1, "lines": lines}]}}
    line = json.dumps(record).encode()
    out = Redactor().redact_bytes(line + b"\n", "p.jsonl", Report(), "claude_code")
    assert not any(b[i : i + 12] in out.decode() for b in body for i in range(0, 52, 4))
    patched = json.loads(out)["toolUseResult"]["structuredPatch"][0]["lines"]
    assert patched[0] == " x = 1" and patched[-1] == " y" and len(patched) == len(lines)
    assert all(p.startswith("+«redacted:private-key:") for p in patched[1:-1])


def test_a_key_that_is_data_is_redacted_and_the_report_path_too() -> None:
    """Gemini CLI's projects.json maps each project folder to a name: the key is a path."""
    data = json.dumps({"projects": {f"/home/{USER}/work": "work"}}, indent=2).encode()
    report = Report()
    new = Redactor().redact_bytes(data, "projects.json", report)
    assert USER.encode() not in new and json.loads(new) == {"projects": {"/home/redacted-user-1/work": "work"}}
    assert report.findings and not any(USER in f.path for f in report.findings)


@pytest.mark.parametrize(
    "text",
    [
        "unique_constraint(:name, key: :unique)",  # a symbol
        "token = Base.url_encode64(:crypto.strong_rand_bytes(32))",  # a call's name
        'plug Plug.Session, key: "_spotter_key"',  # an identifier
        "the token: lib/spotter_web/controllers/review_context_controller.ex",  # a lower-case path
    ],
)
def test_a_name_after_a_secret_s_name_is_no_secret(text: str) -> None:
    """Seen in the corpus's genuine sessions: code, not values."""
    assert Redactor().find(text) == []


def test_a_value_after_a_secret_s_name_still_is_one() -> None:
    for value in ("Hello.World2024", "Hu8fK2jd9#9x", "abcDEF123xyz"):
        found = Redactor().find(f"DB_PASSWORD={value}")
        assert [(f"DB_PASSWORD={value}"[s:e], kind) for s, e, kind in found] == [(value, "env-secret")]


def test_an_email_is_matched_at_its_at_sign() -> None:
    """The ``at`` rule: the local part read backwards from the ``@`` (1 to 64 characters, no
    longer run), the domain matched forwards."""
    local = "q" * 64
    text = f"@x.io a@b.co mail {local}@host.org or {'q' * 65}@host.org, (first.last+tag@mail.example.net)."
    found = [text[s:e] for s, e, kind in Redactor().find(text) if kind == "email"]
    assert found == ["a@b.co", f"{local}@host.org", "first.last+tag@mail.example.net"]
