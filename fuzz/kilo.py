"""Coverage-guided fuzzing of the kilo codec: `python fuzz/kilo.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("kilo")
