"""Write the Common model's JSON Schema: ``python -m txcodec.model.schema [--check]``.

``schemas/common.schema.json`` is generated from :func:`txcodec.model.common_json.json_schema`;
``tests/features/test_common_schema.py`` fails when the file drifts from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from .common_json import json_schema

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "common.schema.json"


def render() -> bytes:
    return msgspec.json.format(msgspec.json.encode(json_schema()), indent=2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    data = render()
    if "--check" in args:
        current = SCHEMA_PATH.read_bytes() if SCHEMA_PATH.exists() else b""
        if current != data:
            print(f"{SCHEMA_PATH} is out of date: run python -m txcodec.model.schema", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_bytes(data)
    print(SCHEMA_PATH)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
