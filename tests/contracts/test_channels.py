"""Live channels: revocation closes them, deadlines abandon their calls (seed 002 §3, SPEC §6)."""

from __future__ import annotations

import pytest

from core.custody.channels import LiveChannels
from core.refusals import Code, Refused

A, B = "a" * 64, "b" * 64


def channels() -> LiveChannels:
    live = LiveChannels()
    live.open("c1", bearer_hash=A, env_key="ek_1")
    live.open("c2", bearer_hash=A, env_key="ek_1")
    live.open("c3", bearer_hash=B, env_key="ek_2")
    return live


def test_revocation_closes_every_live_channel_of_that_bearer_at_once() -> None:
    live = channels()
    closes = live.revoke([A])
    assert sorted(c.channel_id for c in closes) == ["c1", "c2"]
    assert {(c.code, c.reason) for c in closes} == {(1008, Code.PAIRING_REVOKED)}
    assert not live.is_open("c1")
    assert not live.is_open("c2")
    assert live.is_open("c3")


def test_revocation_abandons_pending_calls_with_pairing_revoked() -> None:
    live = channels()
    live.track("c1", "r1", deadline_ms=100, mutating=True)
    live.track("c1", "r2", deadline_ms=100, mutating=False)
    live.track("c3", "r3", deadline_ms=100, mutating=True)
    (c1,) = (c for c in live.revoke([A]) if c.channel_id == "c1")
    assert [(a.request_id, a.code, a.outcome) for a in c1.abandoned] == [
        ("r1", Code.PAIRING_REVOKED, "unknown"),
        ("r2", Code.PAIRING_REVOKED, "unknown"),
    ]
    assert c1.abandoned[0].refusal().status == 403
    assert live.pending("c3") == ("r3",)


def test_abandoned_mutating_call_is_not_blindly_retryable() -> None:
    live = channels()
    live.track("c1", "w", deadline_ms=5, mutating=True)
    live.track("c1", "r", deadline_ms=5, mutating=False)
    retry = {a.request_id: a.retry for a in live.expire(5)}
    assert retry == {"w": "not-blindly", "r": "safe"}


def test_deadline_abandons_only_calls_that_are_due() -> None:
    live = channels()
    live.track("c1", "early", deadline_ms=10, mutating=False)
    live.track("c3", "late", deadline_ms=20, mutating=False)
    assert live.next_deadline() == 10
    assert live.expire(9) == ()
    (gone,) = live.expire(10)
    assert (gone.request_id, gone.code) == ("early", Code.ENVIRONMENT_UNREACHABLE)
    assert live.next_deadline() == 20


def test_close_reason_names_the_code_of_abandoned_calls() -> None:
    live = channels()
    live.track("c1", "r1", deadline_ms=10, mutating=False)
    live.track("c3", "r3", deadline_ms=10, mutating=False)
    assert [a.code for a in live.closed("c1", "bearer-refused")] == [Code.BEARER_REFUSED]
    assert [a.code for a in live.closed("c3", "going away")] == [Code.ENVIRONMENT_UNREACHABLE]


def test_answer_on_another_channel_settles_nothing() -> None:
    live = channels()
    live.track("c1", "r1", deadline_ms=10, mutating=False)
    assert not live.settle("c3", "r1")
    assert live.settle("c1", "r1")
    assert not live.settle("c1", "r1")


def test_calls_cannot_be_tracked_on_a_closed_channel() -> None:
    live = channels()
    live.revoke([B])
    with pytest.raises(Refused) as caught:
        live.track("c3", "r", deadline_ms=1, mutating=False)
    assert caught.value.code == Code.ENVIRONMENT_UNREACHABLE
