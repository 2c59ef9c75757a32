"""Coverage-guided fuzzing of Common JSON with every writer and view behind it:
`python fuzz/common_json.py [libFuzzer options]` (see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("jsonl", "common")
