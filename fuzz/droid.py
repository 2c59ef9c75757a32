"""Coverage-guided fuzzing of the droid codec: `python fuzz/droid.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("droid")
