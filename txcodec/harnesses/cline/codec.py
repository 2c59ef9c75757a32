"""cline codec: the messages document -> :class:`~.records.Session`, and back.

The client pretty-prints the file; :func:`~txcodec.model.native.decode_document` keeps it as one
"line" that this codec decodes whole. Whatever is not a session object stays
:class:`~txcodec.model.native.Opaque` with its bytes. Decoding never raises.
"""

from __future__ import annotations

from ...kit.codec import JsonCodec
from .records import Session


class ClineCodec(JsonCodec):
    name = "cline"
    record = Session
    tag = "sessionId"


CODEC = ClineCodec()
