"""The environment server's decisions and effects, whatever the transport (seed 002; SPEC §6).

:mod:`server_host.app` turns HTTP requests and WebSocket messages into calls of
:class:`EnvironmentService`, and its answers back; nothing here knows Starlette. Every rule is
core's and is asked here, where the request arrives:

- **Who may call** — :func:`core.custody.authorize.authorize_execute`, the one decision order
  for both transports: the ``envKey`` is resolved against ``environments.json`` (as stored now)
  before any bearer is looked at — ``unknown-environment`` (404) for an unknown, removed or
  re-keyed key whatever bearer comes with it — then no bearer ``unauthenticated-call`` (401), a
  revoked one ``pairing-revoked`` (403), any other wrong one ``bearer-refused`` (403). On HTTP
  it runs for every request (``POST /api/execute``, the fenced-command routes); on the WebSocket
  for the channel's ``envKey`` (named in its URL) *before its hello is read*, for the hello's
  bearer, and again for every execute frame on the channel as HOST_DIR is then. A channel that
  does not authenticate in time, or whose hello is not a hello or carries no bearer, is closed
  1008 ``executor-unauthenticated`` (seed 002 §5, the ``/channel`` code).
- **What may run** — core's admission (:meth:`core.host.tools.ToolBox.admit`, on a fresh policy
  snapshot) and dispatcher: the same built-in tools as every environment.
- **Pairing** — :class:`core.custody.pairing.PairingStore` (host token first, constant time) and the
  one-time codes of :mod:`core.custody.pair_code`; a claimed code issues a bearer exactly as
  ``POST /api/pair`` does (hashed at rest, audited ``pairing-issued``).
- **Revocation** — moves the bearers to ``revokedBearers``, then at once: every open channel
  authenticated with one is sent a ``pairing-revoked`` refusal for each call pending on it
  and closed 1008 ``pairing-revoked``; every HTTP call in flight with one is cancelled and
  answered 403 ``pairing-revoked``; the audit gets rule ``pairing-revoked`` (or the answer
  says ``logged: null, logRefused: "root-not-declared"`` without an audit root).

Refusals are audited here when they happen before the dispatcher (authorisation, admission,
claims): decision ``refused``, the code as the rule, no bearer, no token, no code.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

import core
from core.audit import AuditLog
from core.custody.authorize import Authorized, authorize_execute
from core.custody.channels import ChannelClose, LiveChannels
from core.custody.environment import env_key_said, load_environments
from core.custody.hello_gate import HelloGate
from core.custody.host_token import HOST_TOKEN_DOC, require_host_token
from core.custody.pair_code import PairCodeStore, env_fingerprint
from core.custody.pairing import PairingStore, Revocation, load_pairings
from core.custody.wire import (
    ExecuteRefusal,
    ExecuteRequest,
    ExecuteResult,
    HelloFrame,
    frame_text,
    parse_call_envelope,
    parse_peer_message,
)
from core.policy import require_writable
from core.protocol import PROTOCOL_VERSION, salvage_id
from core.redaction import Redactor
from core.refusals import Code, Refused
from core.secret import REVEAL, Secret, known_names, quiet_error_text, scrub_secrets
from core.tools.admission import CallRequest
from server_host.audit_store import AUDIT_KEY_FILE
from server_host.commands import (
    COMMANDS_DOC,
    GIT_CONFIG_KEYS,
    ExecArgs,
    GitConfigArgs,
    ProjectArgs,
    RunResult,
    load_command_policy,
    run_argv,
    scrubbed_env,
)
from server_host.home import Composed
from server_host.sandbox import Fence, ProcessSandbox, Unavailable, detect

__all__ = ["MAX_HTTP_STREAM_BYTES", "EnvironmentService", "OpenChannel"]

MAX_HTTP_STREAM_BYTES = 16 << 20
"""The most a streaming tool (an export) may return over ``POST /api/execute``, where it is
gathered into ``result.content_b64``; larger answers stream over ``/channel``."""
CLOSE_BOUND_S = 2
"""How long a revocation waits for a channel's pending answers to go out before it closes."""
_FAR = 1 << 62  # the server's own pending calls have no deadline: the caller keeps those
M = TypeVar("M", bound=BaseModel)


@dataclass
class OpenChannel:
    """One WebSocket channel: its adapter, the ``envKey`` of its URL, its bearer once its
    hello passed, and the calls running on it."""

    channel: Any
    env_key: str
    gate: HelloGate
    bearer: Secret | None = None
    calls: dict[str, asyncio.Task[None]] = field(default_factory=dict)


def parse_body(model: type[M], text: bytes) -> M:
    """``model`` from a request body (JSON text); refuses ``message-malformed`` naming only
    the model's own fields."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise Refused(Code.MESSAGE_MALFORMED, quiet_error_text(exc, known_names(model))) from None
    except ValueError:
        raise Refused(Code.MESSAGE_MALFORMED, "The body is not JSON.") from None


class EnvironmentService:
    """The server of one environment (see the module docstring).

    ``composed`` is the host over the environment's root; ``hello_bound_ms`` the time a new
    channel has for its hello (``VOICEBOX_HELLO_BOUND_MS``, else the policy's).
    """

    def __init__(
        self,
        composed: Composed,
        *,
        hello_bound_ms: int | None = None,
        sandbox: ProcessSandbox | None = None,
        private_paths: tuple[Path, ...] = (),
    ) -> None:
        self.composed = composed
        ctx = composed.ctx
        self.ctx = ctx
        self.state = composed.state
        self.audit: AuditLog | None = ctx.audit if composed.audited else None
        self.pairing = PairingStore(ctx.state, ctx.clock, ctx.random, self.audit)
        self.codes = PairCodeStore(ctx.state, ctx.clock, ctx.random)
        self.tools = composed.host.tools
        self.live = LiveChannels()
        self.channels: dict[str, OpenChannel] = {}
        self._http: dict[str, asyncio.Future[None]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._hello_bound_ms = hello_bound_ms
        self._sandbox = sandbox
        self.private_paths = private_paths
        self.secrets = ctx.secrets
        """The secrets this server holds (:mod:`core.custody.held_secrets`): HOST_DIR's, the
        audit key, and the bearers it issued or accepted while running."""
        key_file = composed.home.host_dir / AUDIT_KEY_FILE
        self.secrets.set_group("audit-key", [key_file.read_bytes()] if key_file.exists() else [])
        from server_host.runner_desk import RunnerDesk, read_runner_secret

        self.runners = RunnerDesk(self)  # makes HOST_DIR runner-secret when it is missing
        self.secrets.set_group("runner-secret", [read_runner_secret(composed.home.host_dir)])

    @property
    def sandbox(self) -> ProcessSandbox:
        """The process sandbox fenced commands run in (:func:`server_host.sandbox.detect`,
        probed on first use when the server was not given one)."""
        if self._sandbox is None:
            self._sandbox = detect()
        return self._sandbox

    def command_fence(self, folder: Path) -> Fence:
        """What a fenced command in project ``folder`` sees (issue 29 item 7): that folder
        read-write; the environment's whole root (HOST_DIR, the other projects, exec-home), the
        server's own home, the server's private files (its TLS key) and the machine's private
        folders hidden; ``/tmp`` and ``HOME`` (exec-home's path) fresh and private; no
        network."""
        home = self.composed.home
        try:
            own: tuple[Path, ...] = (Path.home(),)
        except (RuntimeError, KeyError):  # no HOME and no passwd entry
            own = ()
        return Fence(
            writable=(folder,),
            hidden=(home.root, *own, *self.private_paths),
            scratch=(Path("/tmp"), home.exec_home),
        )

    async def redactor(self) -> Redactor:
        """The redactor over every secret this server holds now, HOST_DIR read afresh (a host
        token or a pairing changed by the CLI is seen). Issued bearers are kept only as their
        sha256: the ones it can match are those issued by, or presented to, this process."""
        return await self.secrets.current(self.ctx.state, reread=True)

    @property
    def hello_bound_ms(self) -> int:
        """How long a new channel may take to send its hello, in ms."""
        return self._hello_bound_ms or self.ctx.policy.hello_bound_ms

    # ---- identity and audit -------------------------------------------------------------

    async def identity(self) -> dict[str, Any]:
        """The environment's public identity: name, envKey, fingerprint, the protocol version
        it speaks (issue 29 item 15) and its pinned runners
        (:meth:`server_host.runner_desk.RunnerDesk.runners`); no secret. Read from
        ``environments.json`` now: refuses ``unknown-environment`` once the operator removed it
        (:meth:`core.custody.environment.Environments.own`)."""
        current = (await load_environments(self.state)).own()
        return {
            "name": current.name,
            "envKey": current.key,
            "fingerprint": env_fingerprint(current.key),
            "protocol": PROTOCOL_VERSION,
            "runners": self.runners.runners(),
        }

    def health(self) -> dict[str, Any]:
        """``GET /api/health`` for proxies and monitors (issue 29 item 15d): ``{"status": "ok",
        "protocol": <int>, "version": <core's version>}``. No auth, no secret, no count; reads
        nothing from disk, so it is as cheap as an answer gets."""
        return {"status": "ok", "protocol": PROTOCOL_VERSION, "version": core.__version__}

    async def _refused(
        self, op: str, refusal: Refused, actor: str = "remote", **details: Any
    ) -> None:
        if self.audit is None:
            return
        clean = {
            k: v
            if isinstance(v, int | bool) or v is None
            else scrub_secrets(str(v)[:1000], self.secrets.redactor().redact)
            for k, v in details.items()
        }
        with contextlib.suppress(Exception):
            await self.audit.append(
                actor=actor, op=op, decision="refused", rule=str(refusal.code), details=clean
            )

    async def pairing_token_check(self, token: Secret | None) -> None:
        """Refuse ``host-token-required`` (403) unless ``token`` is this environment's host
        token (constant time) — the first check of every host-token route; audited."""
        try:
            await require_host_token(self.state, token)
        except Refused as refusal:
            await self._refused("pair", refusal)
            raise

    async def _own_token(self) -> Secret:
        raw = await self.state.load(HOST_TOKEN_DOC)
        if not raw:
            raise Refused(Code.STORAGE_FAILED, "This environment has no host token.")
        return Secret(raw.decode("utf-8"))

    # ---- pairing --------------------------------------------------------------------------

    async def pair_issue(self, token: Secret | None, env_key: str) -> dict[str, Any]:
        """``POST /api/pair``: ``{envKey, bearer, logged}`` (the bearer shown this once)."""
        issued = await self.pairing.issue(token, env_key, actor="operator")
        self.secrets.remember(issued.bearer)
        return issued.model_dump(mode="json", by_alias=True, context={REVEAL: True})

    async def pair_complete(
        self, token: Secret | None, env_key: str, bearer: Secret
    ) -> dict[str, Any]:
        """``POST /api/pair/complete``: record an outbound bearer for the peer ``env_key``."""
        done = await self.pairing.complete(token, env_key, bearer, actor="operator")
        return done.model_dump(mode="json", by_alias=True)

    async def pair_revoke(
        self, token: Secret | None, env_key: str, *, actor: str = "operator"
    ) -> dict[str, Any]:
        """``DELETE /api/pair`` (and ``voicebox-env revoke``): see the module docstring.
        Answers ``{envKey, revoked, channelsClosed, callsAbandoned, logged, logRefused}``."""
        revocation = await self.pairing.revoke(token, env_key, self.live, actor=actor)
        return await self._carried_out(revocation)

    async def pair_release(self, env_key: object, bearer: Secret | None) -> dict[str, Any]:
        """``POST /api/pair/revoke`` (``Authorization: Bearer``): the holder of a bearer gives
        up its own pairing — a browser host revoking from its page, which never holds this
        server's host token. The decision order first (``unknown-environment``,
        ``unauthenticated-call``, ``pairing-revoked``, ``bearer-refused``); then only that
        bearer is revoked and its channels closed 1008 ``pairing-revoked`` (as
        :meth:`pair_revoke`, same answer)."""
        authorized = await self._authorize("pair.revoke", env_key, bearer)
        revocation = await self.pairing.release(
            authorized.env.key, authorized.bearer_hash, self.live, actor="holder"
        )
        return await self._carried_out(revocation)

    async def _carried_out(self, revocation: Revocation) -> dict[str, Any]:
        """Close every channel of ``revocation`` (:meth:`_carry_out`); the answer both
        revocation routes give."""
        abandoned = 0
        for close in revocation.closes:
            abandoned += await self._carry_out(close)
        return {
            "envKey": revocation.env_key,
            "revoked": revocation.revoked,
            "channelsClosed": sum(1 for c in revocation.closes if c.channel_id.startswith("ws")),
            "callsAbandoned": abandoned,
            "logged": revocation.logged,
            "logRefused": revocation.log_refused,
        }

    async def _carry_out(self, close: ChannelClose) -> int:
        """Close one revoked channel (WebSocket: refusal frames, then 1008; HTTP: answer 403)."""
        waiter = self._http.pop(close.channel_id, None)
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
            return len(close.abandoned)
        chan = self.channels.pop(close.channel_id, None)
        if chan is None:
            return 0
        for task in chan.calls.values():  # first: nothing of theirs runs or sends any more
            task.cancel()
        answers = [
            frame_text(ExecuteRefusal(type="refusal", id=i.request_id, refusal=i.refusal().body()))
            for i in close.abandoned
        ]

        async def answer() -> None:
            with contextlib.suppress(Refused):
                for text in answers:
                    await chan.channel.send(text)

        async def answer_then_close() -> None:
            # a reader that does not read cannot hold the revocation: the answers get a bound
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answer(), CLOSE_BOUND_S)
            await chan.channel.close(close.code, str(close.reason))

        # The channel is already gone from ``live`` (no call of it is admitted any more) and its
        # calls are cancelled; the refusal frames and the 1008 go out behind whatever the socket
        # still holds. Not awaited here: a reader that stopped reading while it waits for this
        # very answer (back-pressure) would otherwise see neither frame nor close.
        task = asyncio.create_task(answer_then_close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return len(close.abandoned)

    async def mint_code(self, env_key: str | None = None) -> dict[str, Any]:
        """A one-time pairing code for ``env_key`` (default: this environment). The caller
        checked the operator's authority. ``{code, envKey, fingerprint, expiresAt}``."""
        key = env_key or (await self.identity())["envKey"]
        minted = await self.codes.mint(key)
        return minted.model_dump(mode="json", by_alias=True, context={REVEAL: True})

    async def claim(self, code: Secret) -> dict[str, Any]:
        """``POST /api/pair/claim``: spend ``code`` and issue a bearer for its environment.
        ``{envKey, bearer, fingerprint, logged}``; refuses ``pairing-code-refused``,
        ``rate-limited``."""
        try:
            env_key = await self.codes.claim(code)
        except Refused as refusal:
            await self._refused("pair.claim", refusal)
            raise
        issued = await self.pairing.issue(await self._own_token(), env_key, actor="pair-code")
        self.secrets.remember(issued.bearer)
        answer = issued.model_dump(mode="json", by_alias=True, context={REVEAL: True})
        return {**answer, "fingerprint": env_fingerprint(env_key)}

    # ---- authorisation -------------------------------------------------------------------

    async def _authorize(self, op: str, env_key: object, bearer: Secret | None) -> Authorized:
        """Core's decision order on HOST_DIR as it is now (module docstring); audited."""
        try:
            authorized = authorize_execute(
                await load_environments(self.state),
                await load_pairings(self.state),
                env_key,
                bearer,
            )
        except Refused as refusal:
            await self._refused(op, refusal, envKey=env_key_said(env_key))
            raise
        self.secrets.remember(bearer)  # one of ours: matched from now on (redactor)
        return authorized

    async def _tracked(
        self,
        authorized: Authorized,
        work: Callable[[], Awaitable[dict[str, Any]]],
        *,
        mutating: bool,
    ) -> dict[str, Any]:
        """Run one HTTP call so that a revocation of its bearer cancels it and it is answered
        ``pairing-revoked`` (outcome unknown)."""
        channel_id = f"h{next(self._ids)}"
        self.live.open(channel_id, bearer_hash=authorized.bearer_hash, env_key=authorized.env.key)
        self.live.track(channel_id, "call", deadline_ms=_FAR, mutating=mutating)
        revoked: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._http[channel_id] = revoked
        task = asyncio.ensure_future(work())
        try:
            racing: list[asyncio.Future[Any]] = [task, revoked]
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                raise Refused(
                    Code.PAIRING_REVOKED,
                    details={"outcome": "unknown", "retry": "not-blindly" if mutating else "safe"},
                    show_details=True,
                )
            return task.result()
        finally:
            if not task.done():
                task.cancel()
            self._http.pop(channel_id, None)
            self.live.closed(channel_id)

    # ---- tool calls -----------------------------------------------------------------------

    async def _run_tool(
        self,
        authorized: Authorized,
        tool: str,
        descriptor_id: str,
        args: dict[str, Any],
        sink: Callable[[bytes], Awaitable[None]] | None,
    ) -> tuple[dict[str, Any], Any]:
        actor = f"peer:{authorized.bearer_hash[:12]}"
        await self.composed.reload_policy()
        try:
            admitted = self.tools.admit(
                CallRequest(tool=tool, descriptor_id=descriptor_id, args=args)
            )
        except Refused as refusal:
            await self._refused("tool.call", refusal, actor=actor, tool=tool)
            raise
        outcome = await self.tools.run(admitted, actor=actor, sink=sink)
        return outcome.result, outcome.receipt

    def _mutating(self, tool: str) -> bool:
        entry = self.tools.registry.get(tool)
        return entry is None or entry.mutating

    async def execute_http(self, body: bytes, bearer: Secret | None) -> dict[str, Any]:
        """``POST /api/execute``: the call envelope ``{envKey, tool, descriptorId, args}``;
        answers ``{result, receipt}`` (a streaming tool's bytes, at most
        :data:`MAX_HTTP_STREAM_BYTES`, in ``result.content_b64``)."""
        envelope = parse_call_envelope(body)
        authorized = await self._authorize("execute", envelope.env_key, bearer)
        gathered: list[bytes] = []
        size = 0

        async def sink(chunk: bytes) -> None:
            nonlocal size
            size += len(chunk)
            if size > MAX_HTTP_STREAM_BYTES:
                raise Refused(
                    Code.MESSAGE_TOO_LARGE,
                    f"The answer passes {MAX_HTTP_STREAM_BYTES} bytes; call it over /channel, "
                    "where it streams.",
                )
            gathered.append(chunk)

        async def work() -> dict[str, Any]:
            result, receipt = await self._run_tool(
                authorized, envelope.tool, envelope.descriptor_id, envelope.args, sink
            )
            if gathered:
                result = {**result, "content_b64": base64.b64encode(b"".join(gathered)).decode()}
            return {
                "result": result,
                "receipt": None if receipt is None else receipt.model_dump(mode="json"),
            }

        return await self._tracked(authorized, work, mutating=self._mutating(envelope.tool))

    # ---- channels -------------------------------------------------------------------------

    async def channel_open(self, env_key: str, channel: Any) -> str | None:
        """A new WebSocket channel for ``env_key`` (its URL's): resolved before any hello is
        read; an unknown one is closed 1008 ``unknown-environment`` (returns ``None``)."""
        envs = await load_environments(self.state)
        served = envs.find(env_key)
        if served is None or served.kind != "local":
            refusal = Refused(Code.UNKNOWN_ENVIRONMENT)
            await self._refused("channel.open", refusal, envKey=env_key_said(env_key))
            await channel.close(1008, str(Code.UNKNOWN_ENVIRONMENT))
            return None
        channel_id = f"ws{next(self._ids)}"
        gate = HelloGate(
            channel_id,
            purpose="executor",
            env_key=served.key,
            opened_at_ms=self.ctx.clock.now_ms(),
            bound_ms=self.hello_bound_ms,
        )
        self.channels[channel_id] = OpenChannel(channel, served.key, gate)
        return channel_id

    async def _close(self, channel_id: str, code: Code) -> None:
        chan = self.channels.pop(channel_id, None)
        self.live.closed(channel_id)
        if chan is not None:
            for task in chan.calls.values():
                task.cancel()
            await chan.channel.close(1008, str(code))

    async def channel_timeout(self, channel_id: str) -> None:
        """No hello within the bound: close 1008 ``executor-unauthenticated``."""
        await self._refused("channel.hello", Refused(Code.EXECUTOR_UNAUTHENTICATED))
        await self._close(channel_id, Code.EXECUTOR_UNAUTHENTICATED)

    async def channel_hello(self, channel_id: str, text: str | None) -> bool:
        """Judge the channel's first message; True when it authenticated (module docstring)."""
        chan = self.channels.get(channel_id)
        if chan is None:
            return False
        decision = chan.gate.on_frame(
            "" if text is None else text,
            environments=await load_environments(self.state),
            pairings=await load_pairings(self.state),
            now_ms=self.ctx.clock.now_ms(),
        )
        if isinstance(decision, ChannelClose):
            refusal = Refused(decision.reason)
            await self._refused("channel.hello", refusal, envKey=env_key_said(chan.env_key))
            await self._close(channel_id, decision.reason)
            return False
        hello = parse_peer_message(text)
        assert isinstance(hello, HelloFrame)
        chan.bearer = hello.bearer
        self.live.open(channel_id, bearer_hash=decision.bearer_hash, env_key=decision.env_key)
        return True

    async def channel_frame(self, channel_id: str, text: str) -> None:
        """One frame after the hello: an execute request runs in a task of its own; anything
        else with a readable id is answered ``message-malformed``; the rest is dropped."""
        chan = self.channels.get(channel_id)
        if chan is None or chan.bearer is None:
            return
        try:
            message = parse_peer_message(text)
        except Refused as refusal:
            request_id = salvage_id(text)
            if request_id:
                answer = ExecuteRefusal(type="refusal", id=request_id, refusal=refusal.body())
                with contextlib.suppress(Refused):
                    await chan.channel.send(frame_text(answer))
            return
        if not isinstance(message, ExecuteRequest) or message.id in chan.calls:
            return
        task = asyncio.ensure_future(self._channel_call(channel_id, chan, message))
        chan.calls[message.id] = task
        rid = message.id
        task.add_done_callback(lambda _t: chan.calls.pop(rid, None))

    async def _channel_call(
        self, channel_id: str, chan: OpenChannel, request: ExecuteRequest
    ) -> None:
        try:
            self.live.track(
                channel_id, request.id, deadline_ms=_FAR, mutating=self._mutating(request.tool)
            )
        except Refused:
            return
        answer: ExecuteResult | ExecuteRefusal
        try:
            authorized = await self._authorize("execute", request.env_key, chan.bearer)

            async def sink(chunk: bytes) -> None:
                await chan.channel.send_data(request.id, chunk)

            result, receipt = await self._run_tool(
                authorized, request.tool, request.descriptor_id, request.args, sink
            )
            answer = ExecuteResult(type="result", id=request.id, result=result, receipt=receipt)
        except Refused as refusal:
            answer = ExecuteRefusal(type="refusal", id=request.id, refusal=refusal.body())
        if not self.live.settle(channel_id, request.id):
            return  # revoked or closed meanwhile: answered already, or nobody to answer
        with contextlib.suppress(Refused):
            await chan.channel.send(frame_text(answer))

    async def channel_closed(self, channel_id: str) -> None:
        """The socket closed: cancel what still runs for it and forget it."""
        chan = self.channels.pop(channel_id, None)
        self.live.closed(channel_id)
        if chan is not None:
            for task in chan.calls.values():
                task.cancel()

    # ---- fenced commands ------------------------------------------------------------------

    async def fenced(
        self, command: str, env_key: str, bearer: Secret | None, body: bytes
    ) -> dict[str, Any]:
        """``POST /api/environments/:key/{exec,git/init,git/config}`` (seed 002 §4). Order:
        authorisation (module docstring), arguments, the operator's switch
        (``tool-disabled``), SAFE mode (``read-only-mode``), the project; then the run,
        audited. Answers :class:`~server_host.commands.RunResult`."""
        op = f"env.{command.replace('/', '.')}"
        authorized = await self._authorize(op, env_key, bearer)
        actor = f"peer:{authorized.bearer_hash[:12]}"
        models: dict[str, type[ProjectArgs]] = {"exec": ExecArgs, "git/config": GitConfigArgs}
        model = models.get(command, ProjectArgs)
        try:
            args = parse_body(model, body)
            policy = await self.composed.reload_policy()
            commands = load_command_policy(await self.state.load(COMMANDS_DOC))
            enabled = commands.exec_enabled if command == "exec" else commands.git_enabled
            if not enabled:
                raise Refused(
                    Code.TOOL_DISABLED,
                    f"'{command}' is off in this environment; its operator turns it on with "
                    "voicebox-env policy.",
                )
            require_writable(policy)  # SAFE mode: the one check
            sandbox = self.sandbox
            if isinstance(sandbox, Unavailable):
                raise sandbox.refusal()
            await self.ctx.catalog.open(args.project)  # a project, with its manifest
            folder = self.composed.roots.folder(args.project)
            if isinstance(args, ExecArgs):
                argv = args.argv
                limit = min(args.time_limit_ms or commands.time_limit_ms, commands.time_limit_ms)
                env = scrubbed_env(self.composed.home.exec_home)
            elif isinstance(args, GitConfigArgs):
                if args.key not in GIT_CONFIG_KEYS:
                    raise Refused(
                        Code.ARGS_INVALID,
                        "git/config sets only " + ", ".join(sorted(GIT_CONFIG_KEYS)) + ".",
                        field="key",
                    )
                argv = ("git", "config", "--local", args.key, args.value)
                limit, env = commands.time_limit_ms, scrubbed_env(folder, git=True)
            else:
                argv = ("git", "init", "--quiet")
                limit, env = commands.time_limit_ms, scrubbed_env(folder, git=True)
        except Refused as refusal:
            await self._refused(op, refusal, actor=actor)
            raise

        async def work() -> dict[str, Any]:
            redactor = await self.redactor()
            ran: RunResult = await run_argv(
                argv,
                cwd=folder,
                env=env,
                time_limit_ms=limit,
                output_cap_bytes=commands.output_cap_bytes,
                sandbox=sandbox,
                fence=self.command_fence(folder),
                redactor=redactor,
            )
            logged = None
            if self.audit is not None:
                with contextlib.suppress(Exception):
                    logged = await self.audit.append(
                        actor=actor,
                        op=op,
                        decision="admitted",
                        rule="command-ran",
                        project=args.project,
                        details={
                            "argv": scrub_secrets(redactor.redact(shlex.join(argv)))[:1000],
                            "exitStatus": ran.exit_status,
                            "durationMs": ran.duration_ms,
                            "timedOut": ran.timed_out,
                            "truncated": ran.truncated,
                            "outputBytes": ran.output_bytes,
                            "outputSha256": ran.output_sha256,
                            "sandbox": sandbox.name,
                        },
                    )
            return {**ran.model_dump(mode="json", by_alias=True), "logged": logged}

        return await self._tracked(authorized, work, mutating=True)


def answer_json(data: dict[str, Any]) -> str:
    """The JSON text of an answer (compact, UTF-8)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
