"""What every coverage-guided harness in this folder shares (atheris, libFuzzer).

``python fuzz/<codec>.py [libFuzzer options] [corpus folders]`` feeds the codec bytes
that libFuzzer mutates, guided by coverage of the txcodec package, and checks the same
invariants as the test suite (tests/support/fuzzing.py: load never raises and dumps the same
bytes, reading, rendering and converting to every target succeed or fail cleanly, what
is written loads back). With no corpus folder named, it works in ``.fuzz/<target>/`` in
the checkout (git ignores it): filled on the first run with windows of real lines (golden/ and
the corpus beside the checkout) and the regression corpus, it keeps every input libFuzzer adds,
so the next run goes on from there (``TXCODEC_FUZZ_DIR`` names another place than ``.fuzz``).

An input that breaks an invariant is saved in tests/fuzz_regressions/<codec>/, which the
suite replays, before libFuzzer reports the crash. Needs the ``fuzz`` extra (atheris).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ["TXCODEC_STRICT"] = "1"  # a bug shows as itself, not as a tidy "internal error"

import atheris  # noqa: E402

with atheris.instrument_imports(include=["txcodec"]):
    from support import fuzzing  # noqa: E402  (imports txcodec, instrumented)

    # readers, writers and renderers are imported lazily: import them now, inside the
    # hook, so that their coverage guides the fuzzer too
    for _name in fuzzing.CODECS:
        for _part in ("read", "write", "store"):
            try:
                importlib.import_module(f"txcodec.harnesses.{_name}.{_part}")
            except ModuleNotFoundError:
                pass
    importlib.import_module("txcodec.kit.conform")


def _work_folder(name: str) -> Path:
    """``.fuzz/<name>`` (or ``$TXCODEC_FUZZ_DIR/<name>``): the corpus a run grows and the next
    run starts from; seeded by :func:`_seed` when it is empty."""
    folder = Path(os.environ.get("TXCODEC_FUZZ_DIR") or ROOT / ".fuzz") / name.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _seed(folder: Path, target: str, codec: str) -> None:
    if any(folder.iterdir()):
        return
    if target == "common":
        for k, doc in enumerate(fuzzing.common_seeds()):
            (folder / f"{k}.json").write_bytes(doc)
        regressions = fuzzing.common_regressions()
    else:
        for k, lines in enumerate(fuzzing.seed_files(codec)):
            for i in range(0, len(lines), 5):
                (folder / f"{k}-{i}").write_bytes(b"\n".join(lines[i : i + 5]) + b"\n")
        regressions = [path for _, path in fuzzing.regression_files()]
        own = {
            "views": fuzzing.view_regressions,
            "listing": fuzzing.listing_regressions,
            "usage": fuzzing.usage_regressions,
        }
        if target in own:
            regressions += [path for name, path in own[target]() if name == codec]
    for path in regressions:
        (folder / f"regression-{path.name}").write_bytes(path.read_bytes())


def main(codec: str, target: str = "codec") -> None:
    """``target``: ``codec`` (the invariants of fuzzing.check), ``views`` (the views behind
    the codec: fuzzing.check_views), ``listing`` (a store's file listed lean:
    fuzzing.check_listing), ``usage`` (a store's file counted by its lean usage pass:
    fuzzing.check_usage) or ``common`` (Common JSON with every writer behind it:
    fuzzing.check_common; ``codec`` is then ignored)."""
    harness = fuzzing.harness_for(codec)
    folder = {
        "codec": codec,
        "views": f"{fuzzing.VIEWS}/{codec}",
        "listing": f"{fuzzing.LISTING}/{codec}",
        "usage": f"{fuzzing.USAGE}/{codec}",
        "common": fuzzing.COMMON,
    }[target]

    def one_input(data: bytes) -> None:
        try:
            if target == "common":
                fuzzing.check_common(data)
            elif target == "listing":
                fuzzing.check_listing(data, codec)
            elif target == "usage":
                fuzzing.check_usage(data, codec)
            elif target == "views":
                fuzzing.check_views(data, harness)
            else:
                fuzzing.check(data, harness)
        except BaseException:
            fuzzing.save_regression(folder, data)
            raise

    argv = list(sys.argv)
    if target in ("views", "listing", "usage"):  # python fuzz/views.py CODEC [libFuzzer options]
        argv = [argv[0], *argv[2:]]
    if not any(not a.startswith("-") for a in argv[1:]):
        work = _work_folder(folder)
        _seed(work, target, codec)
        argv.append(str(work))
    if not any(a.startswith("-artifact_prefix=") for a in argv):  # the input is in the regressions already
        argv.append(f"-artifact_prefix={_work_folder('artifacts')}/{folder.replace('/', '-')}-")
    if not any(a.startswith("-max_len=") for a in argv):
        argv.append("-max_len=65536")
    if not any(a.startswith("-timeout=") for a in argv):
        argv.append("-timeout=60")
    atheris.Setup(argv, one_input)
    atheris.Fuzz()
