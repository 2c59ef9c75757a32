"""Coverage-guided fuzzing of the aider codec: `python fuzz/aider.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("aider")
