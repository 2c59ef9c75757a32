"""Coverage-guided fuzzing of the openhands codec: `python fuzz/openhands.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("openhands")
