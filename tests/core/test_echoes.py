"""Refusals and audit records never echo what the caller sent (issue 13, finding 7; seed 002
§2; SPEC §4, §5): a refusal names only fields the models declare — never an unknown key, never
a discriminator value the caller chose — and no token-shaped key or value (``vbx_…``,
``vbh_…``) reaches an answer's refusal or any audit record, through every operation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.gestures import HUMAN_UI
from core.host.registry import OPERATIONS
from tests.support import HostHarness

BEARER = "vbx_" + "Qk9vTXlTZWNyZXRCZWFyZXI" * 2
HOST_TOKEN = "vbh_" + "bG9va3NMaWtlQUhvc3RUb2tlbg" + "AbCdEfGhIjKlMnOpQ"
PLAIN_UNKNOWN = "zz_unknown_field_name"
"""An unknown key that is no secret: it must not be named either (names come from models)."""
LOWER_TOKEN = "vbx_" + "abcdefghijklmnopqrstuvwxyz"
"""Token-shaped, yet a valid operation name and request id by their patterns."""
ECHOES = (BEARER, HOST_TOKEN, PLAIN_UNKNOWN, LOWER_TOKEN)
PROJECT = "p_" + "0" * 16


def _send(h: HostHarness, message: dict[str, Any]) -> dict[str, Any]:
    answer, _ = h.raw(json.dumps(message))
    return answer


def _assert_no_echo(h: HostHarness, answers: list[dict[str, Any]]) -> None:
    for answer in answers:
        assert not answer["ok"], answer
        text = json.dumps(answer["refusal"])
        assert not any(e in text for e in ECHOES), answer
    for record in h.sink.records.values():
        text = json.dumps(record)
        assert not any(e in text for e in ECHOES), record


def _hostile_args(h: HostHarness, op: str) -> list[dict[str, Any]]:
    out = []
    for key, value in ((BEARER, HOST_TOKEN), (PLAIN_UNKNOWN, BEARER), (HOST_TOKEN, [BEARER])):
        message = {"v": 1, "id": "e1", "op": op, "args": {key: value}, "origin": HUMAN_UI}
        out.append(_send(h, message))
    return out


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_no_operation_names_an_unknown_argument_key_or_echoes_its_value(op: str) -> None:
    h = HostHarness()
    answers = _hostile_args(h, op)
    assert all(a["refusal"]["code"] == "message-malformed" for a in answers), answers
    _assert_no_echo(h, answers)


def test_the_envelope_never_names_an_unknown_key_an_unknown_operation_or_a_token_shaped_id() -> (
    None
):
    h = HostHarness()
    answers = [
        _send(h, {"v": 1, "id": "e2", "op": "host.info", BEARER: HOST_TOKEN}),
        _send(h, {"v": 1, "id": "e3", "op": "host.info", PLAIN_UNKNOWN: 1}),
        _send(h, {"v": 1, "id": "e4", "op": LOWER_TOKEN}),
        _send(h, {"v": 1, "id": LOWER_TOKEN, "op": "host.info"}),
        _send(h, {"v": 1, "id": "e5", "op": "host.info", "origin": BEARER}),
        _send(h, {"v": BEARER, "id": "e6", "op": "host.info"}),
    ]
    assert [a["refusal"]["code"] for a in answers] == [
        "message-malformed",
        "message-malformed",
        "operation-unknown",
        "message-malformed",
        "message-malformed",
        "message-malformed",
    ]
    assert answers[3]["id"] is None  # an id shaped like a secret is not an id
    _assert_no_echo(h, answers)


def test_a_discriminator_value_the_caller_chose_is_never_repeated() -> None:
    h = HostHarness()
    ops = [{"op": BEARER, "name": "a"}, {"op": LOWER_TOKEN}]
    answers = [
        _send(
            h,
            {
                "v": 1,
                "id": "d1",
                "op": "blocks.candidate_edit",
                "args": {"project": PROJECT, "ops": [op]},
            },
        )
        for op in ops
    ]
    assert all(a["refusal"]["code"] == "message-malformed" for a in answers)
    message = answers[0]["refusal"]["message"]
    assert message.startswith("item 1 of ops must name one of the kinds 'add', ") and (
        "args." not in message
    )
    _assert_no_echo(h, answers)


def _free_form_calls(project: str) -> list[tuple[str, dict[str, Any], str]]:
    """Every operation argument that holds a free-form object, given a hostile key and value:
    ``(op, args, field the refusal may name)``."""
    hostile = {BEARER: HOST_TOKEN, PLAIN_UNKNOWN: BEARER}
    human = {"imported_via": HUMAN_UI}
    return [
        ("policy.set", {"changes": hostile}, "changes"),
        ("policy.set", {"changes": {"read_only": BEARER}}, "read_only"),
        ("mission.post", {"project": project, "agent_id": "a", "letter": hostile}, "letter"),
        (
            "mission.deliver",
            {"project": project, "agent_id": "a", "to": "b", "letter": hostile, "packet": "p"},
            "letter",
        ),
        ("receipt.import", {"project": project, "candidate": hostile, **human}, "candidate"),
        (
            "receipt.import",
            {"project": project, "candidate": {"block_id": BEARER}, **human},
            "candidate",
        ),
        (
            "blocks.candidate_edit",
            {"project": project, "ops": [{"op": "add", "name": "n", **hostile}]},
            "",
        ),
    ]


def test_free_form_arguments_refuse_by_known_field_names_and_audit_none_of_the_input() -> None:
    h = HostHarness()
    project = h.ok("project.create", name="echo")["project"]["id"]
    answers = []
    for op, args, field in _free_form_calls(project):
        message = {"v": 1, "id": "f1", "op": op, "args": args, "origin": HUMAN_UI}
        answer = _send(h, message)
        answers.append(answer)
        assert not answer["ok"], (op, answer)
        named = answer["refusal"].get("field") or ""
        assert named.startswith(field), (op, answer)
    _assert_no_echo(h, answers)


def test_a_token_shaped_value_of_a_known_field_is_never_echoed_in_a_refusal() -> None:
    h = HostHarness()
    project = h.ok("project.create", name="echo")["project"]["id"]
    answers = [
        _send(
            h,
            {"v": 1, "id": "v1", "op": "file.read", "args": {"project": project, "path": BEARER}},
        ),
        _send(
            h,
            {
                "v": 1,
                "id": "v2",
                "op": "file.move",
                "args": {"project": project, "src": HOST_TOKEN, "dst": "b"},
            },
        ),
    ]
    assert [a["refusal"]["code"] for a in answers] == ["file-not-found", "file-not-found"]
    _assert_no_echo(h, answers)
