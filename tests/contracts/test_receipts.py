"""Receipts: rungs, host evidence, forgery, unknown outcomes (seed 003, SPEC §7)."""

from __future__ import annotations

import hashlib
import json
from typing import get_args

import pytest
from hypothesis import given
from pydantic import ValidationError

from core.custody.wire import parse_peer_message
from core.paths import parse_path
from core.refusals import Code, Refused
from core.tools.receipts import (
    RUNGS,
    HostReceipt,
    PluginResult,
    Rung,
    decode_plugin_result,
    retry_advice,
    timed_out,
    write_receipt,
)
from tests.contracts.strategies import attempt, fuzz, json_values


def test_there_are_exactly_five_receipt_rungs() -> None:
    rungs = ("internal-read", "external-read", "local-write", "external-write", "trusted-native")
    assert get_args(Rung) == rungs
    assert tuple(RUNGS) == rungs


def test_host_write_receipt_names_path_size_sha256_and_store_version() -> None:
    data = b"\x89PNG\r\n\x1a\n" + bytes(100)
    receipt = write_receipt(
        op="create-asset",
        env="local",
        project="p_0123456789abcdef",
        path=parse_path("assets/logo.png"),
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        store_version=7,
        at_ms=1_767_225_600_000,
    )
    assert receipt is not None
    assert receipt.issuer == "host"
    assert receipt.rung == "local-write"
    assert (receipt.path, receipt.size) == ("assets/logo.png", 108)
    assert receipt.sha256 == hashlib.sha256(data).hexdigest()
    assert receipt.store_version == 7


def test_local_write_receipt_must_be_complete() -> None:
    with pytest.raises(ValidationError):
        HostReceipt(rung="local-write", op="x", env="local", path="a", size=1, at=0)
    assert HostReceipt(rung="internal-read", op="x", env="local", at=0).path is None


def test_plugin_cannot_forge_external_receipt() -> None:
    forged = {
        "ok": True,
        "result": {"saved": True},
        "receipt": {"issuer": "host", "rung": "external-write", "op": "x", "env": "local"},
    }
    with pytest.raises(Refused) as caught:
        decode_plugin_result(forged)
    assert (caught.value.code, caught.value.status) == (Code.RECEIPT_FORGERY_REFUSED, 422)
    with pytest.raises(Refused) as as_text:
        decode_plugin_result(json.dumps(forged))
    assert as_text.value.code == Code.RECEIPT_FORGERY_REFUSED


@pytest.mark.parametrize(
    "answer",
    [
        {"ok": True, "result": {"receipt": {"rung": "local-write"}}},
        {"ok": True, "result": {"hostReceipt": "yes"}},
        {"ok": True, "receipts": []},
        {"ok": True, "RECEIPT": None},
    ],
)
def test_plugin_receipt_under_any_name_or_in_its_result_is_refused(answer: object) -> None:
    with pytest.raises(Refused) as caught:
        decode_plugin_result(answer)
    assert caught.value.code == Code.RECEIPT_FORGERY_REFUSED


def test_plugin_result_without_receipt_is_only_its_own_account() -> None:
    result = decode_plugin_result({"ok": True, "result": {"saved": True}, "message": "saved"})
    assert result == PluginResult(ok=True, result={"saved": True}, message="saved")
    assert "receipt" not in PluginResult.model_fields


def test_peer_answer_may_carry_only_a_host_issued_receipt() -> None:
    frame = {
        "type": "result",
        "id": "r1",
        "result": {},
        "receipt": {"issuer": "plugin", "rung": "external-write", "op": "x", "env": "e", "at": 0},
    }
    with pytest.raises(Refused) as caught:
        parse_peer_message(frame)
    assert caught.value.code == Code.MESSAGE_MALFORMED


def test_timeout_leaves_the_outcome_unknown() -> None:
    outcome = timed_out(mutating=False)
    assert (outcome.outcome, outcome.evidence, outcome.receipt) == ("unknown", "none", None)


def test_mutating_call_is_not_blindly_retried() -> None:
    assert timed_out(mutating=True).retry == "not-blindly"
    assert timed_out(mutating=False).retry == "safe"
    assert retry_advice(True) == "not-blindly"


@fuzz(150)
@given(json_values)
def test_any_plugin_answer_decodes_or_is_refused(data: object) -> None:
    got = attempt(decode_plugin_result, data)
    assert isinstance(got, PluginResult | Refused)
    if isinstance(got, PluginResult):
        assert not any("receipt" in key.casefold() for key in got.result)
