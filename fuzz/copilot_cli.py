"""Coverage-guided fuzzing of the copilot_cli codec: `python fuzz/copilot_cli.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("copilot_cli")
