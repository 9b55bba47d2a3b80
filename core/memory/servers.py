"""Environment servers in memory: :class:`~core.ports.EnvironmentServers` over
:class:`~core.custody.env_server.EnvironmentServer` instances running in this process (STYLE §1).

Each server has its own in-memory ports (project roots, HOST_DIR, audit) — a fenced world,
like the dedicated worker in E1. Channels deliver frames asynchronously (one event-loop turn
later, as a ``MessagePort`` does), so these need a running asyncio loop; the hello bound is
enforced by a real loop timer on the real clock. ``silent`` makes a server swallow every
frame (a peer that never answers); ``lying`` maps a server's name to a function that rewrites
every text it sends back — execute answers and admin answers alike (a peer that lies).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

from core.custody.env_server import EnvironmentServer
from core.host.pipeline import Host
from core.memory.host_context import memory_host_context
from core.ports import Clock, Randomness
from core.refusals import Code, Refused
from core.runtime import SystemClock, SystemRandomness

__all__ = ["LoopbackChannel", "MemoryEnvironmentServers"]

_IN_FLIGHT: set[asyncio.Future[None]] = set()


class LoopbackChannel:
    """One end of an asynchronous in-process channel (:class:`~core.ports.PeerChannel`)."""

    def __init__(self) -> None:
        self.other: LoopbackChannel | None = None
        self.on_frame: Callable[[str], Awaitable[None]] | None = None
        self.on_data: Callable[[str, bytes], Awaitable[None]] | None = None
        self.on_close: Callable[[int, str], Awaitable[None]] | None = None
        self.closed: tuple[int, str] | None = None
        self.sent: list[str] = []

    def _deliver(self, job: Callable[[], Awaitable[None]]) -> None:
        def launch() -> None:
            task = asyncio.ensure_future(job())
            _IN_FLIGHT.add(task)
            task.add_done_callback(_IN_FLIGHT.discard)

        asyncio.get_running_loop().call_soon(launch)

    async def send(self, frame: str) -> None:
        """See :meth:`core.ports.PeerChannel.send`."""
        other = self.other
        if self.closed is not None or other is None or other.on_frame is None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        self.sent.append(frame)
        handler = other.on_frame
        self._deliver(lambda: handler(frame))

    async def send_data(self, request_id: str, data: bytes) -> None:
        """See :meth:`core.ports.PeerChannel.send_data`."""
        other = self.other
        if self.closed is not None or other is None or other.on_data is None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        handler = other.on_data
        self._deliver(lambda: handler(request_id, data))

    async def close(self, code: int, reason: str) -> None:
        """See :meth:`core.ports.PeerChannel.close`; the other end hears the close."""
        if self.closed is not None:
            return
        self.closed = (code, reason)
        other = self.other
        if other is not None and other.closed is None:
            other.closed = (code, reason)
            if other.on_close is not None:
                handler = other.on_close
                self._deliver(lambda: handler(code, reason))


def pair() -> tuple[LoopbackChannel, LoopbackChannel]:
    """Two connected ends."""
    a, b = LoopbackChannel(), LoopbackChannel()
    a.other, b.other = b, a
    return a, b


class MemoryEnvironmentServers:
    """:class:`~core.ports.EnvironmentServers` running each server in this process."""

    def __init__(self, clock: Clock | None = None, random: Randomness | None = None) -> None:
        self.clock = clock or SystemClock()
        self.random = random or SystemRandomness()
        self.servers: dict[str, EnvironmentServer] = {}
        self.silent: set[str] = set()
        self.lying: dict[str, Callable[[str], str]] = {}
        self.stopped: set[str] = set()
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Future[None]] = set()

    async def start(self, name: str) -> None:
        """See :meth:`core.ports.EnvironmentServers.start`."""
        self.stopped.discard(name)
        if name in self.servers:
            return
        ctx = memory_host_context(self.clock, self.random)  # its own HOST_DIR and audit
        server = EnvironmentServer(ctx, name, Host(ctx).tools)
        ctx.env_key = await server.start()
        self.servers[name] = server

    def running(self, name: str) -> bool:
        """See :meth:`core.ports.EnvironmentServers.running`."""
        return name in self.servers and name not in self.stopped

    async def admin(self, name: str, request: str) -> str:
        """See :meth:`core.ports.EnvironmentServers.admin`."""
        if not self.running(name):
            raise Refused(Code.ENVIRONMENT_UNREACHABLE)
        answer = await self.servers[name].admin(request)
        lie = self.lying.get(name)
        return answer if lie is None else lie(answer)

    async def connect(
        self,
        name: str,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        *,
        env_key: str,
    ) -> LoopbackChannel:
        """See :meth:`core.ports.EnvironmentServers.connect`."""
        if not self.running(name):
            raise Refused(Code.ENVIRONMENT_UNREACHABLE)
        server = self.servers[name]
        caller, peer = pair()
        caller.on_frame, caller.on_data, caller.on_close = on_frame, on_data, on_close
        channel_id = f"m{next(self._ids)}"
        server.accept(channel_id, peer, env_key)

        async def frame(text: str) -> None:
            if name in self.silent:
                return
            await server.on_frame(channel_id, text, peer.send_data)

        async def close(code: int, reason: str) -> None:
            await server.closed(channel_id)

        peer.on_frame, peer.on_data, peer.on_close = frame, None, close
        send = peer.send

        async def answer(text: str) -> None:
            lie = self.lying.get(name)
            await send(text if lie is None else lie(text))

        peer.send = answer  # type: ignore[method-assign,assignment]  # the test double wraps the real send; the name differs only
        bound = server.ctx.policy.hello_bound_ms / 1000

        async def gate_timer() -> None:
            await asyncio.sleep(bound)
            await server.tick()

        timer = asyncio.ensure_future(gate_timer())
        self._tasks.add(timer)
        timer.add_done_callback(self._tasks.discard)
        return caller
