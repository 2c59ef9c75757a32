"""A small stdio MCP server for the scenarios, standard library only: ``python mcp_server.py``.

It speaks JSON-RPC 2.0, one message per line on stdin/stdout (the MCP stdio transport), and
offers two tools of a "notes" server: ``lookup`` (returns the note for a key; an unknown key
is a tool error, ``isError: true``) and ``add`` (stores a note for the process's lifetime).
The real clients (Codex's ``[mcp_servers.<name>]``, Claude Code's ``--mcp-config``) start it
themselves; a test names it with :data:`COMMAND`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COMMAND = [sys.executable, str(Path(__file__).resolve())]
NOTES = {"alpha": "Alpha is the first note.", "ünïcode": "Notes keep non-ASCII text: ✓ 日本語."}
TOOLS = [
    {
        "name": "lookup",
        "description": "Look up the note stored under a key.",
        "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
    },
    {
        "name": "add",
        "description": "Store a note under a key.",
        "inputSchema": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "text": {"type": "string"}},
            "required": ["key", "text"],
        },
    },
]


_EMPTY = {"ping": {}, "resources/list": {"resources": []}, "resources/templates/list": {"resourceTemplates": []}}
_EMPTY["prompts/list"] = {"prompts": []}


def _result(content: str, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": content}], "isError": error}


def _call(name: str, arguments: dict) -> dict:
    key = str(arguments.get("key", ""))
    if name == "lookup":
        return _result(NOTES[key]) if key in NOTES else _result(f"no note named {key!r}", error=True)
    if name == "add":
        NOTES[key] = str(arguments.get("text", ""))
        return _result(f"stored {key!r}")
    return _result(f"unknown tool {name!r}", error=True)


def answer(message: dict) -> dict | None:
    """The reply to one JSON-RPC message (None for a notification)."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    params = message.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "notes", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = _call(str(params.get("name")), params.get("arguments") or {})
    elif method in _EMPTY:
        result = _EMPTY[method]
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
