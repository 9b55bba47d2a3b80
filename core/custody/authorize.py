"""Executing across environments: who may run a call here (peer side), and where a call goes
and how it is waited for (caller side) — seed 002 §1 and §4, SPEC §6.

Peer side — :func:`authorize_execute`, for every execute request, on HOST_DIR as it is now:

1. the ``envKey`` names an environment this host serves ....... else ``unknown-environment`` 404
2. a bearer was presented .................................... else ``unauthenticated-call`` 401
3. the bearer is not in ``revokedBearers`` ................... else ``pairing-revoked`` 403
4. the bearer was issued here and is bound to that ``envKey`` . else ``bearer-refused`` 403

The ``envKey`` is resolved before the bearer is looked at, so a removed or re-keyed
environment fails closed with ``unknown-environment`` whatever bearer comes with it.

Caller side — :func:`route_call` resolves the ``envKey`` (``unknown-environment``), runs a
local environment's call here, and for a peer takes the outbound bearer this host holds
(``environment-not-paired`` 403 when there is none). :class:`PeerCaller` then says hello on the
channel, sends execute frames, matches answers, and gives up on a silent peer past its deadline
(``environment-unreachable`` 502, outcome ``unknown``). The bearer goes only into the hello
frame, to the peer that issued it; the page never sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.custody.bearer import bearer_hash
from core.custody.channels import Abandoned, LiveChannels
from core.custody.environment import Environment, Environments, load_environments
from core.custody.pairing import Pairings, bearer_standing, load_pairings
from core.custody.wire import (
    ExecuteRefusal,
    ExecuteRequest,
    ExecuteResult,
    HelloFrame,
    frame_text,
    parse_peer_message,
)
from core.ports import Clock, HostState, PeerChannel
from core.refusals import Code, Refused
from core.secret import Secret

__all__ = [
    "EXECUTE_ORDER",
    "Authorized",
    "LocalRoute",
    "PeerCaller",
    "PeerRoute",
    "authorize_execute",
    "authorize_from_state",
    "route_call",
]

EXECUTE_ORDER: tuple[Code, ...] = (
    Code.UNKNOWN_ENVIRONMENT,
    Code.UNAUTHENTICATED_CALL,
    Code.PAIRING_REVOKED,
    Code.BEARER_REFUSED,
)
"""The peer side's refusal codes, in the order they are checked."""


@dataclass(frozen=True, slots=True)
class Authorized:
    """An execute request that may proceed to admission: its environment and bearer hash."""

    env: Environment
    bearer_hash: str


def authorize_execute(
    environments: Environments, pairings: Pairings, env_key: object, bearer: Secret | None
) -> Authorized:
    """Decide whether a call for ``env_key`` presenting ``bearer`` may run here (see module
    docstring for the order). Raises :class:`~core.refusals.Refused`; messages never name the
    bearer or echo the ``envKey``."""
    env = environments.resolve_served(env_key)
    standing = bearer_standing(pairings, env.key, bearer)
    if standing == "missing":
        raise Refused(Code.UNAUTHENTICATED_CALL)
    if standing == "revoked":
        raise Refused(Code.PAIRING_REVOKED)
    if standing != "valid" or bearer is None:
        raise Refused(Code.BEARER_REFUSED)
    return Authorized(env, bearer_hash(bearer))


async def authorize_from_state(
    state: HostState, env_key: object, bearer: Secret | None
) -> Authorized:
    """:func:`authorize_execute` on ``environments.json`` and ``pairings.json`` read now."""
    return authorize_execute(
        await load_environments(state), await load_pairings(state), env_key, bearer
    )


@dataclass(frozen=True, slots=True)
class LocalRoute:
    """The call is for an environment this host serves: admit and run it here."""

    env: Environment


@dataclass(frozen=True, slots=True)
class PeerRoute:
    """The call goes to the peer ``env``, presenting ``bearer`` (a :class:`Secret`)."""

    env: Environment
    bearer: Secret


def route_call(
    environments: Environments, pairings: Pairings, env_key: object
) -> LocalRoute | PeerRoute:
    """Where a call for ``env_key`` goes. Refuses ``unknown-environment`` (404) for a key this
    host does not know and ``environment-not-paired`` (403) for a peer it holds no bearer for."""
    env = environments.resolve(env_key)
    if env.kind == "local":
        return LocalRoute(env)
    bearer = pairings.outbound_for(env.key)
    if bearer is None:
        raise Refused(Code.ENVIRONMENT_NOT_PAIRED, field="envKey")
    return PeerRoute(env, bearer)


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
