"""Remote environments from the host worker (:class:`core.ports.RemoteLink`; issue 15).

The host worker — never the page — reaches environment servers on other machines: ``fetch``
for the pairing claim, the identity and the holder's revocation, a ``WebSocket`` for each
execute channel (text messages are the JSON frames of :mod:`core.custody.wire`, binary ones a
streaming answer's chunks, :func:`core.custody.wire.parse_chunk_message`). Core decides which
origins may be reached (:func:`core.custody.remote.allowed_origins`); this adapter hands that
answer to the worker's egress guard (``allowAlso``, ``worker/egress-guard.mjs``), which asks it
for every fetch, WebSocket, XHR and EventSource of the worker. What arrives is delivered to the
three callbacks in the order it arrived, by one consumer: a chunk is never overtaken by the
result frame that follows it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import js
from js import Uint8Array
from pyodide.ffi import JsException, create_proxy

from browser_host.jsutil import js_options
from core.custody.wire import parse_chunk_message
from core.refusals import Code, Refused

__all__ = ["WorkerRemoteLink"]

log = logging.getLogger("voicebox.remote")
CONNECT_TIMEOUT_S = 10
REQUEST_TIMEOUT_S = 30
MAX_ANSWER_CHARS = 1 << 20
_OPEN = 1  # WebSocket.OPEN
_TASKS: set[asyncio.Future[None]] = set()


def _unreachable(origin: str) -> Refused:
    return Refused(
        Code.ENVIRONMENT_UNREACHABLE,
        f"The environment server at {origin} could not be reached.",
    )


class WebSocketChannel:
    """:class:`core.ports.PeerChannel` over one open browser ``WebSocket`` (module doc)."""

    def __init__(
        self,
        socket: Any,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
    ) -> None:
        self._socket = socket
        self.closed: tuple[int, str] | None = None
        self._on_frame = on_frame
        self._on_data = on_data
        self._on_close = on_close
        self._inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._proxies = [create_proxy(self._message), create_proxy(self._closed)]
        socket.onmessage = self._proxies[0]
        socket.onclose = self._proxies[1]
        task = asyncio.ensure_future(self._deliver())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)

    def _message(self, event: Any) -> None:
        if self.closed is None:
            data = event.data
            if isinstance(data, str):
                self._inbox.put_nowait(("frame", data))
            else:
                self._inbox.put_nowait(("data", Uint8Array.new(data).to_bytes()))

    def _closed(self, event: Any) -> None:
        if self.closed is None:
            self._finish(int(event.code), str(event.reason))
            self._inbox.put_nowait(("close", (int(event.code), str(event.reason))))

    async def _deliver(self) -> None:
        while True:
            kind, value = await self._inbox.get()
            try:
                if kind == "frame":
                    await self._on_frame(value)
                elif kind == "data":
                    parsed = parse_chunk_message(value)
                    if parsed is not None:
                        await self._on_data(*parsed)
                elif kind == "close":
                    await self._on_close(*value)
                    return
                else:
                    return
            except Exception:
                log.exception("remote channel handler failed")

    def _finish(self, code: int, reason: str) -> None:
        self.closed = (code, reason)
        self._socket.onmessage = None
        self._socket.onclose = None
        for proxy in self._proxies:
            proxy.destroy()

    async def send(self, frame: str) -> None:
        """See :meth:`core.ports.PeerChannel.send`."""
        if self.closed is not None or self._socket.readyState != _OPEN:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        self._socket.send(frame)

    async def send_data(self, request_id: str, data: bytes) -> None:
        """Never used: the host sends no chunk to a remote (it only receives them)."""
        raise Refused(Code.MESSAGE_MALFORMED, "This host sends no chunks to a remote.")

    async def close(self, code: int, reason: str) -> None:
        """Close the socket (a browser may only send 1000 or 3000-4999: 1000, ``reason``)."""
        if self.closed is not None:
            return
        self._finish(code, reason)
        self._inbox.put_nowait(("stop", None))
        try:
            self._socket.close(1000, reason[:120])
        except JsException:
            self._socket.close()


class WorkerRemoteLink:
    """:class:`core.ports.RemoteLink` in the host worker. ``guard`` is the worker's egress
    guard (``worker/egress-guard.mjs``): its ``allowAlso`` is set once, to this link's answer —
    the origins core last allowed, nothing else."""

    def __init__(self, guard: Any) -> None:
        self._origins: frozenset[str] = frozenset()
        self._allows_proxy = create_proxy(self._allows)
        guard.allowAlso(self._allows_proxy)

    def _allows(self, url: Any) -> bool:
        return str(url.origin) in self._origins

    def allow(self, origins: frozenset[str]) -> None:
        """See :meth:`core.ports.RemoteLink.allow`."""
        self._origins = frozenset(origins)

    async def request(
        self, method: str, url: str, body: str | None = None, *, authorization: str | None = None
    ) -> tuple[int, str]:
        """See :meth:`core.ports.RemoteLink.request` (no cookie, no referrer, no redirect)."""
        origin = js.URL.new(url).origin
        headers: dict[str, str] = {}
        if body is not None:
            headers["content-type"] = "application/json"
        if authorization is not None:
            headers["authorization"] = authorization
        options = js_options(
            method=method,
            headers=js_options(**headers),
            credentials="omit",
            cache="no-store",
            redirect="error",
            referrerPolicy="no-referrer",
            **({"body": body} if body is not None else {}),
        )
        try:
            response = await asyncio.wait_for(js.fetch(url, options), REQUEST_TIMEOUT_S)
            text = await asyncio.wait_for(response.text(), REQUEST_TIMEOUT_S)
        except (JsException, TimeoutError):
            raise _unreachable(str(origin)) from None
        return int(response.status), str(text)[:MAX_ANSWER_CHARS]

    async def connect(
        self,
        url: str,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
    ) -> WebSocketChannel:
        """See :meth:`core.ports.RemoteLink.connect`."""
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[bool] = loop.create_future()
        origin = js.URL.new(url).origin
        try:
            socket = js.WebSocket.new(url)
        except JsException:
            raise _unreachable(str(origin)) from None
        socket.binaryType = "arraybuffer"

        def settle(ok: bool) -> Callable[[Any], None]:
            def done(_event: Any) -> None:
                if not opened.done():
                    opened.set_result(ok)

            return done

        proxies = [create_proxy(settle(True)), create_proxy(settle(False))]
        socket.onopen, socket.onerror = proxies[0], proxies[1]
        socket.onclose = proxies[1]
        try:
            ok = await asyncio.wait_for(asyncio.shield(opened), CONNECT_TIMEOUT_S)
        except TimeoutError:
            ok = False
        finally:
            socket.onopen = socket.onerror = None
            for proxy in proxies:
                proxy.destroy()
        if not ok:
            socket.onclose = None
            socket.close()
            raise _unreachable(str(origin))
        return WebSocketChannel(socket, on_frame, on_data, on_close)
