"""Coverage-guided fuzzing of the kimi_cli codec: `python fuzz/kimi_cli.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("kimi_cli")
