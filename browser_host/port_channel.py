"""A peer channel over a ``MessagePort`` (:class:`~core.ports.PeerChannel`, SPEC §6).

Port messages are objects: ``{text}`` carries one JSON frame, ``{id, data}`` one chunk of a
streaming answer (an ``ArrayBuffer``, transferred), and ``{close: {code, reason}}`` the close
frame a WebSocket would have — 1008 and the refusal code for a refusal — after which the port
is closed. Incoming messages go to the three callbacks; a message of any other shape is
ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from js import Object, Uint8Array
from pyodide.ffi import create_proxy, to_js

from core.refusals import Code, Refused

__all__ = ["MessagePortChannel"]

log = logging.getLogger("voicebox.channel")
_TASKS: set[asyncio.Future[None]] = set()


def _done(task: asyncio.Future[None]) -> None:
    _TASKS.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("peer channel handler failed", exc_info=task.exception())


def _spawn(coro: Awaitable[None]) -> None:
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(_done)


def _obj(**kwargs: Any) -> Any:
    return to_js(kwargs, dict_converter=Object.fromEntries)


class MessagePortChannel:
    """One end of a peer channel over ``port`` (see module docstring)."""

    def __init__(
        self,
        port: Any,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]] | None,
        on_close: Callable[[int, str], Awaitable[None]],
    ) -> None:
        self._port = port
        self.closed: tuple[int, str] | None = None
        self._on_frame = on_frame
        self._on_data = on_data
        self._on_close = on_close
        self._listener = create_proxy(self._message)
        port.onmessage = self._listener
        port.start()

    def _message(self, event: Any) -> None:
        data = event.data
        if self.closed is not None or data is None:
            return
        text = getattr(data, "text", None)
        if isinstance(text, str):
            _spawn(self._on_frame(text))
            return
        close = getattr(data, "close", None)
        if close is not None and hasattr(close, "code"):
            self._finish(int(close.code), str(close.reason))
            _spawn(self._on_close(int(close.code), str(close.reason)))
            return
        chunk = getattr(data, "data", None)
        request_id = getattr(data, "id", None)
        if self._on_data is not None and isinstance(request_id, str) and chunk is not None:
            _spawn(self._on_data(request_id, Uint8Array.new(chunk).to_bytes()))

    def _finish(self, code: int, reason: str) -> None:
        self.closed = (code, reason)
        self._port.onmessage = None
        self._port.close()
        self._listener.destroy()

    async def send(self, frame: str) -> None:
        """See :meth:`core.ports.PeerChannel.send`."""
        if self.closed is not None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        self._port.postMessage(_obj(text=frame))

    async def send_data(self, request_id: str, data: bytes) -> None:
        """See :meth:`core.ports.PeerChannel.send_data` (the buffer is transferred)."""
        if self.closed is not None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        buffer = to_js(data).buffer
        self._port.postMessage(_obj(id=request_id, data=buffer), to_js([buffer]))

    async def close(self, code: int, reason: str) -> None:
        """See :meth:`core.ports.PeerChannel.close`: send the close frame, then close."""
        if self.closed is not None:
            return
        self._port.postMessage(_obj(close=_obj(code=code, reason=reason)))
        self._finish(code, reason)
