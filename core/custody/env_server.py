"""An environment server: the peer side of custody and pairing (seed 002; SPEC §6).

It serves one environment — its own project storage, HOST_DIR, host token,
``environments.json`` and audit — to callers that paired with it. In E1 it runs in a dedicated
worker the host spawned; the same class would serve a network peer. It decides, the adapter
carries out (timers, ports):

- **Admin requests** come only from the host that started it (the worker's parent): identity,
  a one-time claim of the host token by its creator, and the host-token-gated pairing acts
  ``pair.issue`` and ``pair.revoke`` (:class:`~core.custody.pairing.PairingStore`).
- **Execute channels**: every new channel passes the hello gate
  (:class:`~core.custody.hello_gate.HelloGate`, ``hello_bound_ms``); every execute frame is then
  authorised again on HOST_DIR as it is now (:func:`~core.custody.authorize.authorize_from_state`:
  ``unknown-environment`` → ``unauthenticated-call`` → ``pairing-revoked`` →
  ``bearer-refused``), admitted (:mod:`core.tools.admission`) and run by the environment's built-in
  tools (a :class:`~core.tools.runner.ToolRunner` its host composes) through its own pipeline,
  audited there.
- **Revocation** closes at once every live channel authenticated with a revoked bearer
  (1008 ``pairing-revoked``); their pending calls get no answer from here — the caller answers
  them ``pairing-revoked`` when it sees the close.

Nothing here ever puts a bearer or the host token in a frame, an answer, a log line or the
audit (the host token leaves only through the one-time ``claim``, to the creator).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import ConfigDict, Field, ValidationError

from core.audit import AuditLog
from core.custody.authorize import authorize_from_state
from core.custody.channels import ChannelClose, LiveChannels
from core.custody.environment import Environments, load_environments, new_env_key, save_environments
from core.custody.hello_gate import HelloGate
from core.custody.host_token import ensure_host_token
from core.custody.pairing import PairingStore, load_pairings
from core.custody.wire import (
    ExecuteRefusal,
    ExecuteRequest,
    ExecuteResult,
    HelloFrame,
    frame_text,
    parse_peer_message,
)
from core.model import Contract
from core.policy import Policy
from core.ports import Clock, HostState, PeerChannel, Randomness
from core.refusals import Code, RefusalBody, Refused
from core.secret import Secret
from core.tools.admission import CallRequest
from core.tools.runner import ToolRunner

__all__ = ["AdminRequest", "EnvironmentServer", "ServerPorts", "ensure_identity"]

CLAIMED_DOC = "host-token-claimed.json"


class AdminRequest(Contract):
    """A request from the host that started this server (never from a page or a channel)."""

    op: Literal["identity", "claim", "pair.issue", "pair.revoke"]
    host_token: Secret | None = Field(default=None, alias="hostToken")
    env_key: str | None = Field(default=None, alias="envKey", max_length=64)

    model_config = ConfigDict(populate_by_name=True)


class ServerPorts(Protocol):
    """What an environment server reads and writes — the ports of the environment it serves
    (a :class:`core.host.context.HostContext` is one): its HOST_DIR, audit, clock, randomness
    and the operator's current policy (``hello_bound_ms``)."""

    state: HostState
    audit: AuditLog
    clock: Clock
    random: Randomness
    policy: Policy


async def ensure_identity(ctx: ServerPorts, name: str) -> Environments:
    """This environment's ``environments.json``, creating its own ``local`` environment called
    ``name`` on first run (envKey from 128 bits of CSPRNG output), and its host token."""
    envs = await load_environments(ctx.state)
    if not any(e.kind == "local" for e in envs.environments):
        key = new_env_key(ctx.random)
        envs = envs.added(key, name, "local", ctx.clock.now_ms())
        await save_environments(ctx.state, envs)
    await ensure_host_token(ctx.state, ctx.random)
    return envs


@dataclass
class _Chan:
    channel: PeerChannel
    gate: HelloGate
    bearer: Secret | None = None
    hello: asyncio.Lock = field(default_factory=asyncio.Lock)


Sender = Callable[[str, bytes], Awaitable[None]]


class EnvironmentServer:
    """The peer side of one environment (see module docstring).

    ``ctx`` holds the environment's ports (:class:`ServerPorts`); ``name`` is its display name;
    ``tools`` runs its built-in tools through its own host pipeline (audited there).
    """

    def __init__(self, ctx: ServerPorts, name: str, tools: ToolRunner) -> None:
        self.name = name
        self.ctx = ctx
        self.tools = tools
        self.live = LiveChannels()
        self._chans: dict[str, _Chan] = {}
        self._pairing = PairingStore(
            self.ctx.state, self.ctx.clock, self.ctx.random, self.ctx.audit
        )
        self.env_key = ""

    async def start(self) -> str:
        """Load or create the identity; return the envKey."""
        envs = await ensure_identity(self.ctx, self.name)
        self.env_key = next(e.key for e in envs.environments if e.kind == "local")
        return self.env_key

    # ---- admin ------------------------------------------------------------------------

    async def admin(self, text: str) -> str:
        """Answer one admin request (JSON text) with JSON text ``{ok, ...}`` or a refusal."""
        try:
            request = AdminRequest.model_validate_json(text)
            result = await self._admin(request)
            return json.dumps({"ok": True, **result})
        except Refused as refusal:
            return json.dumps({"ok": False, "refusal": refusal.body().model_dump(mode="json")})
        except (ValidationError, ValueError):
            body = Refused(Code.MESSAGE_MALFORMED, "That is not an admin request.").body()
            return json.dumps({"ok": False, "refusal": body.model_dump(mode="json")})

    async def _admin(self, request: AdminRequest) -> dict[str, Any]:
        if request.op == "identity":
            return {"envKey": self.env_key, "name": self.name}
        if request.op == "claim":
            if await self.ctx.state.load(CLAIMED_DOC) is not None:
                raise Refused(Code.HOST_TOKEN_REQUIRED, "The host token was already claimed.")
            token = await ensure_host_token(self.ctx.state, self.ctx.random)
            await self.ctx.state.store(CLAIMED_DOC, b'{"claimed": true}')
            return {"envKey": self.env_key, "hostToken": token.reveal()}
        if request.op == "pair.issue":
            issued = await self._pairing.issue(
                request.host_token, request.env_key or "", actor="host"
            )
            return {
                "envKey": issued.env_key,
                "bearer": issued.bearer.reveal(),
                "logged": issued.logged,
            }
        revocation = await self._pairing.revoke(
            request.host_token, request.env_key or "", self.live, actor="host"
        )
        for close in revocation.closes:
            await self._close(close)
        return {
            "envKey": revocation.env_key,
            "revoked": revocation.revoked,
            "logged": revocation.logged,
            "channelsClosed": len(revocation.closes),
        }

    # ---- channels ---------------------------------------------------------------------

    def accept(self, channel_id: str, channel: PeerChannel, env_key: object) -> int:
        """A new channel opened for ``env_key`` (the caller's word, untrusted): start its hello
        gate; return the deadline (clock ms)."""
        gate = HelloGate(
            channel_id,
            purpose="call",
            env_key=env_key,
            opened_at_ms=self.ctx.clock.now_ms(),
            bound_ms=self.ctx.policy.hello_bound_ms,
        )
        self._chans[channel_id] = _Chan(channel, gate)
        return gate.deadline_ms

    async def tick(self) -> None:
        """Close every channel whose hello did not come in time (1008, the refusal code)."""
        now = self.ctx.clock.now_ms()
        for chan in list(self._chans.values()):
            close = chan.gate.expired(now)
            if close is not None and chan.bearer is None:
                await self._close(close)

    async def closed(self, channel_id: str) -> None:
        """The caller closed ``channel_id``: forget it."""
        self._chans.pop(channel_id, None)
        self.live.closed(channel_id)

    async def _close(self, close: ChannelClose) -> None:
        chan = self._chans.pop(close.channel_id, None)
        self.live.closed(close.channel_id)
        if chan is not None:
            await chan.channel.close(close.code, str(close.reason))

    async def on_frame(self, channel_id: str, frame: str, send_data: Sender) -> None:
        """Handle one frame of ``channel_id``: the hello, or an execute to authorise and run.

        ``send_data(request_id, chunk)`` carries a streaming tool's chunks to the caller.
        """
        chan = self._chans.get(channel_id)
        if chan is None:
            return
        # Frames are handled concurrently, but nothing on a channel runs before its hello is
        # decided: a frame that arrives meanwhile waits, then finds the channel open or gone.
        async with chan.hello:
            if channel_id not in self._chans:
                return
            if chan.bearer is None:
                await self._hello(channel_id, chan, frame)
                return
        try:
            message = parse_peer_message(frame)
        except Refused:
            await self._close(ChannelClose(channel_id=channel_id, reason=Code.BEARER_REFUSED))
            return
        if not isinstance(message, ExecuteRequest):
            return
        answer = await self._execute(channel_id, chan, message, send_data)
        if channel_id in self._chans:
            with contextlib.suppress(Refused):
                await chan.channel.send(frame_text(answer))

    async def _hello(self, channel_id: str, chan: _Chan, frame: str) -> None:
        decision = chan.gate.on_frame(
            frame,
            environments=await load_environments(self.ctx.state),
            pairings=await load_pairings(self.ctx.state),
            now_ms=self.ctx.clock.now_ms(),
        )
        if isinstance(decision, ChannelClose):
            await self._close(decision)
            return
        hello = parse_peer_message(frame)
        assert isinstance(hello, HelloFrame)
        chan.bearer = hello.bearer
        self.live.open(channel_id, bearer_hash=decision.bearer_hash, env_key=decision.env_key)

    async def _execute(
        self, channel_id: str, chan: _Chan, request: ExecuteRequest, send_data: Sender
    ) -> ExecuteResult | ExecuteRefusal:
        try:
            authorized = await authorize_from_state(self.ctx.state, request.env_key, chan.bearer)
            admitted = self.tools.admit(
                CallRequest(
                    tool=request.tool, descriptor_id=request.descriptor_id, args=request.args
                )
            )

            async def sink(chunk: bytes) -> None:
                if channel_id not in self._chans:
                    raise Refused(Code.ENVIRONMENT_UNREACHABLE, "The channel closed.")
                await send_data(request.id, chunk)

            outcome = await self.tools.run(
                admitted, actor=f"peer:{authorized.bearer_hash[:12]}", sink=sink
            )
        except Refused as refusal:
            return ExecuteRefusal(type="refusal", id=request.id, refusal=_public(refusal))
        return ExecuteResult(
            type="result", id=request.id, result=outcome.result, receipt=outcome.receipt
        )


def _public(refusal: Refused) -> RefusalBody:
    return refusal.body()
