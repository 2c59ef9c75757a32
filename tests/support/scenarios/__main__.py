"""``python tests/scenarios [NAME|HARNESS|HARNESS/NAME ...]``: regenerate the recorded scenario sessions."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios import regenerate  # noqa: E402

regenerate(sys.argv[1:] or None)
