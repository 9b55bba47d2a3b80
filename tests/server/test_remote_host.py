"""A host pairing with and calling a real ``voicebox-env serve`` by URL + one-time code
(issue 15), under CPython: core's remote rules (:mod:`core.custody.remote`, ``env.add``, the
remote path of :mod:`core.custody.peer_calls`) over real HTTP and WebSocket on 127.0.0.1.

The link here is a test adapter of :class:`core.ports.RemoteLink` (httpx + websockets) that
refuses every origin core did not allow, as the worker's egress guard does; the browser's
adapter (``browser_host/remote.py``) is driven by ``e2e/test_remote.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import socket
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from core.custody.remote import AnswerBody, answer_overdue
from core.custody.wire import CHUNK_HEAD_BYTES, parse_chunk_head, parse_chunk_message
from core.model import Contract
from core.refusals import Code, Refused
from tests.peers.harness import World
from tests.server.harness import Server, cli


class LinkChannel:
    def __init__(
        self,
        ws: ClientConnection,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        pass_through: Any = None,
    ) -> None:
        self.ws = ws
        self.closed = False
        self.binary_messages = 0
        self._pass_through = pass_through
        self._task = asyncio.ensure_future(self._read(on_frame, on_data, on_close))

    def _passed(self, message: bytes) -> bool:
        """As the browser's adapter (``browser_host/remote.py``): only the head is parsed,
        core says where the chunk goes, the chunk is handed on as the transport holds it."""
        if self._pass_through is None:
            return False
        parsed = parse_chunk_head(message[:CHUNK_HEAD_BYTES])
        if parsed is None:
            return False
        request_id, offset = parsed
        take = self._pass_through(request_id, len(message) - offset)
        if take is None:
            return False
        take(memoryview(message)[offset:])
        return True

    async def _read(self, on_frame: Any, on_data: Any, on_close: Any) -> None:
        try:
            async for message in self.ws:
                if isinstance(message, str):
                    await on_frame(message)
                else:
                    self.binary_messages += 1
                    if self._passed(message):
                        continue
                    parsed = parse_chunk_message(message)
                    if parsed is not None:
                        await on_data(*parsed)
        except ConnectionClosed:
            pass
        if not self.closed:
            self.closed = True
            await on_close(self.ws.close_code or 1006, self.ws.close_reason or "")

    async def send(self, frame: str) -> None:
        if self.closed:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE)
        try:
            await self.ws.send(frame)
        except ConnectionClosed:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE) from None

    async def send_data(self, request_id: str, data: bytes) -> None:
        raise Refused(Code.MESSAGE_MALFORMED)

    async def close(self, code: int, reason: str) -> None:
        self.closed = True
        await self.ws.close(1000, reason)


class LoopbackLink:
    """:class:`core.ports.RemoteLink` over httpx and websockets, refusing unallowed origins."""

    def __init__(self) -> None:
        self.allowed: frozenset[str] = frozenset()
        self.reached: list[str] = []

    def allow(self, origins: frozenset[str]) -> None:
        self.allowed = origins

    def _check(self, url: str) -> None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self.allowed:
            raise Refused(Code.NETWORK_EGRESS_REFUSED, "not an allowed origin")
        self.reached.append(origin)

    async def request(
        self,
        method: str,
        url: str,
        body: str | None = None,
        *,
        authorization: str | None = None,
        deadline_ms: int,
    ) -> tuple[int, str]:
        """Streams the answer into core's :class:`AnswerBody` and stops at its bound; the
        whole exchange ends at ``deadline_ms`` (as the browser's adapter does)."""
        self._check(url)
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        headers = {"content-type": "application/json"}
        if authorization:
            headers["authorization"] = authorization
        answer = AnswerBody(origin)

        async def exchange() -> tuple[int, str]:
            async with (
                httpx.AsyncClient(timeout=None) as client,
                client.stream(method, url, content=body, headers=headers) as streamed,
            ):
                answer.declared(streamed.headers.get("content-length"))
                async for chunk in streamed.aiter_raw():
                    answer.take(chunk)
                return streamed.status_code, answer.text()

        try:
            return await asyncio.wait_for(exchange(), deadline_ms / 1000)
        except TimeoutError:
            raise answer_overdue(origin, deadline_ms) from None
        except httpx.HTTPError:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE) from None

    async def connect(
        self, url: str, on_frame: Any, on_data: Any, on_close: Any, *, pass_through: Any = None
    ) -> LinkChannel:
        self._check(url)
        try:
            ws = await asyncio.wait_for(connect(url, max_size=2 << 20), 10)
        except (OSError, TimeoutError, ConnectionClosed) as exc:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE) from exc
        self.channel = LinkChannel(ws, on_frame, on_data, on_close, pass_through)
        return self.channel


class ToldEvents:
    """:class:`core.ports.PageEvents` that keeps what it was told (the page's side)."""

    def __init__(self) -> None:
        self.told: list[dict[str, Any]] = []

    def post(self, event: Contract) -> None:
        self.told.append(json.loads(event.model_dump_json()))


class RemoteWorld(World):
    def __init__(self) -> None:
        super().__init__()
        self.link = LoopbackLink()
        self.events = ToldEvents()
        self.ctx.services.remote = self.link
        self.ctx.services.events = self.events
        from core.host.pipeline import Host

        self.host = Host(self.ctx)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _code(root: Path) -> str:
    done = cli(root, "pair-code")
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("pairing code"))
    return line.split()[-1]


async def _tool(world: RemoteWorld, env_key: str, tool: str, **args: Any) -> dict[str, Any]:
    return await world.call(
        "tool.call",
        envKey=env_key,
        tool=tool,
        descriptorId=await world.descriptor(tool),
        args=args,
    )


async def _wait_state(world: RemoteWorld, key: str, want: set[str], bound_s: float) -> str:
    state = ""
    for _ in range(int(bound_s * 10)):
        envs = (await world.ok("env.list"))["result"]["environments"]
        state = next(e["remote"]["state"] for e in envs if e["envKey"] == key)
        if state in want:
            return state
        await asyncio.sleep(0.1)
    return state


@pytest.fixture
def served(tmp_path: Path) -> Any:
    port = _free_port()
    server = Server(tmp_path / "env", name="Build Box", serve_args=("--port", str(port)))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_host_adds_a_remote_by_code_and_calls_it_like_any_peer_without_the_page_seeing_a_bearer(
    served: Server,
) -> None:
    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        assert world.link.allowed == frozenset()
        code = _code(served.root)
        added = await world.ok("env.add", url=served.url + "/", code=code)
        env = added["result"]["environment"]
        origin = served.url.rstrip("/")
        assert env["remote"]["origin"] == origin
        assert env["name"] == "build-box" and env["envKey"] == served.env_key
        assert world.link.allowed == {origin, origin.replace("http:", "ws:")}
        async with httpx.AsyncClient() as client:
            identity = (await client.get(f"{served.url}/api/identity")).json()
        assert env["remote"]["fingerprint"] == identity["fingerprint"]
        made = await _tool(world, env["envKey"], "project.create", name="demo")
        assert made["ok"], made
        project = made["result"]["result"]["project"]["id"]
        body = b"remote bytes \x00\xff" * 5000
        wrote = await _tool(
            world,
            env["envKey"],
            "file.write",
            project=project,
            path="bin/blob.dat",
            content_b64=__import__("base64").b64encode(body).decode(),
        )
        assert wrote["ok"], wrote
        exported = await _tool(world, env["envKey"], "project.export", project=project)
        assert exported["ok"], exported
        with zipfile.ZipFile(io.BytesIO(b"".join(exported["chunks"]))) as archive:
            assert archive.read("bin/blob.dat") == body
        listed = (await world.ok("env.list"))["result"]["environments"]
        assert [e["remote"]["state"] for e in listed if e["remote"]] == ["connected"]
        everything = "".join(world.answers) + json.dumps([a for a in world.sink.records])
        assert "vbx_" not in everything and "vbh_" not in everything
        assert code not in everything and code.replace("-", "") not in everything
        assert all(urlsplit(o).port == urlsplit(origin).port for o in world.link.reached)

    asyncio.run(go())


class PassingSink:
    """A :class:`core.ports.PassThroughSink` like the host worker's sink to the page: it
    keeps what it was handed as the transport held it apart from bytes made in Python."""

    def __init__(self) -> None:
        self.passed: list[memoryview] = []
        self.made: list[bytes] = []

    async def __call__(self, chunk: bytes) -> None:
        self.made.append(chunk)

    def pass_through(self, chunk: object) -> None:
        assert isinstance(chunk, memoryview)
        self.passed.append(chunk)


async def _export_to(
    world: RemoteWorld, env_key: str, project: str, sink: PassingSink
) -> dict[str, Any]:
    envelope = {
        "envKey": env_key,
        "tool": "project.export",
        "descriptorId": await world.descriptor("project.export"),
        "args": {"project": project},
    }
    text = json.dumps({"v": 1, "id": "x-export", "op": "tool.call", "args": envelope})
    answer, _, _ = await world.host.handle_full(text, None, None, sink)
    return dict(json.loads(answer))


async def _remote_with_export(world: RemoteWorld, served: Server, parts: int) -> tuple[str, str]:
    """Pair ``served``, make a project of ``parts`` × 300 KB of noise there; (envKey, id)."""
    await world.start()
    env = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"]
    key = env["environment"]["envKey"]
    made = await _tool(world, key, "project.create", name="big")
    project = made["result"]["result"]["project"]["id"]
    folder = served.root / "projects" / project
    for i in range(parts):  # written as another program would: the server lists them
        (folder / f"part{i}.bin").write_bytes(__import__("os").urandom(300_000))
    return key, project


def test_a_remote_exports_bytes_pass_to_the_page_without_entering_python(
    served: Server,
) -> None:
    """Issue 34: each chunk of a remote export crossed JS → Python → JS in the host worker
    (25 MB/s against a server streaming 196 MB/s). When the sink can take the transport's own
    chunk, core is asked only its request id and size and the chunk is handed on as it is;
    the archive is whole and nothing of it was made in Python."""

    async def go() -> None:
        world = RemoteWorld()
        key, project = await _remote_with_export(world, served, 6)
        sink = PassingSink()
        answer = await _export_to(world, key, project, sink)
        assert answer["ok"], answer
        assert sink.made == [] and len(sink.passed) >= 6
        archive = b"".join(bytes(c) for c in sink.passed)
        with zipfile.ZipFile(io.BytesIO(archive)) as opened:
            assert opened.testzip() is None
            assert len([n for n in opened.namelist() if n.startswith("part")]) == 6

    asyncio.run(go())


def test_a_remote_stream_past_its_bound_is_refused_while_streaming_and_never_relayed(
    served: Server,
) -> None:
    """Issue 34 (and 13): a remote that streams more than the host's bound is refused
    ``message-too-large`` as the chunk that passes it arrives — counted on its size, before
    anything is relayed or copied — not after the whole answer was read; the sink is never
    handed a byte past the bound, later chunks are dropped, and the channel serves the next
    call."""

    async def go() -> None:
        world = RemoteWorld()
        key, project = await _remote_with_export(world, served, 12)
        peers = world.host.peers.calls
        peers.max_stream_bytes = 600_000  # the export is about 3.6 MB
        sink = PassingSink()
        answer = await _export_to(world, key, project, sink)
        assert (answer["ok"], answer["refusal"]["code"]) == (False, "message-too-large")
        assert sink.made == []
        assert 0 < sum(len(c) for c in sink.passed) <= 600_000
        assert sum(len(c) for c in sink.passed) > 600_000 - (256 << 10)  # cut at the bound
        peers.max_stream_bytes = 1 << 30
        again = PassingSink()
        assert (await _export_to(world, key, project, again))["ok"]
        assert sum(len(c) for c in again.passed) > 3_600_000

    asyncio.run(go())


def test_a_refused_code_records_nothing_and_leaves_the_allow_list_empty(served: Server) -> None:
    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        refusal = await world.refused("env.add", url=served.url, code="ABCDE-FGHJK")
        assert refusal["code"] == "pairing-code-refused"
        assert world.link.allowed == frozenset()
        envs = (await world.ok("env.list"))["result"]["environments"]
        assert [e["kind"] for e in envs] == ["local"]
        for url, why in (
            ("ftp://127.0.0.1:1", "http"),
            ("http://127.0.0.1:1/api", "path"),
            ("http://user:pw@127.0.0.1:1", "user name"),
        ):
            refusal = await world.refused("env.add", url=url, code="ABCDE-FGHJK")
            assert refusal["code"] == "args-invalid" and why in refusal["message"], refusal
        dead = f"http://127.0.0.1:{_free_port()}"
        assert (await world.refused("env.add", url=dead, code="ABCDE-FGHJK"))[
            "code"
        ] == "environment-unreachable"
        assert world.link.allowed == frozenset()

    asyncio.run(go())


def test_revoke_from_the_host_closes_the_channel_and_the_next_call_is_pairing_revoked(
    served: Server,
) -> None:
    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        key = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"][
            "environment"
        ]["envKey"]
        assert (await _tool(world, key, "projects.list"))["ok"]
        assert world.host.peers is not None and world.host.peers.calls.is_connected(key)
        revoked = await world.ok("env.revoke", envKey=key)
        assert revoked["result"]["channelsClosed"] == 1
        assert await _wait_state(world, key, {"revoked"}, 5) == "revoked"
        refusal = (await _tool(world, key, "projects.list"))["refusal"]
        assert refusal["code"] == "pairing-revoked"
        pairings = json.loads((served.host_dir / "pairings.json").read_text())
        assert len(pairings["revokedBearers"]) == 1 and pairings["issued"] == []

    asyncio.run(go())


def test_revoke_by_the_server_operator_marks_the_remote_revoked(served: Server) -> None:
    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        key = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"][
            "environment"
        ]["envKey"]
        assert (await _tool(world, key, "projects.list"))["ok"]
        done = await asyncio.to_thread(cli, served.root, "revoke", "--env-key", key)
        assert done.returncode == 0, done.stderr
        assert await _wait_state(world, key, {"revoked"}, 10) == "revoked"
        assert (await _tool(world, key, "projects.list"))["refusal"]["code"] == "pairing-revoked"

    asyncio.run(go())


def test_the_page_is_told_at_once_when_a_remote_is_revoked_removed_lost_or_back(
    served: Server,
) -> None:
    """Issue 29 item 15: a remote's state change reaches the page unasked (no reload, no
    listing): connected, lost (reconnecting), back (connected), revoked by its operator,
    removed here — each told once, as it happens, with its envKey and nothing secret."""

    async def told(world: RemoteWorld, key: str, state: str, bound_s: float) -> None:
        for _ in range(int(bound_s * 20)):
            if {"type": "env.changed", "envKey": key, "state": state} in world.events.told:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"never told {state}: {world.events.told}")

    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        key = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"][
            "environment"
        ]["envKey"]
        assert (await _tool(world, key, "projects.list"))["ok"]
        await told(world, key, "connected", 5)
        await asyncio.to_thread(served.stop)
        await told(world, key, "reconnecting", 10)
        served.url = ""  # the harness reads the URL (the same port) from the new process
        await asyncio.to_thread(served.start)
        world.events.told.clear()
        await told(world, key, "connected", 20)
        done = await asyncio.to_thread(cli, served.root, "revoke", "--env-key", key)
        assert done.returncode == 0, done.stderr
        await told(world, key, "revoked", 10)
        states = [e["envKey"] for e in world.events.told]
        assert states == [key] * len(states)
        assert (await world.ok("env.remove", envKey=key))["ok"]
        await told(world, key, "removed", 1)
        everything = json.dumps(world.events.told)
        assert "vbx_" not in everything and "vbh_" not in everything

    asyncio.run(go())


def test_a_killed_server_is_unreachable_and_a_restarted_one_reconnects_with_the_pairing(
    served: Server,
) -> None:
    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        key = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"][
            "environment"
        ]["envKey"]
        assert (await _tool(world, key, "projects.list"))["ok"]
        await asyncio.to_thread(served.stop)
        assert await _wait_state(world, key, {"reconnecting", "unreachable"}, 5) in {
            "reconnecting",
            "unreachable",
        }
        refusal = (await _tool(world, key, "projects.list"))["refusal"]
        assert refusal["code"] == "environment-unreachable"
        served.url = ""  # the harness reads the URL (the same port) from the new process
        await asyncio.to_thread(served.start)
        assert await _wait_state(world, key, {"connected"}, 30) == "connected"
        assert (await _tool(world, key, "projects.list"))["ok"]

    asyncio.run(go())


def test_reconnecting_stops_by_itself_when_the_server_stays_away(
    served: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.custody import peer_calls

    monkeypatch.setattr(peer_calls, "RECONNECT_DELAYS_MS", (50, 50, 50))

    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        key = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"][
            "environment"
        ]["envKey"]
        assert (await _tool(world, key, "projects.list"))["ok"]
        tries = len(world.link.reached)
        await asyncio.to_thread(served.stop)
        assert await _wait_state(world, key, {"unreachable"}, 10) == "unreachable"
        await asyncio.sleep(0.5)
        assert len(world.link.reached) - tries == 3  # one per delay, then it stopped

    asyncio.run(go())


async def _command(world: RemoteWorld, *, human: bool = True, **args: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"v": 1, "id": "cmd", "op": "env.command", "args": args}
    if human:
        message["origin"] = "human-ui"
    answer, _, _ = await world.host.handle_full(json.dumps(message))
    return json.loads(answer)


def test_a_fenced_command_runs_in_the_remote_through_the_hosts_bearer_off_until_its_operator_enables_it(  # noqa: E501
    served: Server,
) -> None:
    async def go() -> None:
        import hashlib

        world = RemoteWorld()
        await world.start()
        env = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"]
        key = env["environment"]["envKey"]
        made = await _tool(world, key, "project.create", name="cmd")
        project = made["result"]["result"]["project"]["id"]
        run = {"envKey": key, "project": project, "command": "exec"}
        argv = ["printf", "hello %s", "remote"]
        # a person's gesture is required; then the operator's switch decides
        refused = await _command(world, human=False, **run, argv=argv)
        assert refused["refusal"]["code"] == "human_gesture_required"
        refused = await _command(world, **run, argv=argv)
        assert refused["refusal"]["code"] == "tool-disabled"
        served.policy("--exec", "on")
        done = await _command(world, **run, argv=argv)
        assert done["ok"], done
        ran = done["result"]
        assert (ran["exitStatus"], ran["output"], ran["timedOut"]) == (0, "hello remote", False)
        assert ran["outputSha256"] == hashlib.sha256(b"hello remote").hexdigest()
        assert isinstance(ran["peerLogged"], int)
        # the arguments each command takes, and no other
        for bad, field in (
            ({"command": "exec"}, "argv"),
            ({"command": "git/init", "argv": argv}, "argv"),
        ):
            answer = await _command(world, envKey=key, project=project, **bad)
            assert (answer["refusal"]["code"], answer["refusal"]["field"]) == (
                "args-invalid",
                field,
            )
        # git init runs the real git in the remote's project folder
        assert (await _command(world, envKey=key, project=project, command="git/init"))["ok"]
        assert (served.root / "projects" / project / ".git").is_dir()
        # the host's audit names the run, never its output or the bearer
        page = (await world.ok("audit.list", limit=1000))["result"]
        records = [r for r in page["records"] if r.get("op") == "env.command"]
        text = json.dumps(records)
        assert any(r.get("rule") == "command-ran" for r in records)
        assert "hello remote" not in text and "vbx_" not in text
        # revoked at the server: the next command is pairing-revoked, and stays so
        cli(served.root, "revoke", "--env-key", key)
        assert (await _command(world, **run, argv=argv))["refusal"]["code"] == "pairing-revoked"

    asyncio.run(go())


def test_a_fenced_command_holding_a_secret_this_host_keeps_is_refused_before_it_is_sent(
    served: Server,
) -> None:
    """A held secret (a provider key a person set) pasted into a git config value or an exec
    argument is refused ``sanitizer_refused`` naming the field and never the value, and never
    reaches the environment: not its audit, not the project's ``.git/config``; the same
    command without it runs (the law of ``mailbox.send`` and the packet, for commands)."""

    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        env = (await world.ok("env.add", url=served.url, code=_code(served.root)))["result"]
        key = env["environment"]["envKey"]
        made = await _tool(world, key, "project.create", name="cmd")
        project = made["result"]["result"]["project"]["id"]
        served.policy("--exec", "on")
        secret = "sk-ant-api03-" + "Q7" * 30
        world.ctx.secrets.set_group("test-keys", [secret])
        where = {"envKey": key, "project": project}
        for args, field in (
            ({"command": "git/config", "key": "user.email", "value": secret}, "value"),
            ({"command": "exec", "argv": ["printf", "%s", f"key={secret}"]}, "argv"),
        ):
            answer = await _command(world, **where, **args)
            assert (answer["refusal"]["code"], answer["refusal"]["field"]) == (
                "sanitizer_refused",
                field,
            ), answer
            assert secret not in json.dumps(answer)
        assert (await _command(world, **where, command="git/init"))["ok"]
        done = await _command(
            world, **where, command="git/config", key="user.email", value="a@example.org"
        )
        assert done["ok"], done
        kept = served.root / "projects" / project / ".git" / "config"
        assert "a@example.org" in kept.read_text()
        for path in served.root.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path

    asyncio.run(go())


def test_a_server_address_holding_a_secret_this_host_keeps_is_refused_as_typed() -> None:
    """A held secret pasted into the server's address is refused ``sanitizer_refused`` on
    ``url`` before the address is read: read first, its host name came back lower-cased in the
    refusal's sentence, a form of the key the exact-value redaction does not know (the tryout
    of stop 46)."""

    async def go() -> None:
        world = RemoteWorld()
        await world.start()
        secret = "sk-ant-" + "Q7" * 12
        world.ctx.secrets.set_group("test-keys", [secret])
        for url in (f"http://{secret}.example:1", f"http://127.0.0.1:1/?k={secret}"):
            refusal = await world.refused("env.add", url=url, code="ABCDE-FGHJK")
            assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", "url"), refusal
            assert secret.lower() not in json.dumps(refusal).lower()
        assert world.link.allowed == frozenset()

    asyncio.run(go())
