"""The host protocol envelope and the dispatcher's one-answer law (core/protocol.py,
core/host/pipeline.py; SPEC §4)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.host.operations import Operation, Outcome
from core.host.registry import OPERATIONS
from core.model import NoArgs
from core.protocol import INBOUND_BOUNDS, MAX_BODY_BYTES, MAX_MESSAGE_BYTES, PROTOCOL_VERSION
from core.refusals import REFUSALS, Code
from tests.support import HostHarness, run

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
    assert refusal["message"] == "One of the fields sent is not one this takes."
    assert "grant" not in str(refusal)


def test_other_protocol_versions_are_refused() -> None:
    answer, _ = HostHarness().raw(json.dumps({"v": 2, "id": "a", "op": "host.info"}))
    assert answer["refusal"]["code"] == "protocol-version-unsupported"


def test_a_page_of_another_protocol_version_is_told_both_versions_whatever_its_shape() -> None:
    """Issue 29 item 15: an old page cached across an update (or an old worker beside a new
    page) is told both versions and to reload — even when its envelope's shape is another
    version's (a field this version does not know), never ``message-malformed``."""
    theirs = PROTOCOL_VERSION + 1
    for envelope in (
        {"v": theirs, "id": "a", "op": "host.info"},
        {"v": theirs, "id": "a", "op": "host.info", "session": "s1", "args": {}},
        {"v": theirs, "id": "a", "operation": "host.info"},
    ):
        answer, _ = HostHarness().raw(json.dumps(envelope))
        refusal = answer["refusal"]
        assert refusal["code"] == "protocol-version-unsupported", refusal
        assert f"version {theirs}" in refusal["message"]
        assert f"version {PROTOCOL_VERSION}" in refusal["message"]
        assert "Reload the page" in refusal["message"]


def test_the_page_sends_the_protocol_version_of_core() -> None:
    """The page's envelopes carry core's one constant (page/contract.gen.mjs), not a literal."""
    root = Path(__file__).resolve().parents[2]
    client = (root / "page" / "host-client.mjs").read_text()
    assert "{ v: PROTOCOL_VERSION, id, op, args }" in client
    generated = (root / "page" / "contract.gen.mjs").read_text()
    assert f"export const PROTOCOL_VERSION = {PROTOCOL_VERSION};" in generated


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
    async def boom(call):  # type: ignore[no-untyped-def]
        raise RuntimeError("secret-ish internals /home/x/y.py line 3")

    h = HostHarness(
        extra=(Operation("test.boom", NoArgs, NoArgs, boom, "test only", audited=False),)
    )
    answer, _ = h.raw(json.dumps({"v": 1, "id": "b", "op": "test.boom"}))
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


# --- sizes checked before the copy into Python (issue 13 #5) ---------------------------------


@given(st.text(alphabet=st.characters(codec=None), max_size=64))
def test_a_text_is_never_fewer_utf8_bytes_than_utf16_units(text: str) -> None:
    """The worker compares a JS string's ``.length`` (UTF-16 units) with the byte bound: a
    text over it in units is over it in bytes, whatever its characters (lone surrogates
    included, as Python counts them)."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert units <= len(text.encode("utf-8", "surrogatepass"))


def test_the_worker_is_handed_the_protocols_own_bounds() -> None:
    assert INBOUND_BOUNDS.message_units == MAX_MESSAGE_BYTES
    assert INBOUND_BOUNDS.body_bytes == MAX_BODY_BYTES


def test_a_message_refused_by_its_size_alone_is_answered_and_audited() -> None:
    h = HostHarness()
    answer = json.loads(run(h.host.refuse_oversized("message", 536_000_000)))
    assert (answer["id"], answer["ok"], answer["refusal"]["code"]) == (
        None,
        False,
        "message-too-large",
    )
    assert answer["refusal"]["status"] == REFUSALS[Code.MESSAGE_TOO_LARGE].status
    assert "536000000" in answer["refusal"]["message"]
    pid = "p_" + "0" * 16
    text = json.dumps({"v": 1, "id": "w9", "op": "file.write", "args": {"project": pid}})
    body = json.loads(run(h.host.refuse_oversized("body", MAX_BODY_BYTES + 1, text)))
    assert (body["id"], body["refusal"]["code"]) == ("w9", "message-too-large")
    records = run(h.ctx.audit.page(limit=10))
    by_seq = {r["seq"]: r for r in records}
    assert by_seq[answer["logged"]]["rule"] == "message-too-large"
    assert (by_seq[body["logged"]]["op"], by_seq[body["logged"]]["project"]) == ("file.write", pid)


def test_a_body_over_the_bound_gets_the_same_refusal_in_python() -> None:
    """What the worker lets pass is checked again, exactly, with the same words."""
    h = HostHarness()
    pid = h.ok("project.create", name="p")["project"]["id"]
    answer, _ = h.call("file.write", b"x" * (MAX_BODY_BYTES + 1), project=pid, path="a")
    direct = json.loads(run(h.host.refuse_oversized("body", MAX_BODY_BYTES + 1)))
    assert answer["refusal"] == direct["refusal"]
