"""Pairing: ``pairings.json`` and the acts that change it — issue, complete, revoke (seed 002 §3,
SPEC §6).

Each host keeps one ``pairings.json`` in HOST_DIR with three lists:

- ``issued`` — bearers *this* host handed out, each bound to exactly one ``envKey`` this host
  serves, kept only as their sha256 hex;
- ``outbound`` — bearers other environments handed to this host, one per ``envKey``, kept as
  themselves because this host must present them (HOST_DIR is encrypted at rest, SPEC §1);
- ``revokedBearers`` — hashes of issued bearers that were revoked, so a later presentation is
  named ``pairing-revoked`` rather than the generic ``bearer-refused``.

The pure part is :class:`Pairings` (immutable; every change returns a new value) and
:func:`bearer_standing`. :class:`PairingStore` is the thin async part: check the host token,
load, change, store atomically, write the audit record, and hand back what the adapter must do
(for a revocation: which live channels to close).
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import Field, ValidationError

from core.audit import AuditLog
from core.custody.bearer import bearer_hash, bearer_ref, find_hash, is_bearer_shaped, new_bearer
from core.custody.channels import ChannelClose, LiveChannels
from core.custody.environment import is_env_key, load_environments
from core.custody.host_token import require_host_token
from core.model import Contract
from core.ports import Clock, HostState, Randomness
from core.refusals import Code, Refused
from core.secret import REVEAL, Secret
from core.vocabulary import EnvKey, Sha256Hex

__all__ = [
    "PAIRINGS_DOC",
    "BearerStanding",
    "Completed",
    "Issued",
    "IssuedBearer",
    "OutboundBearer",
    "PairingStore",
    "Pairings",
    "Revocation",
    "RevokedBearer",
    "bearer_standing",
    "bound_env",
    "load_pairings",
]

PAIRINGS_DOC = "pairings.json"
MAX_RECORDS = 4096

_ALIASED = Contract.model_config | {"serialize_by_alias": True, "hide_input_in_errors": True}


class IssuedBearer(Contract):
    """A bearer this host issued: its sha256 hex, the one ``envKey`` it is bound to, when (ms)."""

    model_config = _ALIASED

    hash: Sha256Hex
    env_key: EnvKey = Field(alias="envKey")
    issued_at: int = Field(alias="issuedAt", ge=0)


class OutboundBearer(Contract):
    """A bearer this host presents to the environment ``envKey`` (the value itself, a Secret)."""

    model_config = _ALIASED

    env_key: EnvKey = Field(alias="envKey")
    bearer: Secret
    recorded_at: int = Field(alias="recordedAt", ge=0)
    revoked_at: int | None = Field(default=None, alias="revokedAt", ge=0)
    """When the peer said it revoked this bearer (ms), or ``None``. The bearer is kept, so a
    call that still presents it is answered ``pairing-revoked`` by the peer (seed 002), and the
    page can say "revoked" rather than "paired"; pairing again replaces the record."""


class RevokedBearer(Contract):
    """A revoked issued bearer: its hash, the ``envKey`` it was bound to, when revoked (ms)."""

    model_config = _ALIASED

    hash: Sha256Hex
    env_key: EnvKey = Field(alias="envKey")
    revoked_at: int = Field(alias="revokedAt", ge=0)


class Pairings(Contract):
    """``pairings.json`` (see module docstring). ``repr`` and plain dumps redact every bearer."""

    model_config = _ALIASED

    schema_: Literal["voicebox-pairings-v1"] = Field(default="voicebox-pairings-v1", alias="schema")
    issued: tuple[IssuedBearer, ...] = Field(default=(), max_length=MAX_RECORDS)
    outbound: tuple[OutboundBearer, ...] = Field(default=(), max_length=MAX_RECORDS)
    revoked: tuple[RevokedBearer, ...] = Field(
        default=(), alias="revokedBearers", max_length=MAX_RECORDS
    )

    def with_issued(self, digest: str, env_key: str, now_ms: int) -> Pairings:
        """A copy that also accepts the bearer whose sha256 hex is ``digest``, for ``env_key``."""
        record = IssuedBearer(hash=digest, envKey=env_key, issuedAt=now_ms)
        return self.model_copy(update={"issued": (*self.issued, record)})

    def with_outbound(self, env_key: str, bearer: Secret, now_ms: int) -> Pairings:
        """A copy holding ``bearer`` as the one bearer presented to ``env_key`` (replacing any)."""
        record = OutboundBearer(envKey=env_key, bearer=bearer, recordedAt=now_ms)
        rest = tuple(o for o in self.outbound if o.env_key != env_key)
        return self.model_copy(update={"outbound": (*rest, record)})

    def outbound_for(self, env_key: object) -> Secret | None:
        """The bearer this host presents to ``env_key``, or ``None`` when not paired."""
        return next((o.bearer for o in self.outbound if o.env_key == env_key), None)

    def with_outbound_revoked(self, env_key: str, now_ms: int) -> Pairings:
        """A copy where the bearer this host presents to ``env_key`` is marked revoked by the
        peer at ``now_ms`` (kept, see :attr:`OutboundBearer.revoked_at`); unchanged when this
        host holds none or it is already marked."""
        outbound = tuple(
            o.model_copy(update={"revoked_at": now_ms})
            if o.env_key == env_key and o.revoked_at is None
            else o
            for o in self.outbound
        )
        return self.model_copy(update={"outbound": outbound})

    def outbound_standing(self, env_key: object) -> Literal["unpaired", "paired", "revoked"]:
        """Whether this host holds a bearer for ``env_key``, and whether the peer revoked it."""
        found = next((o for o in self.outbound if o.env_key == env_key), None)
        if found is None:
            return "unpaired"
        return "revoked" if found.revoked_at is not None else "paired"

    def with_revoked(self, env_key: str, now_ms: int) -> tuple[Pairings, tuple[str, ...]]:
        """A copy where every bearer issued for ``env_key`` is revoked; and their hashes.

        Also forgets the outbound bearer this host held for ``env_key``, if any: after a
        revocation neither side calls the other with the old pairing.
        """
        moving = tuple(i for i in self.issued if i.env_key == env_key)
        kept = tuple(i for i in self.issued if i.env_key != env_key)
        revoked = tuple(
            RevokedBearer(hash=i.hash, envKey=env_key, revokedAt=now_ms) for i in moving
        )
        outbound = tuple(o for o in self.outbound if o.env_key != env_key)
        changed = self.model_copy(
            update={"issued": kept, "revoked": (*self.revoked, *revoked), "outbound": outbound}
        )
        return changed, tuple(i.hash for i in moving)

    def with_bearer_revoked(self, digest: str, now_ms: int) -> Pairings:
        """A copy where the one issued bearer whose hash is ``digest`` is revoked (its holder
        gave it up); unchanged when no such bearer is issued."""
        moving = tuple(i for i in self.issued if i.hash == digest)
        kept = tuple(i for i in self.issued if i.hash != digest)
        revoked = tuple(
            RevokedBearer(hash=i.hash, envKey=i.env_key, revokedAt=now_ms) for i in moving
        )
        return self.model_copy(update={"issued": kept, "revoked": (*self.revoked, *revoked)})

    def to_json(self) -> bytes:
        """The document's bytes for HOST_DIR only: outbound bearers are written in clear."""
        return self.model_dump_json(by_alias=True, context={REVEAL: True}).encode("utf-8")


BearerStanding = Literal["missing", "revoked", "valid", "foreign", "unknown"]
"""How a presented bearer stands against ``pairings.json`` for one ``envKey``.

``missing``: none presented; ``revoked``: its hash is in ``revokedBearers``; ``valid``: issued
and bound to that ``envKey``; ``foreign``: issued but bound to another ``envKey``; ``unknown``:
never issued here (or not bearer-shaped).
"""


def bearer_standing(
    pairings: Pairings, env_key: str | None, bearer: Secret | None
) -> BearerStanding:
    """Classify ``bearer`` for ``env_key`` (``None`` = any environment: the hello gate).

    Revocation is looked at before binding: a revoked bearer is ``revoked`` whichever
    environment it is presented for. Every stored hash is compared in constant time.
    """
    if bearer is None or not bearer:
        return "missing"
    digest = bearer_hash(bearer)
    revoked_at = find_hash((r.hash for r in pairings.revoked), digest)
    issued_at = find_hash((i.hash for i in pairings.issued), digest)
    if revoked_at is not None:
        return "revoked"
    if issued_at is None or not is_bearer_shaped(bearer):
        return "unknown"
    if env_key is None or pairings.issued[issued_at].env_key == env_key:
        return "valid"
    return "foreign"


def bound_env(pairings: Pairings, bearer: Secret) -> str | None:
    """The ``envKey`` an issued, unrevoked ``bearer`` is bound to, or ``None``."""
    if bearer_standing(pairings, None, bearer) != "valid":
        return None
    index = find_hash((i.hash for i in pairings.issued), bearer_hash(bearer))
    return None if index is None else pairings.issued[index].env_key


async def load_pairings(state: HostState) -> Pairings:
    """Read ``pairings.json`` from HOST_DIR (empty when absent); unreadable → ``storage-failed``."""
    raw = await state.load(PAIRINGS_DOC)
    if raw is None:
        return Pairings()
    try:
        return Pairings.model_validate_json(raw)
    except ValidationError:
        raise Refused(Code.STORAGE_FAILED, "pairings.json does not parse.") from None


class Issued(Contract):
    """The answer to issue: the new bearer and the audit number.

    The bearer dumps as ``[redacted]``; only the answer to the pairing peer that asked for it is
    dumped with ``context={REVEAL: True}``. It is never shown to a page.
    """

    model_config = _ALIASED

    env_key: str = Field(alias="envKey")
    bearer: Secret
    logged: int | None


class Completed(Contract):
    """The answer to complete: which ``envKey`` is now paired, and the audit number."""

    model_config = _ALIASED

    env_key: str = Field(alias="envKey")
    logged: int | None


class Revocation(Contract):
    """The answer to revoke (seed 002 §3).

    ``revoked`` counts the bearers moved to ``revokedBearers``; ``logged`` is the audit sequence
    number of the ``pairing-revoked`` record, or ``None`` with ``log_refused`` naming why it
    could not be written (the revocation itself stands): ``"root-not-declared"`` when this host
    keeps no audit (seed 002 §3), else the refusal code the audit gave. ``closes`` are the live
    channels the adapter must close now, each with the pending calls to answer
    ``pairing-revoked``.
    """

    model_config = _ALIASED

    env_key: str = Field(alias="envKey")
    revoked: int
    logged: int | None
    log_refused: str | None = Field(default=None, alias="logRefused")
    closes: tuple[ChannelClose, ...] = ()


class PairingStore:
    """Issue, complete and revoke pairings over HOST_DIR (see module docstring).

    ``audit`` receives one ``recorded`` record per act (rules ``pairing-issued``,
    ``pairing-completed``, ``pairing-revoked``); refusals are raised, and audited by whoever
    catches them (the pipeline). Acts are serialised: one read-change-store at a time.
    """

    def __init__(
        self, state: HostState, clock: Clock, random: Randomness, audit: AuditLog | None = None
    ) -> None:
        self._state = state
        self._clock = clock
        self._random = random
        self._audit = audit
        self._lock = asyncio.Lock()

    async def load(self) -> Pairings:
        """The current ``pairings.json``."""
        return await load_pairings(self._state)

    async def _store(self, pairings: Pairings) -> None:
        await self._state.store(PAIRINGS_DOC, pairings.to_json())

    async def _log(
        self, op: str, rule: str, actor: str, details: dict[str, str | int | bool | None]
    ) -> tuple[int | None, str | None]:
        if self._audit is None:
            return None, "root-not-declared"
        try:
            seq = await self._audit.append(
                actor=actor, op=op, decision="recorded", rule=rule, details=details
            )
        except Refused as exc:
            return None, str(exc.code)
        return seq, None

    async def issue(
        self, host_token: Secret | None, env_key: str, *, actor: str = "operator"
    ) -> Issued:
        """Issue a bearer bound to ``env_key``, an environment this host serves.

        Order: host token (``host-token-required`` 403), then ``envKey``
        (``unknown-environment`` 404). The bearer is returned once and stored only hashed.
        """
        await require_host_token(self._state, host_token)
        async with self._lock:
            (await load_environments(self._state)).resolve_served(env_key)
            bearer = new_bearer(self._random)
            digest = bearer_hash(bearer)
            await self._store(
                (await self.load()).with_issued(digest, env_key, self._clock.now_ms())
            )
        logged, _ = await self._log(
            "pairing.issue",
            "pairing-issued",
            actor,
            {"envKey": env_key, "bearer": bearer_ref(digest)},
        )
        return Issued(envKey=env_key, bearer=bearer, logged=logged)

    async def complete(
        self, host_token: Secret | None, env_key: str, bearer: Secret, *, actor: str = "operator"
    ) -> Completed:
        """Record ``bearer`` as the one this host presents to the peer ``env_key``.

        Order: host token (``host-token-required``), ``envKey`` must be a known peer
        (``unknown-environment``), the bearer must have a bearer's form (``bearer-refused``).
        """
        await require_host_token(self._state, host_token)
        async with self._lock:
            env = (await load_environments(self._state)).resolve(env_key)
            if env.kind != "peer":
                raise Refused(
                    Code.UNKNOWN_ENVIRONMENT, "That envKey is not a peer.", field="envKey"
                )
            if not is_bearer_shaped(bearer):
                raise Refused(Code.BEARER_REFUSED, "That is not a pairing bearer.", field="bearer")
            await self._store(
                (await self.load()).with_outbound(env_key, bearer, self._clock.now_ms())
            )
        logged, _ = await self._log(
            "pairing.complete",
            "pairing-completed",
            actor,
            {"envKey": env_key, "bearer": bearer_ref(bearer_hash(bearer))},
        )
        return Completed(envKey=env_key, logged=logged)

    async def revoke(
        self,
        host_token: Secret | None,
        env_key: str,
        live: LiveChannels | None = None,
        *,
        actor: str = "operator",
    ) -> Revocation:
        """Revoke every pairing with ``env_key`` now (seed 002 §3).

        Requires the host token (``host-token-required``). Moves every bearer issued for
        ``env_key`` to ``revokedBearers`` (durable before anything else happens), forgets the
        outbound bearer for it, writes the ``pairing-revoked`` audit record, and returns the
        channel closes the adapter must carry out: every live channel authenticated with a
        revoked bearer, closed 1008 ``pairing-revoked``, its pending calls abandoned with
        ``pairing-revoked``. Revoking an ``envKey`` with nothing issued is not an error.
        """
        await require_host_token(self._state, host_token)
        if not is_env_key(env_key):
            raise Refused(Code.UNKNOWN_ENVIRONMENT, field="envKey")
        async with self._lock:
            changed, hashes = (await self.load()).with_revoked(env_key, self._clock.now_ms())
            await self._store(changed)
        closes = live.revoke(hashes) if live is not None else ()
        logged, log_refused = await self._log(
            "pairing.revoke",
            "pairing-revoked",
            actor,
            {
                "envKey": env_key,
                "revoked": len(hashes),
                "bearers": ",".join(bearer_ref(h) for h in hashes)[:1000],
                "channelsClosed": len(closes),
            },
        )
        return Revocation(
            envKey=env_key,
            revoked=len(hashes),
            logged=logged,
            logRefused=log_refused,
            closes=closes,
        )

    async def release(
        self, env_key: str, digest: str, live: LiveChannels | None = None, *, actor: str
    ) -> Revocation:
        """Revoke the one bearer whose hash is ``digest`` (bound to ``env_key``), at its
        holder's request (issue 15: a browser host revoking its own pairing, which holds no
        host token). The caller authorised the bearer first (``authorize_execute``); the rest
        is :meth:`revoke`'s: durable first, then the channels authenticated with it are closed
        1008 ``pairing-revoked``, the ``pairing-revoked`` audit record (``by: "holder"``)."""
        async with self._lock:
            changed = (await self.load()).with_bearer_revoked(digest, self._clock.now_ms())
            await self._store(changed)
        closes = live.revoke((digest,)) if live is not None else ()
        logged, log_refused = await self._log(
            "pairing.revoke",
            "pairing-revoked",
            actor,
            {
                "envKey": env_key,
                "revoked": 1,
                "bearers": bearer_ref(digest),
                "channelsClosed": len(closes),
                "by": "holder",
            },
        )
        return Revocation(
            envKey=env_key, revoked=1, logged=logged, logRefused=log_refused, closes=closes
        )
