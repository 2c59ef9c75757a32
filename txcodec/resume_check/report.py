"""What a real client sent when it resumed a session file."""

from __future__ import annotations

import msgspec

# the client finders live in core (an opencode store installs through its client too);
# re-exported here, where the drivers and tests have always found them
from ..core.programs import PACKAGES as PACKAGES
from ..core.programs import ClientMissing as ClientMissing
from ..core.programs import find_client as find_client
from ..core.programs import install_hint as install_hint
from ..core.programs import require_client as require_client
from ..model.common import Message


class ResumeReport(msgspec.Struct, omit_defaults=True):
    harness: str
    client: str  # e.g. "claude 2.1.332"
    session_id: str
    exit_code: int
    requests: int  # model requests the client made
    sent: list[Message] = msgspec.field(default_factory=list)  # the history of the first request, in Common
    rejected: list[str] = msgspec.field(default_factory=list)  # what the strict mock answered 400 for
    stderr: str = ""

    @property
    def resumed(self) -> bool:
        """The client ran, made a request, and nothing was rejected."""
        return self.exit_code == 0 and self.requests > 0 and not self.rejected
