"""Coverage-guided fuzzing of the continue_cli codec: `python fuzz/continue_cli.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("continue_cli")
