"""Coverage-guided fuzzing of the gemini_cli codec: `python fuzz/gemini_cli.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("gemini_cli")
