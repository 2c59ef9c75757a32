"""Coverage-guided fuzzing of the jsonl codec: `python fuzz/jsonl.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("jsonl")
