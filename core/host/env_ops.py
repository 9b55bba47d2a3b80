"""Environments, pairing and tool calls for the page (SPEC §4, §6, §7; seed 002, seed 003).

- ``env.list`` / ``fleet.list``: the local environment and each peer — name, envKey, paired,
  running, connected. No token or bearer ever appears.
- ``env.create``, ``env.pair``, ``env.unpair``, ``env.revoke``: the local operator's acts
  (:mod:`core.custody.peer_admin`). ``env.revoke`` is audited here with rule ``pairing-revoked`` and
  the answer's ``logged`` is that record's number; the peer audits it too.
- ``tool.discover {envKey}``: discovery of that environment's tools — schema, effect class,
  receipt rule, confirmation. A description, never an entitlement.
- ``tool.call {envKey, tool, descriptorId, args}``: the seed's call envelope. The host resolves
  the envKey first (``unknown-environment``), then runs the call here (admission on a fresh
  policy snapshot) or forwards it to the paired peer with the bearer it holds
  (``environment-not-paired`` without one). Streaming tools (an archive export) stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from pydantic import Field

from core.custody.environment import load_environments
from core.custody.pairing import PairingStore, load_pairings
from core.custody.peer_admin import PeerAdmin
from core.custody.peer_calls import PeerCalls
from core.custody.route import LocalRoute, route_call
from core.custody.wire import CallEnvelope
from core.host.operations import Call, Outcome, operation
from core.host.tools import ToolBox, ToolOutcome
from core.model import Contract, NoArgs
from core.protocol import HUMAN_UI
from core.refusals import Code, Refused
from core.tools.admission import CallRequest
from core.tools.receipts import HostReceipt

__all__ = ["services"]


class EnvRef(Contract):
    """Arguments naming one environment by its envKey."""

    env_key: str = Field(alias="envKey", max_length=64)

    model_config = Contract.model_config | {"populate_by_name": True}


class EnvCreateArgs(Contract):
    """``env.create``: the new environment's name (``[a-z][a-z0-9-]{0,31}``)."""

    name: str = Field(max_length=64)


class EnvInfo(Contract):
    """One environment as the page sees it (no secret)."""

    name: str
    env_key: str = Field(alias="envKey")
    kind: str
    paired: bool
    revoked: bool = False
    """The peer revoked the bearer this host holds: calls are refused ``pairing-revoked``
    until it pairs again (``paired`` is then false)."""
    running: bool
    connected: bool

    model_config = Contract.model_config | {"serialize_by_alias": True, "populate_by_name": True}


class EnvList(Contract):
    """Environments: the local one first, then peers by name."""

    environments: list[EnvInfo]


class EnvAnswer(Contract):
    """One environment."""

    environment: EnvInfo


class Revoked(Contract):
    """What a revocation did: bearers revoked and live channels closed at the peer, and the
    peer's own audit number for it."""

    env_key: str = Field(alias="envKey")
    revoked: int
    channels_closed: int = Field(alias="channelsClosed")
    peer_logged: int | None = Field(alias="peerLogged")

    model_config = Contract.model_config | {"serialize_by_alias": True, "populate_by_name": True}


class ToolList(Contract):
    """Discovery of one environment's tools."""

    env_key: str = Field(alias="envKey")
    tools: list[dict[str, Any]]

    model_config = Contract.model_config | {"serialize_by_alias": True, "populate_by_name": True}


class ToolCallResult(Contract):
    """A tool call's outcome: its result and, for an effect the host performed, its receipt."""

    env_key: str = Field(alias="envKey")
    tool: str
    result: dict[str, Any]
    receipt: HostReceipt | None = None

    model_config = Contract.model_config | {"serialize_by_alias": True, "populate_by_name": True}


class _Services:
    def __init__(self, call: Call) -> None:
        ctx = call.ctx
        if ctx.servers is None or ctx.dispatcher is None:
            raise Refused(Code.OPERATION_UNKNOWN, "This host runs no environment servers.")
        cache = ctx.cache
        if "tools" not in cache:
            cache["tools"] = ToolBox(ctx.dispatcher, ctx.env_key, lambda: ctx.policy)
            tools: ToolBox = cache["tools"]

            def mutating(name: str) -> bool:
                entry = tools.registry.get(name)
                return entry is None or entry.mutating

            cache["peers"] = PeerCalls(ctx.servers, ctx.clock, lambda: ctx.policy, mutating)
        self.tools: ToolBox = cache["tools"]
        self.peers: PeerCalls = cache["peers"]
        self.pairing = PairingStore(ctx.state, ctx.clock, ctx.random, ctx.audit)
        self.admin = PeerAdmin(ctx.state, ctx.servers, self.pairing, ctx.clock, ctx.random)
        self.ctx = ctx

    async def info(self, env_key: str) -> EnvInfo:
        envs = await load_environments(self.ctx.state)
        env = envs.resolve(env_key)
        standing = "paired" if env.kind == "local" else await self.admin.standing(env.key)
        running = env.kind == "local" or self.ctx.servers.running(env.name)  # type: ignore[union-attr]
        return EnvInfo(
            name=env.name,
            envKey=env.key,
            kind=env.kind,
            paired=standing == "paired",
            revoked=standing == "revoked",
            running=running,
            connected=env.kind == "local" or self.peers.is_connected(env.key),
        )

    async def all(self) -> list[EnvInfo]:
        envs = await load_environments(self.ctx.state)
        infos = [await self.info(e.key) for e in envs.environments]
        return sorted(infos, key=lambda i: (i.kind != "local", i.name))


def services(call: Call) -> _Services:
    """The environment services of the host that received ``call``."""
    return _Services(call)


@operation(
    "env.list",
    args=NoArgs,
    result=EnvList,
    audited=False,
    summary="List the local environment and every peer (no secrets).",
)
async def env_list(call: Call) -> Outcome:
    """Never refuses."""
    return Outcome(EnvList(environments=await services(call).all()))


@operation(
    "fleet.list",
    args=NoArgs,
    result=EnvList,
    audited=False,
    summary="List paired environments and whether each is reachable now.",
)
async def fleet_list(call: Call) -> Outcome:
    """Peers this host holds a bearer for, with ``running``/``connected``."""
    infos = [i for i in await services(call).all() if i.kind == "peer" and i.paired]
    return Outcome(EnvList(environments=infos))


@operation(
    "env.create",
    args=EnvCreateArgs,
    result=EnvAnswer,
    writes=True,
    summary="Create a peer environment served by a worker this host starts.",
)
async def env_create(call: Call) -> Outcome:
    """Refuses ``name-invalid``, ``already-exists``."""
    s = services(call)
    env_key = await s.admin.create(call.args.name)
    return Outcome(
        EnvAnswer(environment=await s.info(env_key)),
        details={"envKey": env_key, "name": call.args.name},
    )


@operation(
    "env.pair",
    args=EnvRef,
    result=EnvAnswer,
    writes=True,
    summary="Pair with a peer: it issues a bearer that only this host holds.",
)
async def env_pair(call: Call) -> Outcome:
    """Refuses ``unknown-environment``, ``host-token-required`` (from the peer)."""
    s = services(call)
    peer_logged = await s.admin.pair(call.args.env_key)
    return Outcome(
        EnvAnswer(environment=await s.info(call.args.env_key)),
        rule="pairing-completed",
        details={"envKey": call.args.env_key, "completionLogged": peer_logged},
    )


@operation(
    "env.unpair",
    args=EnvRef,
    result=EnvAnswer,
    writes=True,
    summary="Forget this host's bearer for a peer.",
)
async def env_unpair(call: Call) -> Outcome:
    """Refuses ``unknown-environment``."""
    s = services(call)
    await s.admin.unpair(call.args.env_key)
    await s.peers.close_all(call.args.env_key)
    return Outcome(
        EnvAnswer(environment=await s.info(call.args.env_key)),
        details={"envKey": call.args.env_key},
    )


@operation(
    "env.revoke",
    args=EnvRef,
    result=Revoked,
    writes=True,
    summary="Revoke a pairing now: the peer closes every channel that used it.",
)
async def env_revoke(call: Call) -> Outcome:
    """Audited with rule ``pairing-revoked``; refuses ``unknown-environment``."""
    s = services(call)
    done = await s.admin.revoke(call.args.env_key)
    result = Revoked(
        envKey=call.args.env_key,
        revoked=done.get("revoked", 0),
        channelsClosed=done.get("channelsClosed", 0),
        peerLogged=done.get("logged"),
    )
    return Outcome(
        result,
        rule="pairing-revoked",
        details={
            "envKey": call.args.env_key,
            "revoked": result.revoked,
            "channelsClosed": result.channels_closed,
            "peerLogged": result.peer_logged,
        },
    )


@operation(
    "tool.discover",
    args=EnvRef,
    result=ToolList,
    audited=False,
    summary="Describe the tools an environment offers (not a grant).",
)
async def tool_discover(call: Call) -> Outcome:
    """Refuses ``unknown-environment``, ``environment-not-paired``, ``environment-unreachable``."""
    s = services(call)
    env_key = call.args.env_key
    route = route_call(
        await load_environments(s.ctx.state), await load_pairings(s.ctx.state), env_key
    )
    if isinstance(route, LocalRoute):
        tools = [d.model_dump(mode="json", by_alias=True) for d in s.tools.describe()]
    else:
        describe = s.tools.registry.get(ToolBox.DESCRIBE)
        assert describe is not None
        envelope = CallEnvelope(
            envKey=env_key, tool=ToolBox.DESCRIBE, descriptorId=describe.descriptor_id, args={}
        )
        tools = (await s.peers.call(route, envelope)).result.get("tools", [])
    return Outcome(ToolList(envKey=env_key, tools=tools))


@operation(
    "tool.call",
    args=CallEnvelope,
    result=ToolCallResult,
    summary="Call a tool in an environment: {envKey, tool, descriptorId, args}.",
)
async def tool_call(call: Call) -> Outcome:
    """Refuses in the order of SPEC §6/§7: ``unknown-environment``, ``environment-not-paired``,
    then admission (``tool-unknown`` … ``confirmation-required``) here or at the peer, then the
    tool's own refusals; ``environment-unreachable`` when a peer is silent; ``pairing-revoked``
    or ``bearer-refused`` when the peer closes the channel."""
    s = services(call)
    envelope: CallEnvelope = call.args
    route = route_call(
        await load_environments(s.ctx.state), await load_pairings(s.ctx.state), envelope.env_key
    )
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=8)

    async def sink(chunk: bytes) -> None:
        await queue.put(chunk)

    async def work() -> ToolOutcome:
        if isinstance(route, LocalRoute):
            admitted = s.tools.admit(
                CallRequest(
                    tool=envelope.tool,
                    descriptor_id=envelope.descriptor_id,
                    args=envelope.args,
                    confirmed_by=HUMAN_UI if call.origin == HUMAN_UI else None,
                )
            )
            return await s.tools.run(admitted, actor=call.actor, sink=sink)
        answer = await s.peers.call(route, envelope, sink)
        return ToolOutcome(result=answer.result, receipt=answer.receipt)

    task = asyncio.ensure_future(work())

    async def stream() -> AsyncIterator[bytes]:
        while True:
            get = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({get, task}, return_when=asyncio.FIRST_COMPLETED)
            if get in done:
                yield get.result()
                continue
            get.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await get
            while not queue.empty():
                yield queue.get_nowait()
            return

    async def finish() -> ToolCallResult:
        outcome = task.result()
        return ToolCallResult(
            envKey=envelope.env_key,
            tool=envelope.tool,
            result=outcome.result,
            receipt=outcome.receipt,
        )

    details: dict[str, str | int | bool | None] = {
        "envKey": envelope.env_key,
        "tool": envelope.tool,
        "route": "local" if isinstance(route, LocalRoute) else "peer",
    }
    return Outcome(
        ToolCallResult(envKey=envelope.env_key, tool=envelope.tool, result={}),
        stream=stream(),
        finish=finish,
        details=details,
    )
