"""Lying "environment servers" on 127.0.0.1 for the remote-bound tests (issue 29 items 6 and
15), CPython and e2e alike: raw sockets in threads, so each can do what no real server would.

Each answers every request one way (``mode``):

- ``flood``: 500 MB of JSON-looking bytes, generated (never stored), no ``content-length``;
- ``trickle``: the start of a body, then one byte every 50 ms, forever;
- ``silent``: the headers and a few bytes, then nothing, and it never closes;
- ``versioned``: a well-formed identity naming :attr:`LiarServer.protocol` as its protocol
  version, and a well-formed claim (any code) for the same envKey;
- ``channel-flood``: as ``versioned``, and its ``/channel`` accepts the WebSocket, reads the
  hello and the first execute frame, then sends one message (text, or binary when
  :attr:`LiarServer.binary`) of :attr:`LiarServer.channel_flood_size` bytes
  (:data:`CHANNEL_FLOOD` unless set: 2 MiB + 1, past every channel message bound).

CORS is open (``*``) so a page's worker may read what it sends. :attr:`LiarServer.dropped` is
set when the host closed an answer's connection before the server was done with it (it gave
up reading: what it must do); :attr:`LiarServer.requests` lists every request line.
:meth:`LiarServer.stop` ends every answer and the listener.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import socketserver
import threading

from core.custody.pair_code import env_fingerprint

__all__ = ["CHANNEL_FLOOD", "FLOOD_BYTES", "LiarServer"]

FLOOD_BYTES = 500 * 1000 * 1000
CHANNEL_FLOOD = (2 << 20) + 1
_WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
ENV_KEY = "ek_" + "5a" * 16
BEARER = "vbx_" + "A" * 43

HEADERS = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: application/json\r\n"
    b"access-control-allow-origin: *\r\n"
    b"cache-control: no-store\r\n"
    b"connection: close\r\n\r\n"
)
PREFLIGHT = (
    b"HTTP/1.1 204 No Content\r\n"
    b"access-control-allow-origin: *\r\n"
    b"access-control-allow-methods: GET, POST\r\n"
    b"access-control-allow-headers: content-type, authorization\r\n"
    b"content-length: 0\r\n\r\n"
)


class LiarServer(socketserver.ThreadingTCPServer):
    """One lying server on a free 127.0.0.1 port (module docstring); started at once."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mode: str, protocol: int = 1) -> None:
        self.mode = mode
        self.protocol = protocol
        self.binary = False  # channel-flood: a binary message instead of a text one
        self.channel_flood_size = CHANNEL_FLOOD
        self.env_key = ENV_KEY
        self.stopping = threading.Event()
        self.dropped = threading.Event()
        self.sent = 0
        self.requests: list[str] = []
        super().__init__(("127.0.0.1", 0), _Answer)
        self.origin = f"http://127.0.0.1:{self.server_address[1]}"
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """End every answer under way and the listener."""
        self.stopping.set()
        self.shutdown()
        self.server_close()
        self.thread.join(10)


class _Answer(socketserver.BaseRequestHandler):
    server: LiarServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(1)
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < 65536:
                got = sock.recv(4096)
                if not got:
                    return
                head += got
        except OSError:
            return
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        self.server.requests.append(line)
        try:
            if line.startswith("OPTIONS"):
                sock.sendall(PREFLIGHT)
                return
            if self.server.mode == "channel-flood" and line.startswith("GET /channel"):
                self.channel_flood(sock, head)
                return
            if self.server.mode in ("versioned", "channel-flood"):
                self.versioned(sock, line)
                return
            sock.sendall(HEADERS)
            getattr(self, self.server.mode)(sock)
        except OSError:
            if not self.server.stopping.is_set():
                self.server.dropped.set()

    def versioned(self, sock: socket.socket, line: str) -> None:
        key = self.server.env_key
        if " /api/identity " in line:
            body = {
                "name": "future-box",
                "envKey": key,
                "fingerprint": env_fingerprint(key),
                "protocol": self.server.protocol,
                "features": {"shape": "of another version"},
            }
        else:
            body = {"envKey": key, "bearer": BEARER, "fingerprint": env_fingerprint(key)}
        data = json.dumps(body).encode()
        sock.sendall(
            HEADERS.replace(b"\r\n\r\n", f"\r\ncontent-length: {len(data)}\r\n\r\n".encode()) + data
        )

    def channel_flood(self, sock: socket.socket, head: bytes) -> None:
        key = next(
            v.strip()
            for k, _, v in (h.partition(b":") for h in head.split(b"\r\n"))
            if k.strip().lower() == b"sec-websocket-key"
        )
        accept = base64.b64encode(hashlib.sha1(key + _WS_GUID).digest())
        sock.sendall(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )
        for _ in range(2):  # the hello, then the first execute frame
            self._read_frame(sock)
        opcode = 0x82 if self.server.binary else 0x81
        size = self.server.channel_flood_size
        sock.sendall(bytes([opcode, 127]) + size.to_bytes(8, "big"))
        block = b"x" * (1 << 16)
        for start in range(0, size, len(block)):
            sock.sendall(block[: size - start])
        self.server.sent += size
        while not self.server.stopping.is_set():  # until the host closes it
            try:
                got = sock.recv(1)
            except TimeoutError:
                continue
            if got == b"" or got[0] & 0x0F == 0x8:  # gone, or its close frame
                raise ConnectionResetError("the host closed it")

    def _read_frame(self, sock: socket.socket) -> bytes:
        """One masked client frame's payload (small frames only: a hello, an execute)."""
        sock.settimeout(30)
        head = self._exactly(sock, 2)
        size = head[1] & 0x7F
        if size == 126:
            size = int.from_bytes(self._exactly(sock, 2), "big")
        elif size == 127:
            size = int.from_bytes(self._exactly(sock, 8), "big")
        mask = self._exactly(sock, 4)
        data = self._exactly(sock, size)
        sock.settimeout(1)
        return bytes(b ^ mask[i % 4] for i, b in enumerate(data))

    @staticmethod
    def _exactly(sock: socket.socket, n: int) -> bytes:
        out = b""
        while len(out) < n:
            got = sock.recv(n - len(out))
            if not got:
                raise ConnectionResetError("closed mid-frame")
            out += got
        return out

    def flood(self, sock: socket.socket) -> None:
        block = b'{"name": "' + b"x" * (64 * 1024 - 12) + b'",\n'
        while self.server.sent < FLOOD_BYTES and not self.server.stopping.is_set():
            sock.sendall(block)
            self.server.sent += len(block)

    def trickle(self, sock: socket.socket) -> None:
        sock.sendall(b'{"name": "')
        while not self.server.stopping.wait(0.05):
            sock.sendall(b"x")
            self.server.sent += 1

    def silent(self, sock: socket.socket) -> None:
        sock.sendall(b'{"name": "build-')
        while not self.server.stopping.is_set():  # nothing more, and never a close of its own
            try:
                if sock.recv(1) == b"":
                    raise ConnectionResetError("the host closed it")
            except TimeoutError:
                continue
