"""Calls to peer environments: the caller's side of custody (seed 002 §1, §4; SPEC §6).

The host resolves a call envelope's ``envKey`` (:func:`~core.custody.route.route_call`): an
environment it serves runs the call here; a paired peer gets it over an execute channel that
this module opens, authenticates (the hello frame carries the host-held bearer — it never
leaves the host otherwise) and keeps, one per peer. Each call waits for its answer with a
deadline that restarts whenever the peer streams a chunk; a silent peer is
``environment-unreachable`` (502) with the outcome unknown. When the peer closes the channel —
1008 ``pairing-revoked`` after a revocation, ``bearer-refused`` for a bad bearer — every call
pending on it is answered with that code (:meth:`~core.custody.channels.LiveChannels.closed`), and
the next call opens a new channel, whose hello the peer judges afresh. :class:`PeerCaller` is one
channel's end: the hello, sending execute frames, matching answers, the deadlines.

Every answer is untrusted text (:mod:`core.custody.peer_answers`): a refusal is relayed by code with
this host's sentence, a frame outside the contract for a waiting call is
``peer-answer-invalid`` at once, a receipt the called environment did not issue for the called
tool is ``receipt-forgery-refused``, and token shapes are scrubbed from every result.

A **remote** environment (one with an ``origin``: a server on another machine, issue 15) is
reached over the :class:`~core.ports.RemoteLink` — a WebSocket to its ``/channel`` for its
envKey — and otherwise called exactly like any other peer. When its channel is lost (not closed
by a refusal) the host reconnects after each delay of
:data:`~core.custody.remote.RECONNECT_DELAYS_MS` and then stops by itself (state
``unreachable``; the next call tries once more). Calls pending on the lost channel are answered
``environment-unreachable`` and never retried. A 1008 ``pairing-revoked`` close marks the remote
``revoked`` (``on_revoked``) and nothing reconnects. Before every (re)connect the host reads the
server's ``GET /api/identity``: another protocol version is ``protocol-version-unsupported``,
another envKey ``peer-answer-invalid`` (issue 29 item 15). Each change of a remote's state is
told to ``on_state`` as it happens (:class:`~core.custody.remote.RemoteChanged`: the page
shows it without a reload).

A streaming answer's chunks are relayed as they come, at most
:data:`~core.custody.wire.MAX_STREAM_BYTES` per call: past that the call is refused
``message-too-large`` and later chunks are dropped (issue 13: a peer could fill the page's Blob
without end). On a remote's channel whose caller's sink can take the transport's own chunks
(:class:`~core.ports.PassThroughSink`: the host worker's sink to the page), the adapter asks
core about each binary message as it arrives (``pass_through``): core counts its size against
the same bound and answers where it goes, and its bytes never enter Python (issue 34); past
the bound the call is refused there and then, while the remote is still streaming.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Set
from dataclasses import dataclass, field

from core.custody.bearer import bearer_hash
from core.custody.channels import CLOSE_REASONS, Abandoned, LiveChannels
from core.custody.peer_answers import accepted_result, invalid_answer, relayed_refusal
from core.custody.remote import (
    RECONNECT_DELAYS_MS,
    RemoteChanged,
    RemoteState,
    channel_url,
    check_protocol,
    parse_identity,
    refusal_from_answer,
)
from core.custody.route import PeerRoute
from core.custody.wire import (
    MAX_STREAM_BYTES,
    CallEnvelope,
    ExecuteRefusal,
    ExecuteRequest,
    ExecuteResult,
    HelloFrame,
    frame_text,
    parse_peer_message,
)
from core.policy import Policy
from core.ports import (
    Clock,
    EnvironmentServers,
    PassThrough,
    PassThroughSink,
    PeerChannel,
    RemoteLink,
)
from core.protocol import salvage_id
from core.refusals import Code, Refused
from core.tools.receipts import retry_advice

__all__ = ["PeerCaller", "PeerCalls"]

Sink = Callable[[bytes], Awaitable[None]]
_TASKS: set[asyncio.Future[None]] = set()


def _drop(_chunk: object) -> None:
    """What a chunk core refused to relay is handed to: nothing happens to it."""


def _spawn(coro: Awaitable[None]) -> asyncio.Future[None]:
    """Run ``coro`` beside the caller, kept referenced until it ends."""
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
    return task


class PeerCaller:
    """The caller's end of one peer channel (see module docstring).

    ``live`` records the channel (keyed by the hash of the bearer presented) and its pending
    calls; ``deadline_ms`` is how long each call may wait (the policy's ``peer_deadline_ms``).
    """

    def __init__(
        self,
        channel_id: str,
        channel: PeerChannel,
        live: LiveChannels,
        clock: Clock,
        *,
        deadline_ms: int,
    ) -> None:
        self.channel_id = channel_id
        self._channel = channel
        self._live = live
        self._clock = clock
        self._deadline_ms = deadline_ms

    async def hello(self, route: PeerRoute) -> None:
        """Authenticate the channel: send the hello frame with the outbound bearer."""
        frame = HelloFrame(type="hello", role="environment", bearer=route.bearer)
        await self._channel.send(frame_text(frame, reveal=True))
        self._live.open(
            self.channel_id, bearer_hash=bearer_hash(route.bearer), env_key=route.env.key
        )

    async def send(self, request: ExecuteRequest, *, mutating: bool) -> None:
        """Send ``request`` and start its deadline. Refuses ``environment-unreachable`` when the
        channel is not open or the frame cannot be sent (the call is then not pending)."""
        now = self._clock.now_ms()
        self._live.track(
            self.channel_id, request.id, deadline_ms=now + self._deadline_ms, mutating=mutating
        )
        try:
            await self._channel.send(frame_text(request))
        except Refused:
            self._live.settle(self.channel_id, request.id)
            raise Refused(Code.ENVIRONMENT_UNREACHABLE) from None

    def receive(self, frame: object) -> ExecuteResult | ExecuteRefusal | None:
        """The answer carried by ``frame``, or ``None`` when it answers nothing pending here
        (late, duplicated, or never sent): such an answer is dropped. Refuses
        ``message-malformed`` for a frame that is not an answer."""
        message = parse_peer_message(frame)
        if not isinstance(message, ExecuteResult | ExecuteRefusal):
            raise Refused(Code.MESSAGE_MALFORMED, "Only answers may come back on this channel.")
        if not self._live.settle(self.channel_id, message.id):
            return None
        return message

    def expire(self) -> tuple[Abandoned, ...]:
        """Calls past their deadline now, each to answer ``environment-unreachable``."""
        return self._live.expire(self._clock.now_ms(), self.channel_id)

    def closed(self, reason: str | None) -> tuple[Abandoned, ...]:
        """The other side closed the channel with ``reason``: abandon its pending calls."""
        return self._live.closed(self.channel_id, reason)


@dataclass
class _Conn:
    channel_id: str
    channel: PeerChannel
    caller: PeerCaller
    waiting: dict[str, asyncio.Future[ExecuteResult | ExecuteRefusal]] = field(default_factory=dict)
    sinks: dict[str, Sink] = field(default_factory=dict)
    activity: dict[str, int] = field(default_factory=dict)
    mutating: dict[str, bool] = field(default_factory=dict)
    streamed: dict[str, int] = field(default_factory=dict)
    closed: bool = False
    reason: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class PeerCalls:
    """Execute channels to peers and the calls waiting on them (see module docstring).

    ``servers`` reaches the peers' servers by name; ``policy`` returns the current snapshot
    (``peer_deadline_ms``); ``mutating(tool)`` says whether a tool may change state (then an
    abandoned call is never retried blindly); ``field_words`` are the field names this host's
    models declare — the only ones a relayed refusal may name
    (:func:`core.custody.peer_answers.known_field`). ``max_stream_bytes`` bounds one call's
    chunks. ``link`` reaches remote environments; ``on_revoked(envKey)`` is awaited when a
    remote closes its channel 1008 ``pairing-revoked``; ``on_state(changed)`` is called
    whenever a remote's state (:meth:`remote_state`) changes or it is forgotten.
    """

    max_stream_bytes: int = MAX_STREAM_BYTES

    def __init__(
        self,
        servers: EnvironmentServers,
        clock: Clock,
        policy: Callable[[], Policy],
        mutating: Callable[[str], bool],
        field_words: Set[str],
        link: RemoteLink | None = None,
        on_revoked: Callable[[str], Awaitable[None]] | None = None,
        on_state: Callable[[RemoteChanged], None] | None = None,
    ) -> None:
        self._servers = servers
        self._link = link
        self._on_revoked = on_revoked
        self._on_state = on_state
        self._shown: dict[str, RemoteState] = {}
        self._state: dict[str, RemoteState] = {}
        self._contact: dict[str, int] = {}
        self._reconnects: dict[str, asyncio.Future[None]] = {}
        self._words = field_words
        self._clock = clock
        self._policy = policy
        self._mutating = mutating
        self.live = LiveChannels()
        self._conns: dict[str, _Conn] = {}
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    def is_connected(self, env_key: str) -> bool:
        """True while an authenticated-so-far channel to ``env_key`` is open."""
        conn = self._conns.get(env_key)
        return conn is not None and not conn.closed

    def remote_state(self, env_key: str) -> RemoteState:
        """How the remote ``env_key`` stands now (``idle`` until its first channel)."""
        if self.is_connected(env_key):
            return "connected"
        return self._state.get(env_key, "idle")

    def last_contact(self, env_key: str) -> int | None:
        """When the remote ``env_key`` last answered or connected (ms), or ``None``."""
        return self._contact.get(env_key)

    def forget(self, env_key: str) -> None:
        """Drop what is known of ``env_key``'s connection (it was removed or revoked here);
        a reconnect under way stops. Told to ``on_state`` as ``removed``."""
        task = self._reconnects.pop(env_key, None)
        if task is not None:
            task.cancel()
        self._state.pop(env_key, None)
        self._shown.pop(env_key, None)
        self._tell(RemoteChanged(env_key=env_key, state="removed"))

    def _tell(self, changed: RemoteChanged) -> None:
        if self._on_state is not None:
            self._on_state(changed)

    def _notify(self, env_key: str) -> None:
        """Tell ``on_state`` when the state of the remote ``env_key`` is not the one last told."""
        now = self.remote_state(env_key)
        if self._shown.get(env_key, "idle") != now:
            self._shown[env_key] = now
            self._tell(RemoteChanged(env_key=env_key, state=now))

    async def _check_identity(self, origin: str, env_key: str) -> None:
        """The server at ``origin`` still speaks this host's protocol and is ``env_key``
        (issue 29 item 15); refuses ``protocol-version-unsupported``, ``peer-answer-invalid``,
        or the request's own refusal."""
        assert self._link is not None
        status, text = await self._link.request(
            "GET", f"{origin}/api/identity", deadline_ms=self._policy().peer_deadline_ms
        )
        refused = refusal_from_answer(status, text)
        if refused is not None:
            raise refused
        check_protocol(text, origin)
        parse_identity(text, env_key)

    def _touch(self, env_key: str) -> None:
        self._contact[env_key] = self._clock.now_ms()

    async def _open(
        self,
        route: PeerRoute,
        on_frame: Callable[[str], Awaitable[None]],
        on_data: Callable[[str, bytes], Awaitable[None]],
        on_close: Callable[[int, str], Awaitable[None]],
        pass_through: PassThrough,
    ) -> PeerChannel:
        origin = route.env.origin
        if origin is None:
            return await self._servers.connect(
                route.env.name, on_frame, on_data, on_close, env_key=route.env.key
            )
        if self._link is None:
            raise Refused(Code.ENVIRONMENT_UNREACHABLE, "This host cannot reach remotes.")
        try:
            await self._check_identity(origin, route.env.key)
            channel = await self._link.connect(
                channel_url(origin, route.env.key),
                on_frame,
                on_data,
                on_close,
                pass_through=pass_through,
            )
        except Refused:
            if self._state.get(route.env.key) != "reconnecting":
                self._state[route.env.key] = "unreachable"
                self._notify(route.env.key)
            raise
        self._state[route.env.key] = "connected"
        self._touch(route.env.key)
        return channel

    def _lost(self, route: PeerRoute, reason: str) -> None:
        """A remote's channel closed under us: revoked, refused, or lost (reconnect)."""
        key = route.env.key
        if reason == Code.PAIRING_REVOKED:
            self._state[key] = "revoked"
            _spawn(self._revoked(key))
            return
        if reason in (
            Code.BEARER_REFUSED,
            Code.UNKNOWN_ENVIRONMENT,
            Code.UNAUTHENTICATED_CALL,
            Code.MESSAGE_TOO_LARGE,
        ):
            self._state[key] = "unreachable"
            self._notify(key)
            return
        running = self._reconnects.get(key)
        if running is None or running.done():
            self._state[key] = "reconnecting"
            self._reconnects[key] = _spawn(self._reconnect(route))
        self._notify(key)

    async def _revoked(self, key: str) -> None:
        """Record the revocation (``on_revoked``), then tell ``on_state``: the page that
        lists again then sees the pairing revoked too."""
        try:
            if self._on_revoked is not None:
                await self._on_revoked(key)
        finally:
            self._notify(key)

    async def _reconnect(self, route: PeerRoute) -> None:
        key = route.env.key
        for delay_ms in RECONNECT_DELAYS_MS:
            await asyncio.sleep(delay_ms / 1000)
            if self.is_connected(key) or self._state.get(key) != "reconnecting":
                return
            try:
                await self._connect(route)
            except Refused:
                continue
            self._notify(key)
            return
        if not self.is_connected(key) and self._state.get(key) == "reconnecting":
            self._state[key] = "unreachable"
            self._notify(key)

    async def close_all(self, env_key: str) -> None:
        """Close this host's channel to ``env_key`` (e.g. after unpairing)."""
        conn = self._conns.pop(env_key, None)
        if conn is not None:
            conn.closed = True
            await conn.channel.close(1000, "unpaired")
            self._abandon(conn, self.live.closed(conn.channel_id, "unpaired"))

    async def _connect(self, route: PeerRoute) -> _Conn:
        async with self._lock:
            conn = self._conns.get(route.env.key)
            if conn is not None and not conn.closed:
                return conn
            channel_id = f"c{next(self._ids)}"
            holder: dict[str, _Conn] = {}

            async def on_frame(text: str) -> None:
                c = holder["conn"]
                self._touch(route.env.key)
                try:
                    answer = c.caller.receive(text)
                except Refused:
                    self._refuse_invalid(c, text)
                    return
                if answer is not None:
                    future = c.waiting.pop(answer.id, None)
                    if future is not None and not future.done():
                        future.set_result(answer)

            async def on_data(request_id: str, chunk: bytes) -> None:
                c = holder["conn"]
                if not self._admit_chunk(c, route, request_id, len(chunk)):
                    return
                sink = c.sinks.get(request_id)
                if sink is not None:
                    await sink(chunk)

            def pass_through(request_id: str, size: int) -> Callable[[object], None] | None:
                c = holder.get("conn")
                if c is None or request_id not in c.waiting:
                    return _drop  # no call waits for it: dropped unread, as on_data drops it
                sink = c.sinks.get(request_id)
                if not isinstance(sink, PassThroughSink):
                    return None  # its bytes go through on_data (a sink made in Python)
                if not self._admit_chunk(c, route, request_id, size):
                    return _drop
                return sink.pass_through

            async def on_close(code: int, reason: str) -> None:
                c = holder["conn"]
                c.closed = True
                if not c.reason.done():
                    c.reason.set_result(reason)
                if self._conns.get(route.env.key) is c:
                    del self._conns[route.env.key]
                self._abandon(c, c.caller.closed(reason))
                if route.env.origin is not None:
                    self._lost(route, reason)

            channel = await self._open(route, on_frame, on_data, on_close, pass_through)
            caller = PeerCaller(
                channel_id,
                channel,
                self.live,
                self._clock,
                deadline_ms=self._policy().peer_deadline_ms,
            )
            conn = _Conn(channel_id, channel, caller)
            holder["conn"] = conn
            await caller.hello(route)
            self._conns[route.env.key] = conn
            if route.env.origin is not None:
                self._notify(route.env.key)
            return conn

    def _admit_chunk(self, conn: _Conn, route: PeerRoute, request_id: str, size: int) -> bool:
        """Count ``size`` more streamed bytes for ``request_id``; True when they may be
        relayed. A call not waiting (answered, refused, never made) relays nothing; past
        :attr:`max_stream_bytes` the call is refused ``message-too-large`` at once, while
        the peer is still streaming, and nothing more of it is relayed (issue 13; issue 34:
        the same count whether the bytes pass through Python or only their size does)."""
        future = conn.waiting.get(request_id)
        if future is None:
            return False  # a call already answered (or never made): dropped
        conn.activity[request_id] = self._clock.now_ms()
        self._touch(route.env.key)
        conn.streamed[request_id] = conn.streamed.get(request_id, 0) + size
        if conn.streamed[request_id] <= self.max_stream_bytes:
            return True
        self.live.settle(conn.channel_id, request_id)
        conn.waiting.pop(request_id, None)
        if not future.done():
            future.set_exception(
                Refused(
                    Code.MESSAGE_TOO_LARGE,
                    f"The peer's answer passed {self.max_stream_bytes} bytes; "
                    "the host relayed no more of it.",
                )
            )
        return False

    def _refuse_invalid(self, conn: _Conn, text: str) -> None:
        """A frame outside the contract: if it names a waiting call, refuse that call now."""
        request_id = salvage_id(text)
        if not request_id:
            return
        future = conn.waiting.get(request_id)
        if future is None or future.done() or not self.live.settle(conn.channel_id, request_id):
            return
        conn.waiting.pop(request_id, None)
        future.set_exception(invalid_answer(mutating=conn.mutating.get(request_id, True)))

    def _abandon(self, conn: _Conn, abandoned: tuple[Abandoned, ...]) -> None:
        for item in abandoned:
            future = conn.waiting.pop(item.request_id, None)
            if future is not None and not future.done():
                future.set_exception(item.refusal())
        for request_id, future in list(conn.waiting.items()):
            if not future.done():
                future.set_exception(Refused(Code.ENVIRONMENT_UNREACHABLE))
            conn.waiting.pop(request_id, None)

    async def call(
        self, route: PeerRoute, envelope: CallEnvelope, sink: Sink | None = None
    ) -> ExecuteResult:
        """Forward ``envelope`` to the peer of ``route``; return its result (checked and
        scrubbed) or raise its relayed refusal (or ``environment-unreachable``,
        ``peer-answer-invalid``, ``receipt-forgery-refused``, the close reason — see module
        docstring)."""
        if route.env.origin is None:
            await self._servers.start(route.env.name)  # after a reload it starts on first use
        conn = await self._connect(route)
        request_id = f"x{next(self._ids)}"
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ExecuteResult | ExecuteRefusal] = loop.create_future()
        conn.waiting[request_id] = future
        mutating = self._mutating(envelope.tool)
        conn.mutating[request_id] = mutating
        if sink is not None:
            conn.sinks[request_id] = sink
        request = ExecuteRequest(
            type="execute",
            id=request_id,
            envKey=envelope.env_key,
            tool=envelope.tool,
            descriptorId=envelope.descriptor_id,
            args=envelope.args,
        )
        try:
            try:
                await conn.caller.send(request, mutating=mutating)
            except Refused:
                raise await self._why_closed(conn) from None
            answer = await self._wait(conn, request_id, future, envelope.tool)
        finally:
            conn.waiting.pop(request_id, None)
            conn.sinks.pop(request_id, None)
            conn.activity.pop(request_id, None)
            conn.mutating.pop(request_id, None)
            conn.streamed.pop(request_id, None)
        if isinstance(answer, ExecuteRefusal):
            raise relayed_refusal(answer.refusal, mutating=mutating, words=self._words)
        return accepted_result(answer, envelope=envelope, mutating=mutating)

    async def _why_closed(self, conn: _Conn) -> Refused:
        """A frame could not be sent: the channel is closing. The refusal its close names
        (``pairing-revoked`` after a revocation…), waited for at most a second; else
        ``environment-unreachable``. The call was not sent: nothing ran."""
        try:
            reason = await asyncio.wait_for(asyncio.shield(conn.reason), 1)
        except TimeoutError:
            reason = ""
        if reason in CLOSE_REASONS:
            return Refused(Code(reason))
        return Refused(Code.ENVIRONMENT_UNREACHABLE)

    async def _wait(
        self,
        conn: _Conn,
        request_id: str,
        future: asyncio.Future[ExecuteResult | ExecuteRefusal],
        tool: str,
    ) -> ExecuteResult | ExecuteRefusal:
        deadline = self._policy().peer_deadline_ms
        while True:
            started = self._clock.now_ms()
            try:
                return await asyncio.wait_for(asyncio.shield(future), deadline / 1000)
            except TimeoutError:
                if conn.activity.get(request_id, 0) >= started:
                    continue  # the peer is streaming: still alive
                self.live.settle(conn.channel_id, request_id)
                raise Refused(
                    Code.ENVIRONMENT_UNREACHABLE,
                    details={"outcome": "unknown", "retry": retry_advice(self._mutating(tool))},
                    show_details=True,
                ) from None
