"""Coverage-guided fuzzing of a store's file listed lean, as ``list`` lists it (the details
against the full read, the row against the store's own): `python fuzz/listing.py CODEC
[libFuzzer options]`, CODEC one of claude_code, codex (see _harness.py)."""

import sys

from _harness import main

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "codex", "listing")
