"""Continue CLI codec: the session document -> :class:`~.records.Session`, and back.

The client pretty-prints the file over many lines; :func:`~txcodec.model.native.decode_document`
keeps it as one "line" that this codec decodes whole (a one-line file decodes the same
way). Whatever is not a session object stays :class:`~txcodec.model.native.Opaque` with its
bytes. Decoding never raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Session


class ContinueCliCodec(JsonCodec):
    name = "continue_cli"
    record = Session
    tag = "sessionId"


CODEC = ContinueCliCodec()
