"""Wire contracts: the call envelope and the peer frames (SPEC §4, §6; seed 002 §1, §4)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.custody.wire import (
    MAX_ARGS_BYTES,
    MAX_FRAME_BYTES,
    CallEnvelope,
    ExecuteRefusal,
    ExecuteRequest,
    HelloFrame,
    frame_text,
    json_schemas,
    parse_call_envelope,
    parse_peer_message,
)
from core.refusals import Code, Refused
from core.secret import REDACTED
from tests.contracts.strategies import attempt, fuzz, json_values, near_frames

DESCRIPTOR = "d_" + "a" * 24
ENVELOPE = {"envKey": "ek_" + "1" * 32, "tool": "create-asset", "descriptorId": DESCRIPTOR}


def refused(data: object, parse: object = parse_call_envelope) -> Refused:
    with pytest.raises(Refused) as caught:
        parse(data)  # type: ignore[operator]
    return caught.value


def test_call_envelope_is_envkey_tool_descriptorid_args() -> None:
    envelope = parse_call_envelope({**ENVELOPE, "args": {"size": 64}})
    assert envelope == CallEnvelope(
        envKey=ENVELOPE["envKey"], tool="create-asset", descriptorId=DESCRIPTOR, args={"size": 64}
    )
    assert set(json.loads(envelope.model_dump_json())) == {"envKey", "tool", "descriptorId", "args"}
    assert set(CallEnvelope.model_json_schema(by_alias=True)["properties"]) == {
        "envKey",
        "tool",
        "descriptorId",
        "args",
    }


def test_call_envelope_refuses_unknown_fields_and_snake_case_spellings() -> None:
    for extra in ({"bearer": "vbx_x"}, {"env_key": "ek_1"}, {"grant": {}}):
        assert refused({**ENVELOPE, **extra}).code == Code.MESSAGE_MALFORMED


def test_call_envelope_keeps_environment_and_operation_identity_apart() -> None:
    for missing in ("envKey", "descriptorId", "tool"):
        partial = {k: v for k, v in ENVELOPE.items() if k != missing}
        assert refused(partial).code == Code.MESSAGE_MALFORMED
    assert refused({**ENVELOPE, "descriptorId": ENVELOPE["envKey"]}).code == (
        Code.MESSAGE_MALFORMED
    )


def test_call_envelope_args_are_size_bounded() -> None:
    big = {**ENVELOPE, "args": {"blob": "x" * MAX_ARGS_BYTES}}
    error = refused(big)
    assert (error.code, error.status) == (Code.MESSAGE_TOO_LARGE, 413)


def test_frames_are_size_bounded() -> None:
    text = json.dumps({**ENVELOPE, "args": {"blob": "x" * MAX_FRAME_BYTES}})
    assert refused(text).code == Code.MESSAGE_TOO_LARGE
    assert refused(text, parse_peer_message).code == Code.MESSAGE_TOO_LARGE


def test_execute_frame_never_carries_a_bearer() -> None:
    frame = {"type": "execute", "id": "r1", **ENVELOPE, "args": {}, "bearer": "vbx_" + "b" * 43}
    assert refused(frame, parse_peer_message).code == Code.MESSAGE_MALFORMED
    assert "bearer" not in ExecuteRequest.model_fields


def test_hello_frame_is_redacted_unless_sent_to_its_issuer() -> None:
    secret = "vbx_" + "h" * 43
    hello = parse_peer_message({"type": "hello", "role": "environment", "bearer": secret})
    assert isinstance(hello, HelloFrame)
    assert json.loads(frame_text(hello))["bearer"] == REDACTED
    assert json.loads(frame_text(hello, reveal=True))["bearer"] == secret
    refusal = ExecuteRefusal.model_validate(
        {
            "type": "refusal",
            "id": "r",
            "refusal": {"code": "tool-unknown", "status": 404, "message": "No."},
        }
    )
    assert "reveal" not in frame_text(refusal, reveal=True)


def test_peer_refusal_must_use_a_closed_code() -> None:
    frame = {
        "type": "refusal",
        "id": "r",
        "refusal": {"code": "made-up", "status": 1, "message": ""},
    }
    assert refused(frame, parse_peer_message).code == Code.MESSAGE_MALFORMED


def test_wire_refusal_text_never_echoes_input() -> None:
    secret = "vbx_" + "s" * 43
    frames = [
        {"type": secret},
        {"type": "hello", "role": secret, "bearer": 1},
        {"type": "hello", "role": "environment", "bearer": secret, secret: secret},
        {**ENVELOPE, secret: 1},
        {**ENVELOPE, "descriptorId": secret},
        secret,
    ]
    for frame in frames:
        for parse in (parse_call_envelope, parse_peer_message):
            assert secret not in refused(frame, parse).message


MALFORMED = (Code.MESSAGE_MALFORMED, Code.MESSAGE_TOO_LARGE)


@fuzz(150)
@given(json_values | near_frames)
def test_any_json_value_gives_a_call_envelope_or_a_refusal(data: object) -> None:
    got = attempt(parse_call_envelope, data)
    assert isinstance(got, CallEnvelope) or got.code in MALFORMED


@fuzz(150)
@given(json_values | near_frames)
def test_any_json_value_gives_a_peer_message_or_a_refusal(data: object) -> None:
    got = attempt(parse_peer_message, data)
    if isinstance(got, Refused):
        assert got.code in MALFORMED
    else:
        assert got.type in ("hello", "execute", "result", "refusal")


@fuzz(150)
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_any_text_gives_a_model_or_a_refusal(text: str | bytes) -> None:
    for parse in (parse_call_envelope, parse_peer_message):
        got = attempt(parse, text)
        assert not isinstance(got, Refused) or got.code == Code.MESSAGE_MALFORMED


def test_deeply_nested_json_is_refused_not_crashed() -> None:
    deep: object = []
    for _ in range(5000):
        deep = [deep]
    assert refused({**ENVELOPE, "args": {"x": deep}}).code == Code.MESSAGE_MALFORMED
    assert refused("[" * 100_000).code == Code.MESSAGE_MALFORMED


@pytest.mark.cpython_only  # jsonschema's Rust dependency has no Pyodide wheel here
def test_json_schemas_are_valid_and_mark_the_bearer_write_only() -> None:
    import jsonschema

    schemas = json_schemas()
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    hello = schemas["PeerMessage"]["$defs"]["HelloFrame"]["properties"]["bearer"]
    assert hello["writeOnly"] is True
    valid = {**ENVELOPE, "args": {}}
    jsonschema.validate(valid, schemas["CallEnvelope"])


@fuzz(100)
@given(
    env_key=st.text(min_size=1, max_size=128),
    tool=st.from_regex(r"[a-z][a-z0-9_.-]{0,63}", fullmatch=True),
    descriptor=st.from_regex(r"d_[0-9a-f]{24}", fullmatch=True),
    args=st.dictionaries(st.text(max_size=10), json_values, max_size=4),
)
def test_every_well_formed_envelope_parses_to_itself(
    env_key: str, tool: str, descriptor: str, args: dict[str, object]
) -> None:
    data = {"envKey": env_key, "tool": tool, "descriptorId": descriptor, "args": args}
    envelope = parse_call_envelope(data)
    assert json.loads(envelope.model_dump_json()) == json.loads(json.dumps(data))


def test_a_chunks_head_alone_names_its_request_and_where_its_bytes_start() -> None:
    """Issue 34: an adapter relays a remote's chunk without copying it into Python, reading
    only its first CHUNK_HEAD_BYTES; that head gives the same request id as the whole message
    and the offset of the same bytes, and refuses exactly what the whole-message parser
    refuses."""
    from core.custody.wire import (
        CHUNK_HEAD_BYTES,
        chunk_message,
        parse_chunk_head,
        parse_chunk_message,
    )

    for rid in ("x1", "r" * 64):
        message = chunk_message(rid, b"\x00zip bytes" * 1000)
        head = parse_chunk_head(message[:CHUNK_HEAD_BYTES])
        assert head is not None and head[0] == rid
        assert (rid, message[head[1] :]) == parse_chunk_message(message)
    for bad in (b"", b"\x00abc", b"\x41" + b"a" * 10, b"\x03\xff\xfe\xfd rest", b"\x05ab"):
        assert parse_chunk_head(bad[:CHUNK_HEAD_BYTES]) is None
        assert parse_chunk_message(bad) is None
