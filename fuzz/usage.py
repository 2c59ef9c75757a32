"""Coverage-guided fuzzing of a store's file counted by ``txcodec usage`` (its lean pass against
the conversation read whole): `python fuzz/usage.py CODEC [libFuzzer options]`, CODEC one of
claude_code, codex (see _harness.py)."""

import sys

from _harness import main

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "codex", "usage")
