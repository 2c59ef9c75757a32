"""Coverage-guided fuzzing of the opencode codec: `python fuzz/opencode.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("opencode")
