"""The hello gate of a peer channel (seed 002 §4-§5, SPEC §6)."""

from __future__ import annotations

from core.custody.bearer import bearer_hash
from core.custody.channels import ChannelClose
from core.custody.hello_gate import ChannelPurpose, GateOpen, HelloGate
from core.custody.wire import HelloFrame, frame_text
from core.policy import Policy
from core.refusals import Code
from core.secret import Secret
from tests.contracts.world import World

T0 = 1_767_225_600_000


def hello(bearer: Secret | str) -> dict[str, object]:
    value = bearer.reveal() if isinstance(bearer, Secret) else bearer
    return {"type": "hello", "role": "environment", "bearer": value}


def decide(
    world: World, frame: object, *, purpose: ChannelPurpose = "call", at: int = T0 + 10
) -> GateOpen | ChannelClose:
    gate = HelloGate("c1", purpose=purpose, opened_at_ms=T0)
    return gate.on_frame(frame, environments=world.envs(), pairings=world.pairings(), now_ms=at)


def test_hello_with_a_valid_bearer_within_the_bound_opens_the_channel() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    frame = frame_text(HelloFrame(type="hello", role="environment", bearer=bearer), reveal=True)
    opened = decide(world, frame)
    assert opened == GateOpen("c1", bearer_hash(bearer), world.alpha)


def test_no_hello_within_5000_ms_closes_1008_by_default() -> None:
    gate = HelloGate("c1", purpose="call", opened_at_ms=T0)
    assert Policy().hello_bound_ms == 5000
    assert gate.expired(T0 + 4999) is None
    closed = gate.expired(T0 + 5000)
    assert closed == ChannelClose(channel_id="c1", code=1008, reason=Code.UNAUTHENTICATED_CALL)


def test_hello_bound_is_configurable() -> None:
    bound = Policy(hello_bound_ms=250).hello_bound_ms
    gate = HelloGate("c1", purpose="call", opened_at_ms=T0, bound_ms=bound)
    assert gate.expired(T0 + 249) is None
    assert gate.expired(T0 + 250) is not None


def test_hello_arriving_after_the_bound_is_refused() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    late = decide(world, hello(bearer), at=T0 + 5000)
    assert isinstance(late, ChannelClose)
    assert late.reason == Code.UNAUTHENTICATED_CALL


def test_unauthenticated_executor_channel_is_executor_unauthenticated() -> None:
    gate = HelloGate("c1", purpose="executor", opened_at_ms=T0)
    assert gate.expired(T0 + 5000) == ChannelClose(
        channel_id="c1", code=1008, reason=Code.EXECUTOR_UNAUTHENTICATED
    )
    world = World()
    closed = decide(world, {"type": "hello", "role": "environment"}, purpose="executor")
    assert isinstance(closed, ChannelClose)
    assert closed.reason == Code.EXECUTOR_UNAUTHENTICATED


def test_first_frame_must_be_a_hello() -> None:
    world = World()
    execute = {
        "type": "execute",
        "id": "r1",
        "envKey": world.alpha,
        "tool": "echo",
        "descriptorId": "d_" + "0" * 24,
        "args": {},
    }
    for frame in (execute, "not json", {"type": "hello", "role": "page", "bearer": "vbx_x"}):
        closed = decide(world, frame)
        assert isinstance(closed, ChannelClose)
        assert (closed.code, closed.reason) == (1008, Code.UNAUTHENTICATED_CALL)


def test_hello_with_empty_bearer_is_unauthenticated() -> None:
    closed = decide(World(), hello(""))
    assert isinstance(closed, ChannelClose)
    assert closed.reason == Code.UNAUTHENTICATED_CALL


def test_hello_with_revoked_bearer_closes_pairing_revoked() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    world.revoke(world.alpha)
    closed = decide(world, hello(bearer))
    assert isinstance(closed, ChannelClose)
    assert (closed.code, closed.reason) == (1008, Code.PAIRING_REVOKED)


def test_hello_with_unknown_bearer_closes_bearer_refused() -> None:
    world = World()
    world.issue(world.alpha)
    closed = decide(world, hello("vbx_" + "u" * 43))
    assert isinstance(closed, ChannelClose)
    assert (closed.code, closed.reason) == (1008, Code.BEARER_REFUSED)


def test_hello_for_a_removed_or_rekeyed_environment_closes_bearer_refused() -> None:
    world = World()
    alpha, beta = world.issue(world.alpha), world.issue(world.beta)
    world.set_envs(world.envs().removed(world.alpha).rekeyed(world.beta, "ek_" + "e" * 32))
    for bearer in (alpha, beta):
        closed = decide(world, hello(bearer))
        assert isinstance(closed, ChannelClose)
        assert (closed.code, closed.reason) == (1008, Code.BEARER_REFUSED)


def test_gate_decides_once() -> None:
    world = World()
    bearer = world.issue(world.alpha)
    gate = HelloGate("c1", purpose="call", opened_at_ms=T0)
    first = gate.on_frame(
        hello(bearer), environments=world.envs(), pairings=world.pairings(), now_ms=T0 + 1
    )
    assert isinstance(first, GateOpen)
    assert gate.expired(T0 + 10_000) is None
    again = gate.on_frame(
        hello("vbx_" + "u" * 43),
        environments=world.envs(),
        pairings=world.pairings(),
        now_ms=T0 + 2,
    )
    assert again is first
