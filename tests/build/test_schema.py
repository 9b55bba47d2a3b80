"""The committed JSON Schema of the host protocol is generated from core's models (SPEC §4)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from core.host.registry import OPERATIONS
from core.host.schema import protocol_schema, render

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def test_committed_schema_is_not_stale() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render(), (
        "docs/protocol.schema.json is stale: python -m core.host.schema > docs/protocol.schema.json"
    )


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = protocol_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_covers_every_operation() -> None:
    assert set(protocol_schema()["x-operations"]) == set(OPERATIONS)


def test_schema_accepts_a_well_formed_request(validator: jsonschema.Draft202012Validator) -> None:
    msg = {
        "v": 1,
        "id": "r1",
        "op": "file.write",
        "args": {"project": "p_0123456789abcdef", "path": "a.txt"},
    }
    assert list(validator.iter_errors(msg)) == []


@pytest.mark.parametrize(
    "msg",
    [
        {"v": 1, "id": "r1", "op": "file.write", "args": {"project": "nope", "path": "a"}},
        {"v": 1, "id": "r1", "op": "no.such.op", "args": {}},
        {"v": 1, "id": "r1", "op": "host.info", "args": {}, "extra": True},
        {"v": 1, "op": "host.info"},
    ],
)
def test_schema_rejects_what_the_host_refuses(
    validator: jsonschema.Draft202012Validator, msg: dict
) -> None:
    assert list(validator.iter_errors(msg)) != []


def test_refusal_codes_are_listed_with_statuses() -> None:
    codes = json.loads(COMMITTED.read_text())["x-refusal-codes"]
    assert codes["pairing-revoked"] == {
        "status": 403,
        "ws": 1008,
        "meaning": "The pairing with that environment was revoked.",
    }


def test_protocol_doc_tables_are_current() -> None:
    from core.host.schema import render_markdown

    doc = (COMMITTED.parent / "protocol.md").read_text(encoding="utf-8")
    start = doc.index("<!-- generated:start -->\n") + len("<!-- generated:start -->\n")
    end = doc.index("<!-- generated:end -->")
    assert doc[start:end] == render_markdown(), "regenerate: python -m core.host.schema --markdown"


def test_plugin_manifest_schema_is_current() -> None:
    from core.tools.plugin_manifest import manifest_schema

    committed = json.loads((COMMITTED.parent / "plugin-manifest.schema.json").read_text())
    assert committed == manifest_schema(), (
        "regenerate: python -m core.tools.plugin_manifest > docs/plugin-manifest.schema.json"
    )
