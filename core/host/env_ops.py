"""Environments, pairing and tool calls for the page (SPEC §4, §6, §7; seed 002, seed 003).

- ``env.list`` / ``fleet.list``: the local environment and each peer — name, envKey, paired,
  running, connected. No token or bearer ever appears.
- ``env.create``, ``env.pair``, ``env.unpair``, ``env.revoke``: the local operator's acts
  (:mod:`core.custody.peer_admin`). ``env.revoke`` is audited here with rule ``pairing-revoked`` and
  the answer's ``logged`` is that record's number; the peer audits it too.
- ``env.add {url, code}`` (issue 15): add a remote environment — a server on another machine
  — by its URL and the one-time code its operator minted; the host claims the code and keeps
  the bearer. ``env.remove {envKey}`` forgets a remote. A remote is listed with its origin,
  fingerprint, state (``idle``/``connected``/``reconnecting``/``unreachable``/``revoked``) and
  last contact.
- ``tool.discover {envKey}``: discovery of that environment's tools — schema, effect class,
  receipt rule, confirmation. A description, never an entitlement.
- ``tool.call {envKey, tool, descriptorId, args}``: the seed's call envelope. The host resolves
  the envKey first (``unknown-environment``), then runs the call here (admission on a fresh
  policy snapshot) or forwards it to the paired peer with the bearer it holds
  (``environment-not-paired`` without one). Streaming tools (an archive export) stream.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from core.custody.environment import load_environments
from core.custody.held_secrets import (
    HELD_IN_COMMAND,
    HELD_IN_TOOL_ARGS,
    HELD_IN_URL,
    refuse_held_in_text,
)
from core.custody.pair_code import env_fingerprint
from core.custody.pairing import load_pairings
from core.custody.peer_admin import PeerAdmin
from core.custody.peer_calls import PeerCalls
from core.custody.remote import MAX_COMMAND_OUTPUT_CHARS, CommandRun, FencedCommand, RemoteState
from core.custody.route import LocalRoute, route_call
from core.custody.wire import CallEnvelope
from core.gestures import HUMAN_UI
from core.host.operations import Call, Outcome
from core.model import Contract, JsonOf, NoArgs
from core.ports import EnvironmentServers
from core.refusals import Code, Refused
from core.secret import Secret
from core.tools.admission import CallRequest
from core.tools.builtin import DESCRIBE
from core.tools.receipts import HostReceipt, no_receipt_note
from core.tools.registry import Descriptor
from core.tools.runner import Sink, ToolOutcome, ToolRunner
from core.vocabulary import ProjectId

__all__ = ["services"]


class EnvRef(Contract):
    """Arguments naming one environment by its envKey."""

    env_key: str = Field(alias="envKey", max_length=64)

    model_config = ConfigDict(populate_by_name=True)


class EnvCreateArgs(Contract):
    """``env.create``: the new environment's name (``[a-z][a-z0-9-]{0,31}``)."""

    name: str = Field(max_length=64, title="Environment name")


class EnvAddArgs(Contract):
    """``env.add``: a remote server's URL (``http(s)://host[:port]``) and the one-time pairing
    code its operator minted (``voicebox-env pair-code``). The code is a claim ticket, never
    stored here, never in the audit."""

    model_config = ConfigDict(hide_input_in_errors=True)

    url: str = Field(min_length=1, max_length=300)
    code: Secret


class EnvCommandArgs(Contract):
    """``env.command``: one fenced command in a project of a remote environment (seed 002 §4;
    docs/remote.md). ``command`` is ``exec`` (``argv``: the program and its arguments, never a
    shell string; ``time_limit_ms`` may only lower the operator's limit), ``git/init``, or
    ``git/config`` (``key`` one of the keys the server allows, ``value``)."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = Field(alias="envKey", max_length=64)
    project: ProjectId = Field(description="The remote project's id.")
    command: FencedCommand
    argv: list[Annotated[str, Field(max_length=4096)]] | None = Field(
        default=None, min_length=1, max_length=256
    )
    key: str | None = Field(default=None, max_length=64)
    value: str | None = Field(default=None, max_length=1000)
    time_limit_ms: int | None = Field(default=None, alias="timeLimitMs", ge=1, le=3_600_000)


class CommandRan(CommandRun):
    """What a fenced command did (:class:`core.custody.remote.CommandRun`), which environment
    ran it, ``output`` — the kept output as text (UTF-8, undecodable bytes replaced; at most
    :data:`~core.custody.remote.MAX_COMMAND_OUTPUT_CHARS` characters) — and ``peer_logged``,
    the remote's own audit number for the run."""

    env_key: str = Field(alias="envKey")
    command: FencedCommand
    output: str
    peer_logged: int | None = Field(alias="peerLogged")


class RemoteInfo(Contract):
    """What the page sees of a remote environment (no secret): its origin, the fingerprint of
    its envKey (to compare with its operator's), its state and last contact (ms)."""

    origin: str
    fingerprint: str
    state: RemoteState
    last_contact: int | None = Field(alias="lastContact")

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)


class EnvInfo(Contract):
    """One environment as the page sees it (no secret); ``remote`` for a remote one."""

    name: str
    env_key: str = Field(alias="envKey")
    kind: str
    paired: bool
    revoked: bool = False
    """The peer revoked the bearer this host holds: calls are refused ``pairing-revoked``
    until it pairs again (``paired`` is then false)."""
    running: bool
    connected: bool
    remote: RemoteInfo | None = None

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)


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

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)


class ToolList(Contract):
    """Discovery of one environment's tools."""

    env_key: str = Field(alias="envKey")
    tools: list[Annotated[dict[str, Any], JsonOf(Descriptor)]]

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)


class ToolCallResult(Contract):
    """A tool call's outcome: its result and, for an effect the host performed, its receipt;
    without one, ``note`` says what the result is (:func:`core.tools.receipts.no_receipt_note`:
    the tool's own account, here or at a paired environment)."""

    env_key: str = Field(alias="envKey")
    tool: str
    result: dict[str, Any]
    receipt: HostReceipt | None = None
    note: str | None = Field(default=None, description="What a result with no receipt proves.")

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)


class _Services:
    def __init__(self, call: Call[Contract]) -> None:
        peers = call.host.peers
        if peers is None:
            raise Refused(Code.OPERATION_UNKNOWN, "This host runs no environment servers.")
        self.tools: ToolRunner = call.host.tools
        self.peers: PeerCalls = peers.calls
        self.admin: PeerAdmin = peers.admin
        self.servers: EnvironmentServers = peers.servers
        self.ctx = call.ctx

    async def info(self, env_key: str) -> EnvInfo:
        envs = await load_environments(self.ctx.state)
        env = envs.resolve(env_key)
        standing = "paired" if env.kind == "local" else await self.admin.standing(env.key)
        connected = env.kind == "local" or self.peers.is_connected(env.key)
        remote = None
        if env.origin is not None:
            state = self.peers.remote_state(env.key)
            remote = RemoteInfo(
                origin=env.origin,
                fingerprint=env_fingerprint(env.key),
                state="revoked" if standing == "revoked" else state,
                last_contact=self.peers.last_contact(env.key),
            )
        running = env.kind == "local" or connected or self.servers.running(env.name)
        return EnvInfo(
            remote=remote,
            name=env.name,
            env_key=env.key,
            kind=env.kind,
            paired=standing == "paired",
            revoked=standing == "revoked",
            running=running,
            connected=connected,
        )

    async def all(self) -> list[EnvInfo]:
        envs = await load_environments(self.ctx.state)
        infos = [await self.info(e.key) for e in envs.environments]
        return sorted(infos, key=lambda i: (i.kind != "local", i.name))


def services(call: Call[Contract]) -> _Services:
    """The environment services of the host that received ``call``."""
    return _Services(call)


async def env_list(call: Call[NoArgs]) -> Outcome:
    """Never refuses."""
    return Outcome(EnvList(environments=await services(call).all()))


async def fleet_list(call: Call[NoArgs]) -> Outcome:
    """Peers this host holds a bearer for, with ``running``/``connected``."""
    infos = [i for i in await services(call).all() if i.kind == "peer" and i.paired]
    return Outcome(EnvList(environments=infos))


async def env_create(call: Call[EnvCreateArgs]) -> Outcome:
    """Refuses ``name-invalid``, ``already-exists``."""
    s = services(call)
    env_key = await s.admin.create(call.args.name)
    return Outcome(
        EnvAnswer(environment=await s.info(env_key)),
        details={"envKey": env_key, "name": call.args.name},
    )


async def env_add(call: Call[EnvAddArgs]) -> Outcome:
    """Refuses ``args-invalid`` (``url``), ``environment-unreachable``, ``pairing-code-refused``,
    ``rate-limited``, ``peer-answer-invalid``, ``already-exists``, ``sanitizer_refused``
    (``url`` holding a secret this host keeps: refused as typed, before the address is read
    and lower-cased into a sentence). Audited with rule ``pairing-completed``; the details
    name the envKey and origin, never the code."""
    await refuse_held_in_text(call.ctx.secrets, call.ctx.state, {"url": call.args.url}, HELD_IN_URL)
    s = services(call)
    env_key = await s.admin.add_remote(call.args.url, call.args.code)
    info = await s.info(env_key)
    return Outcome(
        EnvAnswer(environment=info),
        rule="pairing-completed",
        details={
            "envKey": env_key,
            "origin": info.remote.origin if info.remote else None,
            "name": info.name,
        },
    )


async def env_remove(call: Call[EnvRef]) -> Outcome:
    """Forget a remote environment here; refuses ``unknown-environment`` (not a remote)."""
    s = services(call)
    await s.admin.remove_remote(call.args.env_key)
    await s.peers.close_all(call.args.env_key)
    s.peers.forget(call.args.env_key)
    infos = await s.all()
    return Outcome(EnvList(environments=infos), details={"envKey": call.args.env_key})


async def env_pair(call: Call[EnvRef]) -> Outcome:
    """Refuses ``unknown-environment``, ``host-token-required`` (from the peer)."""
    s = services(call)
    peer_logged = await s.admin.pair(call.args.env_key)
    return Outcome(
        EnvAnswer(environment=await s.info(call.args.env_key)),
        rule="pairing-completed",
        details={"envKey": call.args.env_key, "completionLogged": peer_logged},
    )


async def env_unpair(call: Call[EnvRef]) -> Outcome:
    """Refuses ``unknown-environment``."""
    s = services(call)
    await s.admin.unpair(call.args.env_key)
    await s.peers.close_all(call.args.env_key)
    return Outcome(
        EnvAnswer(environment=await s.info(call.args.env_key)),
        details={"envKey": call.args.env_key},
    )


async def env_command(call: Call[EnvCommandArgs]) -> Outcome:
    """Run a fenced command in a remote environment through the bearer this host holds; the
    server admits, runs and audits it; the host audits that it asked (rule ``command-ran``;
    details: envKey, project, command, argv, exit status, output sha256 — never the output).
    Refuses ``args-invalid`` (``argv`` for exec, ``key``/``value`` for git/config, missing or
    given where they do not belong), ``sanitizer_refused`` (field ``argv`` or ``value``: it
    holds the value of a secret this host keeps — the server would write it to its audit, and
    git config to the project's ``.git/config``), and what :meth:`PeerAdmin.fenced` refuses."""
    a = call.args
    needs = {"exec": ("argv",), "git/init": (), "git/config": ("key", "value")}[a.command]
    for field in ("argv", "key", "value", "time_limit_ms"):
        given = getattr(a, field) is not None
        wanted = field in needs or (field == "time_limit_ms" and a.command == "exec")
        if field in needs and not given:
            raise Refused(Code.ARGS_INVALID, f"{a.command} needs {field}.", field=field)
        if given and not wanted:
            raise Refused(Code.ARGS_INVALID, f"{a.command} takes no {field}.", field=field)
    await refuse_held_in_text(
        call.ctx.secrets,
        call.ctx.state,
        {"argv": "\n".join(a.argv) if a.argv else None, "value": a.value},
        HELD_IN_COMMAND,
    )
    body: dict[str, Any] = {"project": a.project}
    if a.command == "exec":
        body["argv"] = a.argv
        if a.time_limit_ms is not None:
            body["timeLimitMs"] = a.time_limit_ms
    elif a.command == "git/config":
        body |= {"key": a.key, "value": a.value}
    answer = await services(call).admin.fenced(a.env_key, a.command, body)
    kept = base64.b64decode(answer.output_b64, validate=True) if answer.output_b64 else b""
    ran = CommandRan(
        **answer.model_dump(exclude={"logged"}),
        env_key=a.env_key,
        command=a.command,
        output=kept.decode("utf-8", "replace")[:MAX_COMMAND_OUTPUT_CHARS],
        peer_logged=answer.logged,
    )
    return Outcome(
        ran,
        rule="command-ran",
        details={
            "envKey": a.env_key,
            "project": a.project,
            "command": a.command,
            "argv": " ".join(a.argv or ())[:500] or None,
            "exitStatus": ran.exit_status,
            "outputSha256": ran.output_sha256,
            "peerLogged": ran.peer_logged,
        },
    )


async def env_revoke(call: Call[EnvRef]) -> Outcome:
    """Audited with rule ``pairing-revoked``; refuses ``unknown-environment``."""
    s = services(call)
    done = await s.admin.revoke(call.args.env_key)
    if await s.admin.is_remote(call.args.env_key):
        await s.peers.close_all(call.args.env_key)  # the next call's hello hears the answer
    result = Revoked(
        env_key=call.args.env_key,
        revoked=done.get("revoked", 0),
        channels_closed=done.get("channelsClosed", 0),
        peer_logged=done.get("logged"),
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


async def tool_discover(call: Call[EnvRef]) -> Outcome:
    """Refuses ``unknown-environment``, ``environment-not-paired``, ``environment-unreachable``."""
    s = services(call)
    env_key = call.args.env_key
    route = route_call(
        await load_environments(s.ctx.state), await load_pairings(s.ctx.state), env_key
    )
    if isinstance(route, LocalRoute):
        tools = [d.model_dump(mode="json", by_alias=True) for d in s.tools.describe()]
    else:
        describe = s.tools.registry.get(DESCRIBE)
        assert describe is not None
        envelope = CallEnvelope(
            envKey=env_key, tool=DESCRIBE, descriptorId=describe.descriptor_id, args={}
        )
        tools = (await s.peers.call(route, envelope)).result.get("tools", [])
    return Outcome(ToolList(env_key=env_key, tools=tools))


def _strings(value: Any) -> list[str]:
    """Every text in a JSON value (its object keys too), depth first; the depth is the
    protocol parser's bound."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


async def tool_call(call: Call[CallEnvelope]) -> Outcome:
    """Refuses in the order of SPEC §6/§7: ``unknown-environment``, ``environment-not-paired``,
    then admission (``tool-unknown`` … ``confirmation-required``) here or at the peer, then the
    tool's own refusals; ``environment-unreachable`` when a peer is silent; ``pairing-revoked``
    or ``bearer-refused`` when the peer closes the channel; ``sanitizer_refused`` (field
    ``args``) before a peer call whose arguments' text holds the value of a secret this host
    keeps (the peer stores what its tools are given — ``contact.deliver`` an inbox message —
    out of this host's redaction's reach; a local tool runs its own operation's check)."""
    s = services(call)
    envelope: CallEnvelope = call.args
    route = route_call(
        await load_environments(s.ctx.state), await load_pairings(s.ctx.state), envelope.env_key
    )
    if not isinstance(route, LocalRoute):
        texts = "\n".join(_strings(envelope.args))
        await refuse_held_in_text(s.ctx.secrets, s.ctx.state, {"args": texts}, HELD_IN_TOOL_ARGS)

    async def write(sink: Sink) -> ToolCallResult:
        """The call itself, run by the pipeline's streaming step (Outcome.writer): a streaming
        tool's chunks go to the transport's sink in order as they are produced, here or at the
        peer; the answer follows them."""
        if isinstance(route, LocalRoute):
            admitted = s.tools.admit(
                CallRequest(
                    tool=envelope.tool,
                    descriptor_id=envelope.descriptor_id,
                    args=envelope.args,
                    confirmed_by=HUMAN_UI if call.human else None,
                )
            )
            outcome = await s.tools.run(admitted, actor=call.actor, sink=sink)
        else:
            answer = await s.peers.call(route, envelope, sink)
            outcome = ToolOutcome(result=answer.result, receipt=answer.receipt)
        return ToolCallResult(
            env_key=envelope.env_key,
            tool=envelope.tool,
            result=outcome.result,
            receipt=outcome.receipt,
            note=None
            if outcome.receipt is not None
            else no_receipt_note(here=isinstance(route, LocalRoute)),
        )

    details: dict[str, str | int | bool | None] = {
        "envKey": envelope.env_key,
        "tool": envelope.tool,
        "route": "local" if isinstance(route, LocalRoute) else "peer",
    }
    return Outcome(
        ToolCallResult(env_key=envelope.env_key, tool=envelope.tool, result={}),
        writer=write,
        details=details,
    )
