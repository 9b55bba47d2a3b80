"""Who may run a call here: the peer side of executing across environments (seed 002 §1, §4;
SPEC §6).

:func:`authorize_execute`, for every execute request, on HOST_DIR as it is now:

1. the ``envKey`` names an environment this host serves ....... else ``unknown-environment`` 404
2. a bearer was presented .................................... else ``unauthenticated-call`` 401
3. the bearer is not in ``revokedBearers`` ................... else ``pairing-revoked`` 403
4. the bearer was issued here and is bound to that ``envKey`` . else ``bearer-refused`` 403

The ``envKey`` is resolved before the bearer is looked at, so a removed or re-keyed
environment fails closed with ``unknown-environment`` whatever bearer comes with it. The
caller's side — where a call goes, and waiting for its answer — is :mod:`core.custody.route`
and :mod:`core.custody.peer_calls`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.custody.bearer import bearer_hash
from core.custody.environment import Environment, Environments, load_environments
from core.custody.pairing import Pairings, bearer_standing, load_pairings
from core.ports import HostState
from core.refusals import Code, Refused
from core.secret import Secret

__all__ = ["EXECUTE_ORDER", "Authorized", "authorize_execute", "authorize_from_state"]

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
