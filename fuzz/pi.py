"""Coverage-guided fuzzing of the pi codec: `python fuzz/pi.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("pi")
