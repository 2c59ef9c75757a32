"""Coverage-guided fuzzing of the views behind one codec (changes, Markdown, HTML, terminal,
the columnar rows): `python fuzz/views.py CODEC [libFuzzer options]` (see _harness.py)."""

import sys

from _harness import main

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "claude_code", "views")
