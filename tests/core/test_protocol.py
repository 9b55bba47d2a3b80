"""The host protocol envelope and the dispatcher's one-answer law (core/protocol.py,
core/host/dispatcher.py; SPEC §4)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.host.operations import OPERATIONS, Outcome, operation
from core.model import NoArgs
from core.protocol import MAX_MESSAGE_BYTES
from tests.support import HostHarness

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def test_every_message_gets_one_answer_with_its_id() -> None:
    h = HostHarness()
    answer, _ = h.raw(json.dumps({"v": 1, "id": "abc", "op": "project.list", "args": {}}))
    assert answer["id"] == "abc" and answer["ok"] is True


def test_malformed_json_is_refused_not_silent() -> None:
    answer, body = HostHarness().raw("{not json")
    assert answer["ok"] is False and body is None
    assert answer["refusal"]["code"] == "message-malformed"
    assert answer["refusal"]["status"] == 400


def test_unknown_envelope_fields_are_refused_and_the_id_is_kept() -> None:
    answer, _ = HostHarness().raw(json.dumps({"v": 1, "id": "k", "op": "host.info", "x": 1}))
    assert answer["id"] == "k" and answer["refusal"]["code"] == "message-malformed"


def test_unknown_argument_fields_are_refused_without_being_named() -> None:
    h = HostHarness()
    refusal = h.refused("project.create", name="a", grant={"all": True})
    assert refusal["code"] == "message-malformed"
    assert refusal["message"] == "args.(field) is not allowed." and "grant" not in str(refusal)


def test_other_protocol_versions_are_refused() -> None:
    answer, _ = HostHarness().raw(json.dumps({"v": 2, "id": "a", "op": "host.info"}))
    assert answer["refusal"]["code"] == "protocol-version-unsupported"


def test_oversized_messages_are_refused_before_parsing() -> None:
    text = json.dumps(
        {"v": 1, "id": "a", "op": "host.info", "args": {"pad": "x" * MAX_MESSAGE_BYTES}}
    )
    answer, _ = HostHarness().raw(text)
    assert answer["refusal"]["code"] == "message-too-large" and answer["id"] is None


def test_deep_nesting_is_a_refusal_not_a_crash() -> None:
    answer, _ = HostHarness().raw(
        '{"v":1,"id":"d","op":"host.info","args":' + "[" * 5000 + "]" * 5000 + "}"
    )
    assert answer["ok"] is False and answer["refusal"]["code"] == "message-malformed"


def test_an_unexpected_error_is_internal_error_without_a_trace() -> None:
    @operation("test.boom", args=NoArgs, result=NoArgs, summary="test only", audited=False)
    async def boom(call):  # type: ignore[no-untyped-def]
        raise RuntimeError("secret-ish internals /home/x/y.py line 3")

    try:
        h = HostHarness()
        answer, _ = h.raw(json.dumps({"v": 1, "id": "b", "op": "test.boom"}))
    finally:
        OPERATIONS.pop("test.boom")
    assert answer["refusal"] == {
        "code": "internal-error",
        "status": 500,
        "message": "The host failed unexpectedly; nothing was changed by this call.",
        "field": None,
        "details": None,
    }
    assert "Traceback" not in json.dumps(answer) and "secret-ish" not in json.dumps(answer)
    assert h.sink.records[answer["logged"]]["rule"] == "internal-error"


def test_refusals_and_admissions_are_both_audited() -> None:
    h = HostHarness()
    ok, _ = h.call("project.create", name="p")
    bad, _ = h.call("project.create", name="")
    assert h.sink.records[ok["logged"]]["decision"] == "admitted"
    rec = h.sink.records[bad["logged"]]
    assert (rec["decision"], rec["rule"], rec["op"]) == (
        "refused",
        "name-invalid",
        "project.create",
    )


@settings(max_examples=200)
@given(JSON)
def test_any_json_value_gets_exactly_one_answer_never_an_exception(value: object) -> None:
    h = HostHarness()
    answer, _ = h.raw(json.dumps(value))
    assert set(answer) == {"v", "id", "ok", "refusal", "logged"} or answer["ok"] is True
    if not answer["ok"]:
        assert answer["refusal"]["code"] != "internal-error"
    # the host still answers the next call
    assert h.ok("host.info")["protocol"] == 1


@settings(max_examples=150)
@given(
    op=st.sampled_from(sorted(OPERATIONS)),
    args=st.dictionaries(st.text(max_size=10), JSON, max_size=4),
    body=st.none() | st.binary(max_size=8),
)
def test_random_arguments_to_every_operation_yield_a_result_or_a_named_refusal(
    op: str, args: dict, body: bytes | None
) -> None:
    h = HostHarness()
    answer, _ = h.raw(json.dumps({"v": 1, "id": "f", "op": op, "args": args}), body)
    assert answer["id"] == "f"
    if not answer["ok"]:
        assert answer["refusal"]["code"] != "internal-error", answer


def test_outcome_is_a_plain_value() -> None:
    assert Outcome(NoArgs()).rule == "admitted"


def test_a_lone_surrogate_in_the_text_is_malformed_not_an_internal_error() -> None:
    # a JavaScript string can hold one; found by the browser fuzz (e2e/test_hostile_input.py)
    text = '{"v": 1, "id": "s1", "op": "project.create", "args": {"name": "a\ud800b"}}'
    answer, _ = HostHarness().raw(text)
    assert answer["refusal"]["code"] == "message-malformed"


def test_the_id_of_a_very_deeply_nested_message_is_salvaged_without_recursion() -> None:
    # json.loads recurses in C and overflowed the Wasm stack in Pyodide (a fatal error)
    from core.protocol import salvage_id

    deep = '{"id": "d1", "args": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert salvage_id(deep) is None
    assert salvage_id('{"id": "d2", "args": [[[]]]}') == "d2"
    answer, _ = HostHarness().raw(deep)
    assert answer["refusal"]["code"] == "message-malformed"
