"""Coverage-guided fuzzing of the cline codec: `python fuzz/cline.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("cline")
