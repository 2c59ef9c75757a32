"""Coverage-guided fuzzing of the codex codec: `python fuzz/codex.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("codex")
