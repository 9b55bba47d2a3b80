"""Environment servers as dedicated workers the host worker spawns (SPEC §6, E1).

Each peer environment runs in its own module worker (``worker/peer.mjs``): its own Pyodide,
its own fenced OPFS root ``environments/<name>/`` (HOST_DIR and projects), its own IndexedDB
database (audit, sealing key) and its own Web Lock. The page has no handle to these workers —
only this host does. Messages with a server:

- host → server: ``{kind: "start", name}``, ``{kind: "admin", id, text}``,
  ``{kind: "connect", envKey}`` with a transferred ``MessagePort`` (an execute channel);
- server → host: ``{kind: "ready", envKey}``, ``{kind: "fatal", code, message}``,
  ``{kind: "admin-answer", id, text}``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from js import MessageChannel, Object, Worker
from pyodide.ffi import create_proxy, to_js

from browser_host.port_channel import MessagePortChannel
from core.refusals import Code, Refused

__all__ = ["WorkerEnvironmentServers"]

START_TIMEOUT_S = 120
ADMIN_TIMEOUT_S = 30


def _obj(**kwargs: Any) -> Any:
    return to_js(kwargs, dict_converter=Object.fromEntries)


class _Server:
    def __init__(self, name: str, script_url: str) -> None:
        self.name = name
        self.ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.answers: dict[str, asyncio.Future[str]] = {}
        self.alive = False
        self._listener = create_proxy(self._message)
        self._errors = create_proxy(self._error)
        self.worker = Worker.new(script_url, _obj(type="module", name=f"env:{name}"))
        self.worker.onmessage = self._listener
        self.worker.onerror = self._errors
        self.worker.postMessage(_obj(kind="start", name=name))

    def _message(self, event: Any) -> None:
        data = event.data
        kind = getattr(data, "kind", None)
        if kind == "ready" and not self.ready.done():
            self.alive = True
            self.ready.set_result(str(data.envKey))
        elif kind == "fatal":
            self._fail(f"{data.code}: {data.message}")
        elif kind == "admin-answer":
            future = self.answers.pop(str(data.id), None)
            if future is not None and not future.done():
                future.set_result(str(data.text))

    def _error(self, event: Any) -> None:
        event.preventDefault()
        self._fail(f"the environment worker failed: {getattr(event, 'message', 'error')}")

    def _fail(self, why: str) -> None:
        self.alive = False
        error = Refused(Code.ENVIRONMENT_UNREACHABLE, f"Environment '{self.name}': {why}"[:500])
        if not self.ready.done():
            self.ready.set_exception(error)
        for future in self.answers.values():
            if not future.done():
                future.set_exception(error)
        self.answers.clear()


class WorkerEnvironmentServers:
    """:class:`core.ports.EnvironmentServers` over dedicated workers (see module docstring).

    ``script_url`` is the absolute URL of ``worker/peer.mjs``.
    """

    def __init__(self, script_url: str) -> None:
        self._script = script_url
        self._servers: dict[str, _Server] = {}
        self._ids = itertools.count(1)

    async def start(self, name: str) -> None:
        """See :meth:`core.ports.EnvironmentServers.start`."""
        server = self._servers.get(name)
        if server is None or (server.ready.done() and not server.alive):
            server = self._servers[name] = _Server(name, self._script)
        try:
            await asyncio.wait_for(asyncio.shield(server.ready), START_TIMEOUT_S)
        except TimeoutError:
            raise Refused(
                Code.ENVIRONMENT_UNREACHABLE, f"Environment '{name}' did not start in time."
            ) from None

    def running(self, name: str) -> bool:
        """See :meth:`core.ports.EnvironmentServers.running`."""
        server = self._servers.get(name)
        return server is not None and server.alive

    async def admin(self, name: str, request: str) -> str:
        """See :meth:`core.ports.EnvironmentServers.admin`."""
        await self.start(name)
        server = self._servers[name]
        request_id = f"a{next(self._ids)}"
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        server.answers[request_id] = future
        server.worker.postMessage(_obj(kind="admin", id=request_id, text=request))
        try:
            return await asyncio.wait_for(future, ADMIN_TIMEOUT_S)
        except TimeoutError:
            server.answers.pop(request_id, None)
            raise Refused(Code.ENVIRONMENT_UNREACHABLE) from None

    async def connect(
        self,
        name: str,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        *,
        env_key: str,
    ) -> MessagePortChannel:
        """See :meth:`core.ports.EnvironmentServers.connect`."""
        await self.start(name)
        pair = MessageChannel.new()
        self._servers[name].worker.postMessage(
            _obj(kind="connect", envKey=env_key), to_js([pair.port2])
        )
        return MessagePortChannel(pair.port1, on_frame, on_data, on_close)
