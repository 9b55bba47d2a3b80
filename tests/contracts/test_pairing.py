"""Pairing: issue, complete, revoke and pairings.json (seed 002 §2-§3, SPEC §6)."""

from __future__ import annotations

import json

import pytest

from core.audit import AuditLog
from core.custody.bearer import bearer_hash, bearer_ref
from core.custody.channels import LiveChannels
from core.custody.pairing import PAIRINGS_DOC, Pairings, PairingStore
from core.custody.route import PeerRoute, route_call
from core.memory.adapters import MemoryAuditSink
from core.refusals import Code, Refused
from core.secret import Secret
from tests.contracts.world import World
from tests.support import run

WRONG = Secret("vbh_" + "w" * 43)


def refused(coro: object) -> Refused:
    with pytest.raises(Refused) as caught:
        run(coro)  # type: ignore[arg-type]
    return caught.value


def test_issue_requires_the_host_token() -> None:
    world = World()
    for token in (None, WRONG):
        assert refused(world.store.issue(token, world.alpha)).code == Code.HOST_TOKEN_REQUIRED
    assert world.pairings() == Pairings()


def test_host_token_is_checked_before_the_env_key() -> None:
    world = World()
    error = refused(world.store.issue(WRONG, "ek_" + "0" * 32))
    assert error.code == Code.HOST_TOKEN_REQUIRED


def test_issue_binds_to_an_environment_this_host_serves() -> None:
    world = World()
    assert refused(world.store.issue(world.token, "ek_" + "0" * 32)).code == (
        Code.UNKNOWN_ENVIRONMENT
    )
    assert refused(world.store.issue(world.token, world.peer)).code == Code.UNKNOWN_ENVIRONMENT


def test_issued_bearer_is_stored_only_as_its_hash() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    stored = world.state.docs[PAIRINGS_DOC]
    assert bearer.reveal().encode() not in stored
    assert bearer.reveal().removeprefix("vbx_").encode() not in stored
    document = json.loads(stored)
    assert document["issued"] == [
        {"hash": bearer_hash(bearer), "envKey": world.alpha, "issuedAt": world.clock.now_ms()}
    ]


def test_each_issued_bearer_is_fresh_and_bound_to_one_env_key() -> None:
    world = World()
    first, second = world.issue(world.alpha), world.issue(world.beta)
    assert first != second
    bound = {i.hash: i.env_key for i in world.pairings().issued}
    assert bound == {bearer_hash(first): world.alpha, bearer_hash(second): world.beta}


def test_complete_requires_the_host_token() -> None:
    world = World()
    outbound = Secret("vbx_" + "p" * 43)
    assert refused(world.store.complete(None, world.peer, outbound)).code == (
        Code.HOST_TOKEN_REQUIRED
    )
    assert refused(world.store.complete(WRONG, world.peer, outbound)).code == (
        Code.HOST_TOKEN_REQUIRED
    )
    assert world.pairings().outbound == ()


def test_complete_records_the_outbound_bearer_for_the_peer() -> None:
    world = World()
    outbound = Secret("vbx_" + "p" * 43)
    done = run(world.store.complete(world.token, world.peer, outbound))
    assert done.env_key == world.peer
    route = route_call(world.envs(), world.pairings(), world.peer)
    assert isinstance(route, PeerRoute)
    assert route.bearer == outbound
    replacement = Secret("vbx_" + "r" * 43)
    run(world.store.complete(world.token, world.peer, replacement))
    assert world.pairings().outbound_for(world.peer) == replacement
    assert len(world.pairings().outbound) == 1


def test_complete_refuses_an_unknown_peer_or_a_non_bearer() -> None:
    world = World()
    outbound = Secret("vbx_" + "p" * 43)
    unknown = refused(world.store.complete(world.token, "ek_" + "0" * 32, outbound))
    assert unknown.code == Code.UNKNOWN_ENVIRONMENT
    served = refused(world.store.complete(world.token, world.alpha, outbound))
    assert served.code == Code.UNKNOWN_ENVIRONMENT
    shape = refused(world.store.complete(world.token, world.peer, Secret("not-a-bearer")))
    assert shape.code == Code.BEARER_REFUSED


def test_revoke_requires_the_host_token() -> None:
    world = World()
    world.issue(world.alpha)
    assert refused(world.store.revoke(WRONG, world.alpha)).code == Code.HOST_TOKEN_REQUIRED
    assert len(world.pairings().issued) == 1


def test_revoke_moves_issued_bearers_to_revoked_bearers() -> None:
    world = World()
    a1, a2, b = world.issue(world.alpha), world.issue(world.alpha), world.issue(world.beta)
    world.clock.advance(1000)
    result = run(world.store.revoke(world.token, world.alpha))
    assert result.revoked == 2
    pairings = world.pairings()
    assert {i.hash for i in pairings.issued} == {bearer_hash(b)}
    assert {r.hash for r in pairings.revoked} == {bearer_hash(a1), bearer_hash(a2)}
    assert all(r.revoked_at == world.clock.now_ms() for r in pairings.revoked)
    assert '"revokedBearers"' in world.state.docs[PAIRINGS_DOC].decode()


def test_revoke_forgets_the_outbound_bearer_for_that_environment() -> None:
    world = World()
    run(world.store.complete(world.token, world.peer, Secret("vbx_" + "p" * 43)))
    run(world.store.revoke(world.token, world.peer))
    with pytest.raises(Refused) as caught:
        route_call(world.envs(), world.pairings(), world.peer)
    assert caught.value.code == Code.ENVIRONMENT_NOT_PAIRED


def test_revocation_writes_a_pairing_revoked_audit_record() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    result = run(world.store.revoke(world.token, world.alpha))
    assert result.logged is not None
    record = world.sink.records[result.logged]
    assert record["rule"] == "pairing-revoked"
    assert record["decision"] == "recorded"
    assert record["op"] == "pairing.revoke"
    assert record["details"]["envKey"] == world.alpha
    assert record["details"]["revoked"] == 1
    assert record["details"]["bearers"] == bearer_ref(bearer_hash(bearer))
    assert run(world.audit.verify()).ok


def test_issue_and_complete_are_audited() -> None:
    world = World()
    issued = run(world.store.issue(world.token, world.alpha))
    done = run(world.store.complete(world.token, world.peer, Secret("vbx_" + "p" * 43)))
    assert world.sink.records[issued.logged]["rule"] == "pairing-issued"
    assert world.sink.records[done.logged]["rule"] == "pairing-completed"


class RefusingSink(MemoryAuditSink):
    """An audit sink whose storage fails."""

    async def append(self, seq: int, record: dict[str, object]) -> None:
        raise Refused(Code.STORAGE_FAILED)


def test_revocation_stands_when_its_audit_record_cannot_be_written() -> None:
    world = World()
    world.issue(world.alpha)
    store = PairingStore(
        world.state,
        world.clock,
        world.random,
        AuditLog(RefusingSink(), world.clock, key=world.audit_key, state=world.state),
    )
    result = run(store.revoke(world.token, world.alpha))
    assert result.logged is None
    assert result.log_refused == "storage-failed"
    assert len(world.pairings().revoked) == 1


def test_revocation_closes_live_channels_of_the_revoked_bearers() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    other = world.issue(world.beta)
    live = LiveChannels()
    live.open("c1", bearer_hash=bearer_hash(bearer), env_key=world.alpha)
    live.open("c2", bearer_hash=bearer_hash(other), env_key=world.beta)
    result = run(world.store.revoke(world.token, world.alpha, live))
    assert [c.channel_id for c in result.closes] == ["c1"]
    assert (result.closes[0].code, result.closes[0].reason) == (1008, Code.PAIRING_REVOKED)
    assert not live.is_open("c1")
    assert live.is_open("c2")


def test_revoke_refuses_a_malformed_env_key_without_echoing_it() -> None:
    world = World()
    error = refused(world.store.revoke(world.token, "vbx_looks_secret"))
    assert error.code == Code.UNKNOWN_ENVIRONMENT
    assert "vbx_looks_secret" not in error.message


def test_pairings_persist_across_store_instances() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    run(world.store.complete(world.token, world.peer, Secret("vbx_" + "p" * 43)))
    fresh = PairingStore(world.state, world.clock, world.random)
    loaded = run(fresh.load())
    assert loaded.issued[0].hash == bearer_hash(bearer)
    assert loaded.outbound_for(world.peer) == Secret("vbx_" + "p" * 43)
