"""Coverage-guided fuzzing of the qwen_code codec: `python fuzz/qwen_code.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("qwen_code")
