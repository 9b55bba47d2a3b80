"""The plugin input/output envelope as docs/plugins.md defines it, for tests (phase B's host
builds the same bytes from its own models).

Input: ``{"v": 1, "operation", "args", "files": [{"arg", "path", "size", "base64"}]}``, UTF-8
JSON. Output: ``{"ok": true, "result", "writes"?: [{"path", "base64"}]}`` or
``{"ok": false, "message"}``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

__all__ = ["decode_output", "make_input", "writes_of"]


def make_input(operation: str, args: dict[str, Any], files: dict[str, bytes]) -> bytes:
    """The input bytes of one call: ``files`` maps an argument name to the bytes the host read
    for the path that argument names (in the manifest's ``reads`` order)."""
    entries = [
        {
            "arg": arg,
            "path": args[arg],
            "size": len(data),
            "base64": base64.b64encode(data).decode("ascii"),
        }
        for arg, data in files.items()
    ]
    envelope = {"v": 1, "operation": operation, "args": args, "files": entries}
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode_output(output: bytes) -> dict[str, Any]:
    """The plugin's output as JSON (strict UTF-8; a test fails on anything else)."""
    return json.loads(output.decode("utf-8"))


def writes_of(answer: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The write requests of an output: ``(path, bytes)`` pairs, in order."""
    return [(w["path"], base64.b64decode(w["base64"], validate=True)) for w in answer["writes"]]
