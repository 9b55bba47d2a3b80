"""Where a call goes: the caller's side of executing across environments (seed 002 §1, §4;
SPEC §6).

:func:`route_call` resolves the ``envKey`` (``unknown-environment`` 404 for a key this host does
not know); a local environment's call runs here (:class:`LocalRoute`); a peer's goes to it with
the outbound bearer this host holds (:class:`PeerRoute`; ``environment-not-paired`` 403 when
there is none). The bearer goes only into the hello frame, to the peer that issued it
(:mod:`core.custody.peer_calls`); the page never sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.custody.environment import Environment, Environments
from core.custody.pairing import Pairings
from core.refusals import Code, Refused
from core.secret import Secret

__all__ = ["LocalRoute", "PeerRoute", "route_call"]


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
