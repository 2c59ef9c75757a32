"""Coverage-guided fuzzing of the mistral_vibe codec: `python fuzz/mistral_vibe.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("mistral_vibe")
