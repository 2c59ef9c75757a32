"""Coverage-guided fuzzing of the stream_json codec: `python fuzz/stream_json.py [libFuzzer options]`
(see _harness.py)."""

from _harness import main

if __name__ == "__main__":
    main("stream_json")
