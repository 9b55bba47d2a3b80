"""Fleet contact: messages to an agent, addressed ``environmentKey/agentId`` (seed 002 §4
"fleet"; SPEC §6).

Each environment keeps its agents' inbox in its host state (``inbox.json``: the newest
:data:`MAX_MESSAGES` messages, each with a content id). ``fleet.contact`` routes a message:
to this host's own inbox when the ``environmentKey`` is the local one, else to the paired peer
as the built-in tool ``contact.deliver`` — over the same admitted, authenticated channel as
any call (``environment-not-paired``, ``pairing-revoked``… apply). Delivery is not execution:
nothing runs because a message arrived.
"""

from __future__ import annotations

import hashlib

from pydantic import ConfigDict, Field

from core.custody.environment import load_environments
from core.custody.held_secrets import HELD_IN_MESSAGE, refuse_held_in_text
from core.custody.pairing import load_pairings
from core.custody.route import PeerRoute, route_call
from core.custody.wire import CallEnvelope
from core.host.env_ops import services
from core.host.operations import Call, Outcome
from core.model import Contract, canonical_json

__all__ = ["AGENT_ID_PATTERN", "INBOX_DOC", "Inbox", "InboxMessage"]

INBOX_DOC = "inbox.json"
MAX_MESSAGES = 1000
AGENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class InboxMessage(Contract):
    """One message: content id (sha256, 16 hex), recipient, text, sender environment, time."""

    id: str
    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    text: str = Field(max_length=20_000)
    from_env: str = Field(max_length=64)
    at: int = Field(ge=0, description="Milliseconds since the epoch.")


class Inbox(Contract):
    """``inbox.json``: the newest messages, oldest first."""

    messages: list[InboxMessage] = Field(default_factory=list, max_length=MAX_MESSAGES)


class DeliverArgs(Contract):
    """``inbox.deliver``: a message for ``agent_id`` in this environment."""

    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    text: str = Field(min_length=1, max_length=20_000)


class ContactArgs(Contract):
    """``fleet.contact``: ``environmentKey/agentId`` and the text."""

    environment_key: str = Field(alias="environmentKey", max_length=64)
    agent_id: str = Field(alias="agentId", pattern=AGENT_ID_PATTERN, title="Agent id")
    text: str = Field(min_length=1, max_length=20_000, title="Message")

    model_config = ConfigDict(populate_by_name=True)


class ReadArgs(Contract):
    """``inbox.read``: optionally one agent's messages only."""

    agent_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)


class Delivered(Contract):
    """Where a message went and its content id. Delivery is not execution."""

    environment_key: str = Field(alias="environmentKey")
    agent_id: str = Field(alias="agentId")
    id: str
    route: str

    model_config = ConfigDict(serialize_by_alias=True, populate_by_name=True)


async def _load(call: Call[Contract]) -> Inbox:
    raw = await call.ctx.state.load(INBOX_DOC)
    return Inbox() if raw is None else Inbox.model_validate_json(raw)


async def inbox_deliver(call: Call[DeliverArgs]) -> Outcome:
    """Appends (dropping the oldest past 1000); the sender is the calling actor. Refuses
    ``sanitizer_refused`` (field ``text``) when the text holds the value of a secret this host
    keeps — agents read their inbox, as they read a letter (``mailbox.send``'s law)."""
    await refuse_held_in_text(
        call.ctx.secrets, call.ctx.state, {"text": call.args.text}, HELD_IN_MESSAGE
    )
    inbox = await _load(call)
    at = call.ctx.clock.now_ms()
    body = {"agent_id": call.args.agent_id, "text": call.args.text, "from": call.actor, "at": at}
    message = InboxMessage(
        id=hashlib.sha256(canonical_json(body)).hexdigest()[:16],
        agent_id=call.args.agent_id,
        text=call.args.text,
        from_env=call.actor[:64],
        at=at,
    )
    kept = [*inbox.messages, message][-MAX_MESSAGES:]
    await call.ctx.state.store(INBOX_DOC, Inbox(messages=kept).model_dump_json().encode())
    return Outcome(message, details={"agentId": message.agent_id, "id": message.id})


async def inbox_read(call: Call[ReadArgs]) -> Outcome:
    """Never refuses."""
    inbox = await _load(call)
    wanted = call.args.agent_id
    return Outcome(Inbox(messages=[m for m in inbox.messages if wanted in (None, m.agent_id)]))


async def fleet_contact(call: Call[ContactArgs]) -> Outcome:
    """Routes only (so it does not hold the write lock itself): the delivery it causes is the
    write — ``inbox.deliver`` here, run through the pipeline as part of this call, or
    ``contact.deliver`` at the peer — and is admitted, SAFE-mode checked and audited there.
    Refuses ``unknown-environment``, ``environment-not-paired``, ``pairing-revoked``,
    ``environment-unreachable`` (peer route) like any call, and ``sanitizer_refused`` (field
    ``text``) before routing when the text holds the value of a secret this host keeps: the
    peer would store it in its agent's inbox, out of this host's redaction's reach."""
    args = call.args
    state = call.ctx.state
    await refuse_held_in_text(call.ctx.secrets, state, {"text": args.text}, HELD_IN_MESSAGE)
    env = (await load_environments(state)).resolve(args.environment_key)
    if env.kind == "local":
        ran = await call.run("inbox.deliver", DeliverArgs(agent_id=args.agent_id, text=args.text))
        assert isinstance(ran.result, InboxMessage)
        message_id, route = ran.result.id, "local"
    else:
        s = services(call)
        entry = s.tools.registry.get("contact.deliver")
        assert entry is not None
        peer = route_call(await load_environments(state), await load_pairings(state), env.key)
        assert isinstance(peer, PeerRoute)
        envelope = CallEnvelope(
            envKey=env.key,
            tool="contact.deliver",
            descriptorId=entry.descriptor_id,
            args={"agent_id": args.agent_id, "text": args.text},
        )
        result = await s.peers.call(peer, envelope)
        message_id, route = str(result.result.get("id", "")), "peer"
    return Outcome(
        Delivered(environment_key=env.key, agent_id=args.agent_id, id=message_id, route=route),
        details={"environmentKey": env.key, "agentId": args.agent_id, "route": route},
    )
