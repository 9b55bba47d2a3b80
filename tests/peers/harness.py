"""A local host and in-process peer environment servers, on a real asyncio loop (CPython).

These tests exercise the timing parts of custody (hello bound, deadlines, revocation closing a
channel under a pending call), so unlike ``tests/core`` they need a running event loop and
are not part of the in-Pyodide run.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.audit import AuditLog
from core.custody.env_server import ensure_identity
from core.host.context import HostContext, HostServices
from core.host.pipeline import Host
from core.memory.adapters import (
    MemoryAuditKey,
    MemoryAuditSink,
    MemoryHostState,
    MemoryProjectRoots,
)
from core.memory.servers import MemoryEnvironmentServers
from core.runtime import SystemClock, SystemRandomness


class World:
    """The local host (as the page talks to it) plus the servers of its peers."""

    def __init__(self) -> None:
        self.clock = SystemClock()
        self.servers = MemoryEnvironmentServers(self.clock)
        self.sink = MemoryAuditSink()
        self.state = MemoryHostState()
        self.ctx = HostContext(
            roots=MemoryProjectRoots(),
            state=self.state,
            audit=AuditLog(self.sink, self.clock, key=MemoryAuditKey(), state=self.state),
            clock=self.clock,
            random=SystemRandomness(),
            services=HostServices(servers=self.servers),
        )
        self.host = Host(self.ctx)
        self.answers: list[str] = []
        self._n = 0

    async def start(self) -> None:
        envs = await ensure_identity(self.ctx, "local")
        self.ctx.env_key = next(e.key for e in envs.environments if e.kind == "local")

    async def call(self, op: str, **args: Any) -> dict[str, Any]:
        self._n += 1
        text = json.dumps({"v": 1, "id": f"w{self._n}", "op": op, "args": args})
        chunks: list[bytes] = []

        async def sink(chunk: bytes) -> None:
            chunks.append(chunk)

        answer, _, _ = await self.host.handle_full(text, None, None, sink)
        self.answers.append(answer)
        parsed = json.loads(answer)
        parsed["chunks"] = chunks
        return parsed

    async def ok(self, op: str, **args: Any) -> dict[str, Any]:
        answer = await self.call(op, **args)
        assert answer["ok"], answer
        return answer

    async def refused(self, op: str, **args: Any) -> dict[str, Any]:
        answer = await self.call(op, **args)
        assert not answer["ok"], answer
        return answer["refusal"]

    async def descriptor(self, tool: str) -> str:
        """The descriptorId of a built-in tool (identical in every environment of this core)."""
        tools = (await self.ok("tool.discover", envKey=self.ctx.env_key))["result"]["tools"]
        return next(t["descriptorId"] for t in tools if t["name"] == tool)

    async def call_tool(self, env_key: str, tool: str, **args: Any) -> dict[str, Any]:
        """``tool.call`` without discovering the peer first (the call may be refused)."""
        return await self.call(
            "tool.call",
            envKey=env_key,
            tool=tool,
            descriptorId=await self.descriptor(tool),
            args=args,
        )

    async def tool(self, env_key: str, tool: str, **args: Any) -> dict[str, Any]:
        tools = (await self.ok("tool.discover", envKey=env_key))["result"]["tools"]
        descriptor = next(t["descriptorId"] for t in tools if t["name"] == tool)
        return await self.call(
            "tool.call", envKey=env_key, tool=tool, descriptorId=descriptor, args=args
        )


def run(coro: Any) -> Any:
    """Run ``coro`` on a fresh event loop."""
    return asyncio.run(coro)
