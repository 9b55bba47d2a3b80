"""The host protocol's JSON Schema, generated from the models (SPEC §4; STYLE §2).

``docs/protocol.schema.json`` is this module's output; a test fails when the committed file is
stale. Regenerate with ``python -m core.host.schema > docs/protocol.schema.json``.

The document validates one request (``oneOf`` one shape per operation: the envelope with
``op`` fixed and ``args`` of that operation's model) and describes answers in ``$defs``;
``x-operations`` lists each operation's gates (:class:`core.host.operations.Operation`) and
result model, ``x-refusal-codes`` the closed refusal list with statuses.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from core.host.operations import AnyOperation
from core.host.registry import OPERATIONS
from core.protocol import (
    MAX_BODY_BYTES,
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    Envelope,
    RefusalAnswer,
    ResultAnswer,
)
from core.refusals import REFUSALS

__all__ = ["protocol_schema"]

REF = "#/$defs/{model}"


def protocol_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema document (draft 2020-12), deterministic."""
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (Envelope, "validation"),
        (ResultAnswer, "serialization"),
        (RefusalAnswer, "serialization"),
    ]
    for op in OPERATIONS.values():
        models += [(op.args, "validation"), (op.result, "serialization")]
    keyed, top = models_json_schema(models, ref_template=REF)
    defs = top.get("$defs", {})

    def ref(model: type[BaseModel], mode: JsonSchemaMode) -> str:
        return str(keyed[(model, mode)]["$ref"])

    requests = []
    operations = {}
    for name in sorted(OPERATIONS):
        op = OPERATIONS[name]
        requests.append(
            {
                "title": name,
                "allOf": [{"$ref": ref(Envelope, "validation")}],
                "properties": {"op": {"const": name}, "args": {"$ref": ref(op.args, "validation")}},
                "required": ["v", "id", "op"],
            }
        )
        operations[name] = {
            "summary": op.summary,
            "writes": op.writes,
            "gesture": _gesture(op),
            "receipt": op.rung,
            "audited": op.audited,
            "body_in": op.body_in,
            "body_out": op.body_out,
            "args": ref(op.args, "validation"),
            "result": ref(op.result, "serialization"),
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "voicebox-e1-host-protocol",
        "title": f"Voicebox E1 host protocol v{PROTOCOL_VERSION}: one request",
        "description": (
            f"A request is a JSON text of at most {MAX_MESSAGE_BYTES} bytes plus an optional "
            f"binary body of at most {MAX_BODY_BYTES} bytes. Every request gets exactly one "
            "answer: ResultAnswer or RefusalAnswer."
        ),
        "oneOf": requests,
        "$defs": dict(sorted(defs.items())),
        "x-answers": [ref(ResultAnswer, "serialization"), ref(RefusalAnswer, "serialization")],
        "x-operations": operations,
        "x-refusal-codes": {
            str(code): {"status": i.status, "ws": i.ws, "meaning": i.meaning}
            for code, i in REFUSALS.items()
        },
    }


def _gesture(op: AnyOperation) -> dict[str, Any] | None:
    """A person's-gesture gate as data: the argument that names it (or none: the origin alone)
    and whether every call needs it or only some (``Gesture.when``)."""
    if op.gesture is None:
        return None
    return {"via": op.gesture.via, "every_call": op.gesture.when is None}


def render() -> str:
    """The schema as the committed file's text."""
    return json.dumps(protocol_schema(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def render_markdown() -> str:
    """The operations and refusal-code tables of ``docs/protocol.md`` (generated section)."""
    schema = protocol_schema()
    lines = [
        "| operation | what it does | writes | person's gesture | receipt | audited "
        "| body in / out |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, op in schema["x-operations"].items():
        body = f"{op['body_in']} / {'bytes' if op['body_out'] else 'none'}"
        gesture = op["gesture"]
        if gesture is None:
            human = "no"
        else:
            human = "yes" if gesture["every_call"] else "some calls"
            human += f" (`{gesture['via']}`)" if gesture["via"] else ""
        lines.append(
            f"| `{name}` | {op['summary']} | {'yes' if op['writes'] else 'no'} | {human} "
            f"| `{op['receipt']}` | {'yes' if op['audited'] else 'no'} | {body} |"
        )
    lines += ["", "| refusal code | status | close | meaning |", "|---|---|---|---|"]
    for code, i in schema["x-refusal-codes"].items():
        lines.append(f"| `{code}` | {i['status']} | {i['ws'] or ''} | {i['meaning']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render_markdown() if "--markdown" in sys.argv else render())
