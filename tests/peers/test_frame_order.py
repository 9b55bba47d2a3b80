"""Frames of one channel: nothing runs before the hello is decided, even when storage really
waits (regression: an execute frame handled during the hello's storage read was taken for a
second hello)."""

from __future__ import annotations

import asyncio

from core.memory.adapters import MemoryHostState
from tests.peers.harness import World, run


class SlowState(MemoryHostState):
    """HOST_DIR whose reads really wait, as OPFS does."""

    async def load(self, name: str) -> bytes | None:
        await asyncio.sleep(0.01)
        return await super().load(name)


def test_an_execute_sent_right_after_the_hello_waits_for_the_gate() -> None:
    async def go() -> None:
        world = World()
        await world.start()
        key = (await world.ok("env.create", name="studio"))["result"]["environment"]["envKey"]
        await world.ok("env.pair", envKey=key)
        server = world.servers.servers["studio"]
        slow = SlowState()
        slow.docs = server.ctx.state.docs  # type: ignore[attr-defined]
        server.ctx.state = slow
        answer = await world.call_tool(key, "projects.list")
        assert answer["ok"], answer
        assert answer["result"]["result"] == {"projects": []}

    run(go())
