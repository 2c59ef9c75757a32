"""Coverage-guided fuzzing of the claude_code codec: `python fuzz/claude_code.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("claude_code")
