"""A real ``voicebox-env serve`` subprocess on 127.0.0.1 for the server tests (issue 15).

:class:`Server` runs ``init`` then ``serve --port 0`` in a temporary root, reads the URL from
the server's first line (bounded wait), keeps everything it logs (stdout and stderr) for the
token scan, and stops it at the end (SIGTERM, then SIGKILL). Clients: ``httpx`` for HTTP, the
``websockets`` sync client for ``/channel``. Every wait is bounded; nothing but loopback is
reached.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

from core.tools.registry import descriptor_id
from server_host.channel import parse_chunk_message

ROOT = Path(__file__).resolve().parents[2]
START_S = 30


def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m server_host <args> --root ROOT`` (bounded); its output as text."""
    return subprocess.run(
        [sys.executable, "-m", "server_host", *args, "--root", str(root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


def tool_id(name: str) -> str:
    """The descriptorId of the built-in tool ``name``."""
    return descriptor_id("builtin", name)


class Server:
    """One environment root and its serving process (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        name: str = "remote",
        serve_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        init: bool = True,
    ) -> None:
        self.root = root
        self.env = {"PYTHONUNBUFFERED": "1", **(env or {})}
        self.serve_args = serve_args
        if init:
            done = cli(root, "init", "--name", name)
            assert done.returncode == 0, done.stderr
            self.init_output = done.stdout + done.stderr
        self.log: list[str] = []
        self.url = ""
        self._process: subprocess.Popen[str] | None = None
        self._readers: list[threading.Thread] = []

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> Server:
        """Start serving; return once the server printed its URL (at most :data:`START_S`)."""
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server_host",
                "serve",
                "--root",
                str(self.root),
                "--port",
                "0",
                *self.serve_args,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **self.env},
        )
        ready = threading.Event()

        def read(stream: Any) -> None:
            for line in stream:
                self.log.append(line)
                if " on http" in line and not self.url:  # http or https
                    self.url = line.rsplit(" on ", 1)[1].strip()
                    ready.set()

        for stream in (self._process.stdout, self._process.stderr):
            reader = threading.Thread(target=read, args=(stream,), daemon=True)
            reader.start()
            self._readers.append(reader)
        if not ready.wait(START_S):
            self.stop()
            raise AssertionError("the server did not start:\n" + "".join(self.log))
        return self

    def stop(self) -> None:
        """Stop the process (bounded) and collect the rest of its output."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        for reader in self._readers:
            reader.join(5)
        self._process = None

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- facts ----------------------------------------------------------------------------

    @property
    def host_dir(self) -> Path:
        """HOST_DIR."""
        return self.root / "host"

    @property
    def token(self) -> str:
        """The host token, as the operator reads it."""
        return (self.host_dir / ".host-token").read_text().strip()

    @property
    def env_key(self) -> str:
        """This environment's envKey (read from its environments.json)."""
        doc = json.loads((self.host_dir / "environments.json").read_text())
        return next(e["envKey"] for e in doc["environments"] if e["kind"] == "local")

    @property
    def ws_url(self) -> str:
        """The base ``ws://`` URL."""
        return "ws" + self.url.removeprefix("http")

    # ---- clients --------------------------------------------------------------------------

    def http(self) -> httpx.Client:
        """An HTTP client for this server (bounded timeouts)."""
        return httpx.Client(base_url=self.url, timeout=30)

    def pair(self, env_key: str | None = None) -> str:
        """Issue a bearer through ``POST /api/pair`` with the host token."""
        with self.http() as client:
            answer = client.post(
                "/api/pair",
                json={"envKey": env_key or self.env_key},
                headers={"x-voicebox-host-token": self.token},
            )
        assert answer.status_code == 200, answer.text
        return answer.json()["bearer"]

    def revoke(self, env_key: str | None = None) -> dict[str, Any]:
        """``DELETE /api/pair`` with the host token."""
        with self.http() as client:
            answer = client.request(
                "DELETE",
                "/api/pair",
                json={"envKey": env_key or self.env_key},
                headers={"x-voicebox-host-token": self.token},
            )
        assert answer.status_code == 200, answer.text
        return answer.json()

    def execute(
        self, bearer: str | None, tool: str, args: dict[str, Any], env_key: str | None = None
    ) -> httpx.Response:
        """``POST /api/execute`` with the call envelope."""
        headers = {} if bearer is None else {"authorization": f"Bearer {bearer}"}
        envelope = {
            "envKey": env_key or self.env_key,
            "tool": tool,
            "descriptorId": tool_id(tool),
            "args": args,
        }
        with self.http() as client:
            return client.post("/api/execute", json=envelope, headers=headers)

    def fenced(
        self, bearer: str | None, command: str, body: dict[str, Any], env_key: str | None = None
    ) -> httpx.Response:
        """``POST /api/environments/:key/<command>``."""
        headers = {} if bearer is None else {"authorization": f"Bearer {bearer}"}
        with self.http() as client:
            return client.post(
                f"/api/environments/{env_key or self.env_key}/{command}",
                json=body,
                headers=headers,
            )

    def channel(self, env_key: str | None = None, **kwargs: Any) -> ClientConnection:
        """A WebSocket to ``/channel?envKey=…`` (no hello sent yet)."""
        key = self.env_key if env_key is None else env_key
        return connect(f"{self.ws_url}/channel?envKey={key}", open_timeout=10, **kwargs)

    def create_project(self, bearer: str, name: str = "demo") -> str:
        """Create a project through the ``project.create`` tool; its id."""
        answer = self.execute(bearer, "project.create", {"name": name})
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]["project"]["id"]

    def policy(self, *args: str) -> None:
        """``voicebox-env policy`` with ``args``."""
        done = cli(self.root, "policy", *args)
        assert done.returncode == 0, done.stderr

    def text(self) -> str:
        """Everything the server process printed so far."""
        return "".join(self.log)


def hello(bearer: str) -> str:
    """The hello frame."""
    return json.dumps({"type": "hello", "role": "environment", "bearer": bearer})


def execute_frame(request_id: str, env_key: str, tool: str, args: dict[str, Any]) -> str:
    """An execute frame."""
    return json.dumps(
        {
            "type": "execute",
            "id": request_id,
            "envKey": env_key,
            "tool": tool,
            "descriptorId": tool_id(tool),
            "args": args,
        }
    )


def answer_of(ws: ClientConnection, request_id: str, timeout: float = 30) -> tuple[dict, bytes]:
    """Read frames until the answer to ``request_id``; ``(answer, streamed bytes)``."""
    streamed = bytearray()
    deadline = time.monotonic() + timeout
    while True:
        message = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(message, bytes):
            parsed = parse_chunk_message(message)
            assert parsed is not None
            if parsed[0] == request_id:
                streamed.extend(parsed[1])
            continue
        frame = json.loads(message)
        if frame.get("id") == request_id:
            return frame, bytes(streamed)


def close_of(ws: ClientConnection, timeout: float = 10) -> tuple[int | None, str | None]:
    """Wait (bounded) until the server closes ``ws``; its close code and reason."""
    from websockets.exceptions import ConnectionClosed

    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ws.recv(timeout=max(0.1, deadline - time.monotonic()))
    except ConnectionClosed as closed:
        received = closed.rcvd
        return (received.code, received.reason) if received else (None, None)
    except TimeoutError:
        pass
    raise AssertionError("the server did not close the channel in time")
