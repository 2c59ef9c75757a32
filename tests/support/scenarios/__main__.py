"""``python tests/support/scenarios [NAME|HARNESS|HARNESS/NAME ...]``: regenerate the recorded scenario sessions."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, where the support package is

from support.scenarios import regenerate  # noqa: E402

regenerate(sys.argv[1:] or None)
