"""One plugin call's data, in and out (issue 16; seed 003 "the host decides each capability
request", "a plugin can never forge a receipt"; docs/plugins.md "Input and output").

- :func:`read_requests` — the ``files``/``read`` requests the call's arguments name (one per
  declared read), for the broker to decide before anything runs;
- :func:`envelope` — the input bytes: ``{v, operation, args, files}`` with each admitted file's
  bytes in base64 (the plugin never touches storage: the host read them);
- :func:`decode_output` — the plugin's output: refuses any receipt it claims
  (``receipt-forgery-refused``), any grant it carries (``grant-field-refused``) — at any depth,
  under any look-alike spelling of the key (issue 29 item 4) — a write
  request to a path that is not the value of a declared write argument
  (``capability-undeclared``), and anything else off the closed shape (``tool-output-invalid``).
  The write requests it returns are still requests: the broker decides each on a fresh policy
  snapshot, and the host writes.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError

from core.json_bound import parse_json
from core.model import Contract
from core.refusals import Code, Refused, invalid_input
from core.relayed_text import fold_key
from core.secret import known_names
from core.tools.plugin_manifest import PluginOperation

__all__ = ["PluginOutput", "WriteRequest", "decode_output", "envelope", "read_requests"]


class WriteRequest(Contract):
    """A write the plugin asks for: a project path and the bytes, base64."""

    path: str = Field(max_length=4096)
    base64: str


class PluginOutput(Contract):
    """A plugin's output as the host accepts it: ``{ok, result?, message?, writes?}``."""

    ok: bool
    result: dict[str, Any] = Field(default_factory=dict)
    message: str | None = Field(default=None, max_length=2000)
    writes: tuple[WriteRequest, ...] = Field(default=(), max_length=8)


_NAMES = known_names(PluginOutput)


@dataclass(frozen=True, slots=True)
class DecodedWrite:
    """A decoded write request: the path as asked and the exact bytes."""

    path: str
    data: bytes


def read_requests(op: PluginOperation, args: dict[str, Any]) -> list[dict[str, str]]:
    """The broker requests for the reads ``op`` declares, on the call's ``args``."""
    return [{"kind": "files", "action": "read", "path": args[r.arg]} for r in op.reads]


def write_request(path: str) -> dict[str, str]:
    """The broker request for one write the plugin asked for."""
    return {"kind": "files", "action": "write", "path": path}


def envelope(op: PluginOperation, args: dict[str, Any], files: list[bytes]) -> bytes:
    """The input of one call: ``files[i]`` is the bytes the host read for ``op.reads[i]``."""
    entries = [
        {
            "arg": read.arg,
            "path": args[read.arg],
            "size": len(data),
            "base64": base64.b64encode(data).decode("ascii"),
        }
        for read, data in zip(op.reads, files, strict=True)
    ]
    body = {"v": 1, "operation": op.name, "args": args, "files": entries}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


_GRANT_WORDS = frozenset({"grant", "grants", "filesgrant", "filesgrants", "admittedplugins"})
_RECEIPT_SHAPE = frozenset({"issuer", "sha256", "storeversion"})


def _forged(folded: str) -> Code | None:
    """What an output key claims, given as :func:`core.relayed_text.fold_key` spells it (any
    case, width, look-alike letter or separator): a receipt, a grant, or nothing."""
    if "receipt" in folded:
        return Code.RECEIPT_FORGERY_REFUSED
    if folded in _GRANT_WORDS or folded.startswith("grant"):
        return Code.GRANT_FIELD_REFUSED
    return None


def _refuse_forged_fields(value: object) -> None:
    """Refuse ``value`` (the plugin's output as JSON) when any object at any depth has a key
    claiming a receipt (``receipt-forgery-refused``) — or is shaped like the host's receipt: a
    ``rung`` beside an ``issuer``, ``sha256`` or ``storeVersion`` — or a key claiming a grant
    (``grant-field-refused``); a receipt is named first (issue 29 item 4). Iterative: no
    nesting depth reaches a recursion limit."""
    found: set[Code] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            keys = {fold_key(k) for k in item if isinstance(k, str)}
            if "rung" in keys and keys & _RECEIPT_SHAPE:
                found.add(Code.RECEIPT_FORGERY_REFUSED)
            found.update(c for k in keys if (c := _forged(k)) is not None)
            stack.extend(item.values())
    if Code.RECEIPT_FORGERY_REFUSED in found:
        raise Refused(Code.RECEIPT_FORGERY_REFUSED, field="receipt")
    if Code.GRANT_FIELD_REFUSED in found:
        raise Refused(Code.GRANT_FIELD_REFUSED, field="grant")


def decode_output(
    op: PluginOperation, args: dict[str, Any], data: bytes
) -> tuple[PluginOutput, list[DecodedWrite]]:
    """Decode ``data``, the output of ``op`` called on ``args`` (module docstring).

    The whole output is refused when any part is: nothing it asks for is then written."""
    value = parse_json(data, code=Code.TOOL_OUTPUT_INVALID, what="The plugin's output")
    _refuse_forged_fields(value)
    try:
        output = PluginOutput.model_validate_json(data)
    except ValidationError as exc:
        raise invalid_input(exc, _NAMES, code=Code.TOOL_OUTPUT_INVALID) from None
    allowed = {args[w.arg] for w in op.writes}
    decoded = []
    for request in output.writes:
        if request.path not in allowed:
            raise Refused(
                Code.CAPABILITY_UNDECLARED,
                "The plugin asked to write a path its operation's arguments did not name.",
            )
        try:
            body = base64.b64decode(request.base64, validate=True)
        except (binascii.Error, ValueError):
            raise Refused(Code.TOOL_OUTPUT_INVALID, "A write request is not base64.") from None
        decoded.append(DecodedWrite(request.path, body))
    if len({w.path for w in decoded}) != len(decoded):
        raise Refused(Code.TOOL_OUTPUT_INVALID, "The plugin asked to write one path twice.")
    if decoded and not output.ok:
        raise Refused(Code.TOOL_OUTPUT_INVALID, "A declining plugin may not ask for writes.")
    return output, decoded
