"""The execute decision order, peer side and caller side (seed 002 §1, §4-§5; SPEC §6)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.custody.authorize import EXECUTE_ORDER, authorize_execute, authorize_from_state
from core.custody.bearer import bearer_hash
from core.custody.channels import LiveChannels
from core.custody.hello_gate import GateOpen, HelloGate
from core.custody.peer_calls import PeerCaller
from core.custody.route import LocalRoute, PeerRoute, route_call
from core.custody.wire import ExecuteRequest, ExecuteResult, frame_text, parse_peer_message
from core.memory.adapters import SeededRandomness, memory_channel_pair
from core.refusals import REFUSALS, Code, Refused
from core.secret import Secret
from tests.contracts.strategies import fuzz
from tests.contracts.world import World
from tests.support import run

DESCRIPTOR = "d_" + "0" * 24


def refusal_of(world: World, env_key: str, bearer: Secret | None) -> Code | None:
    try:
        authorize_execute(world.envs(), world.pairings(), env_key, bearer)
    except Refused as exc:
        return exc.code
    return None


def test_unknown_environment_is_checked_before_bearer() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    unknown = "ek_" + "9" * 32
    for presented in (None, bearer, Secret("vbx_nonsense")):
        assert refusal_of(world, unknown, presented) == Code.UNKNOWN_ENVIRONMENT
    world.revoke(world.alpha)
    assert refusal_of(world, unknown, bearer) == Code.UNKNOWN_ENVIRONMENT


def test_missing_bearer_is_unauthenticated_call_401() -> None:
    world = World()
    world.issue(world.alpha)
    for presented in (None, Secret("")):
        assert refusal_of(world, world.alpha, presented) == Code.UNAUTHENTICATED_CALL
    assert REFUSALS[Code.UNAUTHENTICATED_CALL].status == 401


def test_revoked_bearer_refused_as_pairing_revoked_not_bearer_refused() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    world.revoke(world.alpha)
    assert refusal_of(world, world.alpha, bearer) == Code.PAIRING_REVOKED
    # revocation is looked at before binding: also when shown to another environment
    assert refusal_of(world, world.beta, bearer) == Code.PAIRING_REVOKED


def test_bearer_bound_to_another_environment_is_bearer_refused() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    world.issue(world.beta)
    assert refusal_of(world, world.beta, bearer) == Code.BEARER_REFUSED


def test_bearer_never_issued_here_is_bearer_refused() -> None:
    world = World()
    world.issue(world.alpha)
    assert refusal_of(world, world.alpha, Secret("vbx_" + "z" * 43)) == Code.BEARER_REFUSED
    assert refusal_of(world, world.alpha, Secret("not a bearer")) == Code.BEARER_REFUSED


def test_valid_bearer_is_authorized_for_its_own_environment() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    granted = run(authorize_from_state(world.state, world.alpha, bearer))
    assert granted.env.key == world.alpha
    assert granted.bearer_hash == bearer_hash(bearer)


def test_peer_refusal_statuses_are_the_seed_statuses() -> None:
    statuses = {code: REFUSALS[code].status for code in EXECUTE_ORDER}
    assert statuses == {
        Code.UNKNOWN_ENVIRONMENT: 404,
        Code.UNAUTHENTICATED_CALL: 401,
        Code.PAIRING_REVOKED: 403,
        Code.BEARER_REFUSED: 403,
    }
    assert REFUSALS[Code.ENVIRONMENT_NOT_PAIRED].status == 403
    assert REFUSALS[Code.ENVIRONMENT_UNREACHABLE].status == 502


ENV_CASES = ("known", "unknown")
BEARER_CASES = ("missing", "valid", "revoked", "foreign-env", "never-issued")


@fuzz(60)
@given(
    env_case=st.sampled_from(ENV_CASES),
    bearer_case=st.sampled_from(BEARER_CASES),
    seed=st.integers(0, 2**32),
    noise=st.text(max_size=60),
)
def test_bearer_check_order_holds_for_every_combination(
    env_case: str, bearer_case: str, seed: int, noise: str
) -> None:
    world = World(SeededRandomness(seed))
    revoked = world.issue(world.alpha)
    world.revoke(world.alpha)
    valid = world.issue(world.alpha)
    foreign = world.issue(world.beta)
    env_key = world.alpha if env_case == "known" else "ek_" + noise.encode().hex()[:32]
    assume(env_case == "known" or env_key != world.alpha)
    bearer = {
        "missing": None,
        "valid": valid,
        "revoked": revoked,
        "foreign-env": foreign,
        "never-issued": Secret("vbx_" + noise),
    }[bearer_case]
    expected = {
        "missing": Code.UNAUTHENTICATED_CALL,
        "valid": None,
        "revoked": Code.PAIRING_REVOKED,
        "foreign-env": Code.BEARER_REFUSED,
        "never-issued": Code.BEARER_REFUSED,
    }[bearer_case]
    if env_case == "unknown":
        expected = Code.UNKNOWN_ENVIRONMENT
    assert refusal_of(world, env_key, bearer) == expected


def test_caller_without_stored_bearer_answers_environment_not_paired() -> None:
    world = World()
    with pytest.raises(Refused) as caught:
        route_call(world.envs(), world.pairings(), world.peer)
    assert caught.value.code == Code.ENVIRONMENT_NOT_PAIRED
    assert caught.value.status == 403


def test_caller_resolves_env_key_before_looking_for_a_bearer() -> None:
    world = World()
    with pytest.raises(Refused) as caught:
        route_call(world.envs(), world.pairings(), "ek_" + "9" * 32)
    assert caught.value.code == Code.UNKNOWN_ENVIRONMENT


def test_caller_runs_a_served_environment_locally() -> None:
    world = World()
    route = route_call(world.envs(), world.pairings(), world.alpha)
    assert isinstance(route, LocalRoute)
    assert route.env.key == world.alpha


class Pair:
    """A caller host and a peer host joined by an in-memory channel, paired."""

    def __init__(self, *, deadline_ms: int = 30_000) -> None:
        self.host = World(SeededRandomness(1))
        self.peer = World(SeededRandomness(2))
        # the host knows the peer's served environment `alpha` as a peer
        self.env = self.peer.alpha
        self.host.set_envs(self.host.envs().added(self.env, "remote", "peer", 0))
        issued = self.peer.issue(self.env)
        run(self.host.store.complete(self.host.token, self.env, issued))
        self.caller_end, self.peer_end = memory_channel_pair()
        self.live = LiveChannels()
        self.caller = PeerCaller(
            "ch1", self.caller_end, self.live, self.host.clock, deadline_ms=deadline_ms
        )
        self.gate = HelloGate("ch1", purpose="call", opened_at_ms=self.peer.clock.now_ms())

    def connect(self) -> GateOpen:
        route = route_call(self.host.envs(), self.host.pairings(), self.env)
        assert isinstance(route, PeerRoute)
        run(self.caller.hello(route))
        (hello,) = self.peer_end.take()
        opened = self.gate.on_frame(
            hello,
            environments=self.peer.envs(),
            pairings=self.peer.pairings(),
            now_ms=self.peer.clock.now_ms(),
        )
        assert isinstance(opened, GateOpen)
        return opened

    def request(self, rid: str) -> ExecuteRequest:
        return ExecuteRequest(
            type="execute", id=rid, envKey=self.env, tool="echo", descriptorId=DESCRIPTOR
        )


def test_call_round_trips_over_an_authenticated_channel() -> None:
    pair = Pair()
    opened = pair.connect()
    run(pair.caller.send(pair.request("r1"), mutating=False))
    (frame,) = pair.peer_end.take()
    request = parse_peer_message(frame)
    assert isinstance(request, ExecuteRequest)
    assert "vbx_" not in frame  # the bearer travels only in the hello frame
    hello_bearer = pair.host.pairings().outbound_for(pair.env)
    peer_envs, peer_pairings = pair.peer.envs(), pair.peer.pairings()
    granted = authorize_execute(peer_envs, peer_pairings, request.env_key, hello_bearer)
    assert granted.bearer_hash == opened.bearer_hash
    answer = ExecuteResult(type="result", id=request.id, result={"echo": 1})
    run(pair.peer_end.send(frame_text(answer)))
    (back,) = pair.caller_end.take()
    assert pair.caller.receive(back) == answer
    assert pair.live.pending("ch1") == ()


def test_silent_peer_past_deadline_is_environment_unreachable() -> None:
    pair = Pair(deadline_ms=2000)
    pair.connect()
    run(pair.caller.send(pair.request("w1"), mutating=True))
    pair.host.clock.advance(1999)
    assert pair.caller.expire() == ()
    pair.host.clock.advance(1)
    (gone,) = pair.caller.expire()
    refusal = gone.refusal()
    assert (refusal.code, refusal.status) == (Code.ENVIRONMENT_UNREACHABLE, 502)
    assert refusal.body().details == {"outcome": "unknown", "retry": "not-blindly"}


def test_late_answer_after_the_deadline_is_dropped() -> None:
    pair = Pair(deadline_ms=10)
    pair.connect()
    run(pair.caller.send(pair.request("r1"), mutating=False))
    pair.host.clock.advance(10)
    assert len(pair.caller.expire()) == 1
    late = frame_text(ExecuteResult(type="result", id="r1"))
    assert pair.caller.receive(late) is None


def test_send_on_a_closed_channel_is_environment_unreachable() -> None:
    pair = Pair()
    pair.connect()
    run(pair.peer_end.close(1008, "pairing-revoked"))
    with pytest.raises(Refused) as caught:
        run(pair.caller.send(pair.request("r1"), mutating=False))
    assert caught.value.code == Code.ENVIRONMENT_UNREACHABLE
    assert pair.live.pending("ch1") == ()


def test_every_call_is_authorized_again_after_hello() -> None:
    pair = Pair()
    pair.connect()
    bearer = pair.host.pairings().outbound_for(pair.env)
    pair.peer.revoke(pair.env)
    with pytest.raises(Refused) as caught:
        authorize_execute(pair.peer.envs(), pair.peer.pairings(), pair.env, bearer)
    assert caught.value.code == Code.PAIRING_REVOKED


def test_close_by_revocation_fails_pending_calls_with_pairing_revoked() -> None:
    pair = Pair()
    pair.connect()
    run(pair.caller.send(pair.request("r1"), mutating=True))
    run(pair.caller.send(pair.request("r2"), mutating=False))
    run(pair.peer_end.close(1008, "pairing-revoked"))
    abandoned = pair.caller.closed(pair.caller_end.closed[1])
    assert [(a.request_id, a.code, a.retry) for a in abandoned] == [
        ("r1", Code.PAIRING_REVOKED, "not-blindly"),
        ("r2", Code.PAIRING_REVOKED, "safe"),
    ]
