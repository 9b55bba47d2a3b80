"""Wiring for an environment-server worker (``worker/peer.mjs``), SPEC §6.

The server of environment ``name`` lives in OPFS ``environments/<name>/`` — its own ``host/``
(HOST_DIR, sealed at rest with its own key) and ``projects/`` — with its own IndexedDB
database for its audit and keys. It answers admin requests from its parent (the host worker)
and serves execute channels handed to it as ``MessagePort``s.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import js

from browser_host.audit_key import WebCryptoAuditKey
from browser_host.idb_audit import IdbAuditSink
from browser_host.opfs import HandleHostState, HandleProjectRoots, subfolder
from browser_host.port_channel import MessagePortChannel
from browser_host.sealed_state import SealedHostState
from core.audit import AuditLog
from core.custody.env_server import EnvironmentServer
from core.host.context import HostContext
from core.host.pipeline import Host
from core.policy import load_policy, say_policy_damage
from core.projects.temporaries import load_temporaries
from core.runtime import SystemClock, SystemRandomness

__all__ = ["ServerBridge", "start"]

_TASKS: set[asyncio.Future[None]] = set()


def _spawn(coro: Any) -> None:
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


class ServerBridge:
    """What ``worker/peer.mjs`` holds: admin requests and new channels."""

    def __init__(self, server: EnvironmentServer) -> None:
        self.server = server
        self._ids = itertools.count(1)

    @property
    def env_key(self) -> str:
        """This environment's envKey."""
        return self.server.env_key

    async def admin(self, text: str) -> str:
        """Answer one admin request from the parent host."""
        return await self.server.admin(str(text))

    def accept(self, port: Any, env_key: Any) -> None:
        """Serve a new execute channel on ``port``, opened for ``env_key`` (the host's word);
        close it if no hello comes in time."""
        channel_id = f"p{next(self._ids)}"
        server = self.server

        async def on_frame(text: str) -> None:
            await server.on_frame(channel_id, text, channel.send_data)

        async def on_close(code: int, reason: str) -> None:
            await server.closed(channel_id)

        channel = MessagePortChannel(port, on_frame, None, on_close)
        server.accept(channel_id, channel, str(env_key))

        async def gate() -> None:
            await asyncio.sleep(server.ctx.policy.hello_bound_ms / 1000)
            await server.tick()

        _spawn(gate())


async def start(name: str, idb: Any, sealer: Any, audit_key: Any) -> ServerBridge:
    """Open the environment's fenced storage and identity; return the bridge.

    ``idb``, ``sealer`` and ``audit_key`` are the environment's own (``worker/peer.mjs``): its
    database, its HOST_DIR sealing key and its audit HMAC key.
    """
    opfs = await js.navigator.storage.getDirectory()
    root = await subfolder(await subfolder(opfs, "environments", create=True), name, create=True)
    state = SealedHostState(HandleHostState(await subfolder(root, "host", create=True)), sealer)
    random = SystemRandomness()
    temporaries = await load_temporaries(state, random)  # this server's own marker
    roots = HandleProjectRoots(await subfolder(root, "projects", create=True), temporaries)
    clock = SystemClock()
    loaded = await load_policy(state)  # core's one reader: a damaged policy is SAFE mode
    ctx = HostContext(
        roots=roots,
        state=state,
        audit=AuditLog(
            IdbAuditSink(idb),
            clock,
            key=WebCryptoAuditKey(audit_key),
            state=state,
            background_anchor=True,
        ),
        clock=clock,
        random=random,
        policy=loaded.policy,
        policy_damage=loaded.damage,
    )
    await ctx.catalog.sweep_unfinished()  # this worker holds the environment's lock
    server = EnvironmentServer(ctx, name, Host(ctx).tools)
    ctx.env_key = await server.start()
    ctx.audit.env = ctx.env_key  # records name the environment that decided
    await say_policy_damage(ctx.audit, loaded)  # the console and this environment's audit
    return ServerBridge(server)
