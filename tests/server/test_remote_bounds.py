"""A remote's answer is bounded and its protocol version checked (issue 29 items 6 and 15),
under CPython: core's rules (:class:`core.custody.remote.AnswerBody`, the deadline of the whole
exchange, :func:`core.custody.remote.check_protocol`) through ``env.add`` and a tool call, over
real loopback sockets to lying servers of our own (:mod:`tests.server.liars`). The test link
(:class:`tests.server.test_remote_host.LoopbackLink`) streams as the browser's adapter does;
the browser's own path is ``e2e/test_remote_bounds.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from core.custody.remote import MAX_ANSWER_BYTES, AnswerBody, check_protocol
from core.protocol import PROTOCOL_VERSION
from core.refusals import Code, Refused
from tests.server.liars import LiarServer
from tests.server.test_remote_host import RemoteWorld

DEADLINE_MS = 1_500
INFO_BOUND_MS = 100


@pytest.fixture
def liar(request: pytest.FixtureRequest) -> Iterator[LiarServer]:
    server = LiarServer(request.param)
    try:
        yield server
    finally:
        server.stop()


async def _world() -> RemoteWorld:
    world = RemoteWorld()
    await world.start()
    world.ctx.policy = world.ctx.policy.model_copy(update={"peer_deadline_ms": DEADLINE_MS})
    return world


async def _add_while_measuring(world: RemoteWorld, url: str) -> tuple[dict[str, Any], list[float]]:
    """``env.add`` of ``url`` while ``host.info`` is asked again and again: the add's refusal
    and every ``host.info``'s time (ms)."""
    adding = asyncio.ensure_future(world.refused("env.add", url=url, code="ABCDE-FGHJK"))
    times: list[float] = []
    while not adding.done() or len(times) < 3:
        started = time.perf_counter()
        assert (await world.call("host.info"))["ok"]
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.01)
    return await adding, times


def test_a_remote_answer_is_taken_only_up_to_its_bound() -> None:
    body = AnswerBody("http://x.test", limit=10)
    body.declared(None)
    body.declared("10")
    body.take(b"12345")
    body.take(b"67890")
    assert body.text() == "1234567890"
    with pytest.raises(Refused) as refused:
        body.admit(1)  # asked before a byte is copied
    assert refused.value.code == Code.MESSAGE_TOO_LARGE
    assert "http://x.test answered more than 10 bytes" in refused.value.message
    with pytest.raises(Refused):
        AnswerBody("http://x.test", limit=10).declared("11")  # refused before any read
    assert AnswerBody("o").limit == MAX_ANSWER_BYTES == 1 << 20


@pytest.mark.parametrize("liar", ["flood"], indirect=True)
def test_a_flooding_remote_is_refused_at_the_bound_and_the_host_keeps_answering(
    liar: LiarServer,
) -> None:
    async def go() -> None:
        world = await _world()
        refusal, times = await _add_while_measuring(world, liar.origin)
        assert refusal["code"] == "message-too-large", refusal
        assert liar.origin in refusal["message"] and "stopped reading" in refusal["message"]
        assert max(times) < INFO_BOUND_MS, times
        assert await asyncio.to_thread(liar.dropped.wait, 10), "the host kept reading"
        assert liar.sent < 64 * MAX_ANSWER_BYTES, liar.sent
        assert world.link.allowed == frozenset()

    asyncio.run(go())


@pytest.mark.parametrize("liar", ["trickle", "silent"], indirect=True)
def test_a_trickling_or_never_ending_remote_is_ended_by_one_deadline(liar: LiarServer) -> None:
    async def go() -> None:
        world = await _world()
        started = time.monotonic()
        refusal, times = await _add_while_measuring(world, liar.origin)
        took_ms = (time.monotonic() - started) * 1000
        assert refusal["code"] == "environment-unreachable", refusal
        assert f"did not finish its answer within {DEADLINE_MS} ms" in refusal["message"]
        assert DEADLINE_MS * 0.9 <= took_ms < DEADLINE_MS + 3_000, took_ms
        assert max(times) < INFO_BOUND_MS, times
        assert await asyncio.to_thread(liar.dropped.wait, 10), "the host kept the answer open"

    asyncio.run(go())


def test_another_protocol_version_is_named_with_ours_before_the_code_is_spent() -> None:
    future = LiarServer("versioned", protocol=PROTOCOL_VERSION + 1)
    try:

        async def go() -> None:
            world = await _world()
            refusal = await world.refused("env.add", url=future.origin, code="ABCDE-FGHJK")
            assert refusal["code"] == "protocol-version-unsupported", refusal
            assert f"speaks protocol version {PROTOCOL_VERSION + 1}" in refusal["message"]
            assert f"this host speaks version {PROTOCOL_VERSION}" in refusal["message"]
            assert [r.split()[:2] for r in future.requests] == [["GET", "/api/identity"]]

        asyncio.run(go())
    finally:
        future.stop()


def test_a_paired_remote_is_checked_for_its_protocol_version_on_every_connect() -> None:
    server = LiarServer("versioned", protocol=PROTOCOL_VERSION)
    try:

        async def go() -> None:
            world = await _world()
            added = await world.ok("env.add", url=server.origin, code="ABCDE-FGHJK")
            key = added["result"]["environment"]["envKey"]
            server.protocol = PROTOCOL_VERSION + 1  # the server was updated meanwhile
            refused = await world.refused(
                "tool.call", envKey=key, tool="projects.list", descriptorId="d_" + "0" * 24
            )
            assert refused["code"] == "protocol-version-unsupported", refused
            assert str(PROTOCOL_VERSION + 1) in refused["message"]
            envs = (await world.ok("env.list"))["result"]["environments"]
            assert [e["remote"]["state"] for e in envs if e["remote"]] == ["unreachable"]

        asyncio.run(go())
    finally:
        server.stop()


def test_an_identity_without_a_version_is_version_one() -> None:
    check_protocol('{"name": "old", "envKey": "ek_x", "fingerprint": "f"}', "http://o.test")
    check_protocol("not json", "http://o.test")  # the identity's parser refuses it
    for theirs in (7, 0, -1, 10**12):
        with pytest.raises(Refused) as refused:
            check_protocol(f'{{"protocol": {theirs}, "shape": ["other"]}}', "http://o.test")
        assert refused.value.code == Code.PROTOCOL_VERSION_UNSUPPORTED
        assert f"http://o.test speaks protocol version {theirs};" in refused.value.message
