"""A peer channel over a WebSocket (:class:`core.ports.PeerChannel`; seed 002 §4, SPEC §6).

Text messages carry the JSON frames of :mod:`core.custody.wire` — the hello, execute requests and
their answers. A **binary message** carries one chunk of a streaming answer (an export)::

    byte 0        n, the length of the request id (1..64)
    bytes 1..n    the request id, ASCII (the ``id`` of the execute frame it answers)
    bytes n+1..   the chunk

A chunk's payload is at most :data:`MAX_CHUNK_BYTES` (a storage chunk is split to fit: many
clients refuse messages over 1 MiB by default). The chunks of one call arrive in order, all
before that call's result frame. A refusal closes
the socket with code 1008 and the refusal code as the close reason.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from core.custody.wire import MAX_CHUNK_BYTES, chunk_message, parse_chunk_message
from core.refusals import Code, Refused

__all__ = ["WebSocketChannel", "chunk_message", "parse_chunk_message"]

CLOSE_BOUND_S = 10


class WebSocketChannel:
    """:class:`core.ports.PeerChannel` over one accepted Starlette ``WebSocket``; sends are
    serialised (a chunk is never interleaved with a frame)."""

    def __init__(self, websocket: Any) -> None:
        self._ws = websocket
        self._lock = asyncio.Lock()
        self.closed: tuple[int, str] | None = None

    async def _send(self, message: dict[str, Any]) -> None:
        if self.closed is not None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.")
        async with self._lock:
            try:
                await self._ws.send(message)
            except Exception:  # the socket went away under the send
                self.closed = self.closed or (1006, "gone")
                raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel is closed.") from None

    async def send(self, frame: str) -> None:
        """See :meth:`core.ports.PeerChannel.send`."""
        await self._send({"type": "websocket.send", "text": frame})

    async def send_data(self, request_id: str, data: bytes) -> None:
        """See :meth:`core.ports.PeerChannel.send_data` (binary messages of at most
        :data:`MAX_CHUNK_BYTES` each)."""
        view = memoryview(data)
        for start in range(0, max(len(view), 1), MAX_CHUNK_BYTES):
            piece = bytes(view[start : start + MAX_CHUNK_BYTES])
            await self._send({"type": "websocket.send", "bytes": chunk_message(request_id, piece)})

    async def close(self, code: int, reason: str) -> None:
        """See :meth:`core.ports.PeerChannel.close`."""
        if self.closed is not None:
            return
        self.closed = (code, reason)

        async def close() -> None:
            async with self._lock:
                await self._ws.close(code=code, reason=reason)

        with contextlib.suppress(Exception):  # bounded: a stuck send cannot hold it open
            await asyncio.wait_for(close(), CLOSE_BOUND_S)
