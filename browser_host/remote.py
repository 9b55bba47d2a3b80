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

A remote's bytes never hold the host (issue 29 item 6): an HTTP answer's body is read from
its stream chunk by chunk into core's :class:`~core.custody.remote.AnswerBody` and the request is
aborted (the stream cancelled) the moment it passes its bound; the whole exchange has one
deadline (the policy's ``peer_deadline_ms``), not a per-read one; a channel message is measured
in JavaScript (``worker/remote-io.mjs``: a JS string would be converted into Python the moment
Python read it) and one over its bound closes the channel ``message-too-large`` unread. A
request this site's own CSP kept in the browser is told apart from an unreachable server by
the worker's ``securitypolicyviolation`` event (issue 29 item 15).

A streaming answer's chunk (a remote export) does not enter Python when core says where it
goes (issue 34, ``pass_through`` of :meth:`core.ports.RemoteLink.connect`): the message's head
(≤ 65 bytes) is read for its request id, core counts the chunk's size against its bound and
answers, and the chunk — a view of the message's ``ArrayBuffer`` — is handed on in the same
``message`` event (the page's sink posts it, transferred), so it is relayed before any later
message, the result frame included, is delivered.
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
from core.custody.remote import (
    AnswerBody,
    answer_overdue,
    blocked_by_site_policy,
    channel_message_over,
    channel_message_too_large,
)
from core.custody.wire import CHUNK_HEAD_BYTES, parse_chunk_head, parse_chunk_message
from core.ports import PassThrough
from core.refusals import Code, Refused

__all__ = ["WorkerRemoteLink"]

log = logging.getLogger("voicebox.remote")
CONNECT_TIMEOUT_S = 10
POLICY_EVENT_WAIT_MS = 250
"""How long a failed request waits for the worker's ``securitypolicyviolation`` event, which
the browser queues as a task of its own (it may come after the request's rejection)."""
_OPEN = 1  # WebSocket.OPEN
_TASKS: set[asyncio.Future[None]] = set()


def _unreachable(origin: str) -> Refused:
    return Refused(
        Code.ENVIRONMENT_UNREACHABLE,
        f"The environment server at {origin} could not be reached.",
    )


def _remote_io() -> Any:
    """The worker's ``voicebox_remote`` (``worker/remote-io.mjs``), registered before start."""
    import voicebox_remote  # type: ignore[import-not-found]  # a JS module the worker registers

    return voicebox_remote


async def _failed(origin: str, mark: int) -> Refused:
    """Why a request to ``origin`` failed in the browser: this site's CSP kept it (a
    connect-src violation after ``mark``), else the server could not be reached."""
    http = origin.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
    ws = http.replace("http", "ws", 1)
    io = _remote_io()
    if await io.refusedByPolicy(_js_list([http, ws]), mark, POLICY_EVENT_WAIT_MS):
        return blocked_by_site_policy(http)
    return _unreachable(origin)


def _js_list(items: list[str]) -> Any:
    """A JS array of ``items``."""
    return js.Array.of(*items)


class WebSocketChannel:
    """:class:`core.ports.PeerChannel` over one open browser ``WebSocket`` (module doc)."""

    def __init__(
        self,
        socket: Any,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        pass_through: PassThrough | None = None,
    ) -> None:
        self._socket = socket
        self.closed: tuple[int, str] | None = None
        self._on_frame = on_frame
        self._on_data = on_data
        self._on_close = on_close
        self._pass_through = pass_through
        self._inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._proxies = [create_proxy(self._message), create_proxy(self._closed)]
        socket.onmessage = self._proxies[0]
        socket.onclose = self._proxies[1]
        task = asyncio.ensure_future(self._deliver())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)

    def _message(self, event: Any) -> None:
        if self.closed is not None:
            return
        io = _remote_io()
        binary, size = bool(io.isBinary(event)), int(io.messageSize(event))
        if channel_message_over(size, binary):  # measured, never converted
            refused = channel_message_too_large(size, binary)
            log.warning("remote channel closed: %s", refused.message)
            self._finish(1000, str(refused.code))
            self._inbox.put_nowait(("close", (1000, str(refused.code))))
            try:
                self._socket.close(1000, str(refused.code))
            except JsException:
                self._socket.close()
            return
        data = event.data
        if isinstance(data, str):
            self._inbox.put_nowait(("frame", data))
        elif self._pass_through is None or not self._passed(data, size):
            self._inbox.put_nowait(("data", Uint8Array.new(data).to_bytes()))

    def _passed(self, data: Any, size: int) -> bool:
        """Ask core where the binary message ``data`` (an ArrayBuffer of ``size`` bytes) goes,
        reading only its head (issue 34): True when it was handed on or dropped there and
        then; False when its bytes go to ``on_data``."""
        assert self._pass_through is not None
        head = Uint8Array.new(data, 0, min(CHUNK_HEAD_BYTES, size)).to_bytes()
        parsed = parse_chunk_head(head)
        if parsed is None:
            return False  # not a chunk message: on_data's parser drops it, as before
        request_id, offset = parsed
        take = self._pass_through(request_id, size - offset)
        if take is None:
            return False
        take(Uint8Array.new(data, offset))  # a view: the bytes stay in JavaScript
        return True

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
        # the checked fetch that counts nothing: the boot's byte counter reads a clone of
        # every counted answer to its end (a remote's 500 MB would be read whole)
        self._fetch = guard.fetchUncounted

    def _allows(self, url: Any) -> bool:
        return str(url.origin) in self._origins

    def allow(self, origins: frozenset[str]) -> None:
        """See :meth:`core.ports.RemoteLink.allow`."""
        self._origins = frozenset(origins)

    async def request(
        self,
        method: str,
        url: str,
        body: str | None = None,
        *,
        authorization: str | None = None,
        deadline_ms: int,
    ) -> tuple[int, str]:
        """See :meth:`core.ports.RemoteLink.request` (no cookie, no referrer, no redirect).
        The body is streamed and bounded, the exchange ends at ``deadline_ms`` (module
        docstring): ``message-too-large``, ``environment-unreachable``,
        ``network-egress-refused`` (this site's CSP kept it)."""
        origin = str(js.URL.new(url).origin)
        controller = js.AbortController.new()
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
            signal=controller.signal,
            **({"body": body} if body is not None else {}),
        )
        mark = int(_remote_io().violationMark())
        try:
            return await asyncio.wait_for(
                self._exchange(url, options, AnswerBody(origin)), deadline_ms / 1000
            )
        except TimeoutError:
            raise answer_overdue(origin, deadline_ms) from None
        except JsException:
            raise await _failed(origin, mark) from None
        finally:
            controller.abort()  # whatever is still open ends here: the request, the stream

    async def _exchange(self, url: str, options: Any, answer: AnswerBody) -> tuple[int, str]:
        """Send, then read the answer's stream into ``answer`` until it ends or is refused."""
        response = await self._fetch(url, options)
        length = response.headers.get("content-length")  # a str, or JS null
        answer.declared(length if isinstance(length, str) else None)
        stream = response.body  # a ReadableStream, or JS null (no body)
        if hasattr(stream, "getReader"):
            reader = stream.getReader()
            while True:
                read = await reader.read()
                if read.done:
                    break
                answer.admit(int(read.value.byteLength))  # before a byte is copied
                answer.take(read.value.to_bytes())
        return int(response.status), answer.text()

    async def connect(
        self,
        url: str,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        *,
        pass_through: PassThrough | None = None,
    ) -> WebSocketChannel:
        """See :meth:`core.ports.RemoteLink.connect`."""
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[bool] = loop.create_future()
        origin = str(js.URL.new(url).origin)
        mark = int(_remote_io().violationMark())
        try:
            socket = js.WebSocket.new(url)
        except JsException:
            raise await _failed(origin, mark) from None
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
            raise await _failed(origin, mark)
        return WebSocketChannel(socket, on_frame, on_data, on_close, pass_through)
