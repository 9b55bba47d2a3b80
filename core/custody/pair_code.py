"""One-time pairing codes: a claim ticket that lets a host obtain a bearer without anyone
carrying the bearer by hand (seed 002 §3, extended by issue 15; SPEC §6).

The seed has an operator carry the ``vbx_`` bearer from the environment to the host. In the
browser that would put the bearer in the page. Instead the environment's operator mints a
**pairing code** here (``voicebox-env pair-code``); a person types it into the page; the
*host worker* claims it from the environment and receives the bearer directly. The code is a
ticket, not a credential:

- **bound** to one ``envKey`` this environment serves (``unknown-environment`` otherwise);
- **short-lived**: it expires :data:`CODE_TTL_MS` after it was minted;
- **single use**: a successful claim removes it before the bearer is issued;
- **50 bits** of CSPRNG output (:data:`CODE_CHARS` Crockford base32 characters, shown as two
  groups of five: ``K7Q2M-9XDHT``); only its sha256 is stored;
- **burnt** after :data:`MAX_FAILURES` failed claims: a claim naming no live code counts
  against every live code of this environment (a claimant names no code but by its value, so
  a wrong guess cannot be pinned on one), and a code that reaches the limit is removed;
- **rate limited**: at most :data:`MAX_CLAIMS_PER_WINDOW` claims (right or wrong) in any
  :data:`WINDOW_MS`; the next one is refused ``rate-limited`` (429) and not counted as a
  failure.

Every refused claim is ``pairing-code-refused`` (403) with one sentence, whether the code was
wrong, expired, used or burnt: the answer gives a guesser nothing to tell them apart.

The state is one HOST_DIR document, :data:`PAIR_CODES_DOC`, so a restarted server keeps its
counts. :class:`PairCodes` is the pure part (every change returns a new value);
:class:`PairCodeStore` loads, changes and stores it under one lock per process.

:func:`env_fingerprint` is what a person compares on both sides before the first call: the
environment prints it beside the code, the page shows it after the claim, both from the
``envKey`` (80 bits of a labelled sha256, four groups of four base32 characters).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from typing import Literal

from pydantic import Field, ValidationError

from core.custody.environment import load_environments
from core.model import Contract
from core.ports import Clock, HostState, Randomness
from core.refusals import Code, Refused
from core.secret import Secret
from core.vocabulary import EnvKey, Sha256Hex

__all__ = [
    "CODE_CHARS",
    "CODE_TTL_MS",
    "MAX_CLAIMS_PER_WINDOW",
    "MAX_FAILURES",
    "PAIR_CODES_DOC",
    "WINDOW_MS",
    "MintedCode",
    "PairCodeStore",
    "PairCodes",
    "PendingCode",
    "code_hash",
    "env_fingerprint",
    "new_code",
    "normalize_code",
]

PAIR_CODES_DOC = "pair-codes.json"
CODE_CHARS = 10
CODE_TTL_MS = 10 * 60 * 1000
MAX_FAILURES = 5
MAX_CLAIMS_PER_WINDOW = 10
WINDOW_MS = 60 * 1000
MAX_LIVE_CODES = 16

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32: no I, L, O or U (nothing to misread)."""
_READ_AS = {"O": "0", "I": "1", "L": "1"}
_FINGERPRINT_LABEL = b"voicebox-env-fingerprint-v1\n"

_ALIASED = Contract.model_config | {"serialize_by_alias": True, "hide_input_in_errors": True}


def _base32(data: bytes, chars: int) -> str:
    number = int.from_bytes(data, "big")
    bits = len(data) * 8
    out = []
    for i in range(chars):
        shift = bits - 5 * (i + 1)
        out.append(ALPHABET[(number >> shift) & 31] if shift >= 0 else "0")
    return "".join(out)


def new_code(random: Randomness) -> Secret:
    """A fresh code: 50 bits from ``random`` (a CSPRNG port) as ``XXXXX-XXXXX``."""
    raw = random.token_bytes(7)
    if len(raw) != 7:
        raise ValueError("the random source returned the wrong number of bytes")
    text = _base32(raw, CODE_CHARS)
    return Secret(f"{text[:5]}-{text[5:]}")


def normalize_code(text: str) -> str | None:
    """The code as stored: upper case, spaces and dashes dropped, ``O``→``0``, ``I``/``L``→``1``;
    ``None`` when what is left is not :data:`CODE_CHARS` characters of :data:`ALPHABET`."""
    if len(text) > 64:
        return None
    cleaned = "".join(_READ_AS.get(c, c) for c in text.upper() if c not in " -\t")
    if len(cleaned) != CODE_CHARS or any(c not in ALPHABET for c in cleaned):
        return None
    return cleaned


def code_hash(code: Secret) -> str | None:
    """The sha256 hex under which a code is kept, or ``None`` if it is not a code's shape."""
    normalized = normalize_code(code.reveal())
    if normalized is None:
        return None
    return hashlib.sha256(normalized.encode("ascii")).hexdigest()


def env_fingerprint(env_key: str) -> str:
    """The fingerprint a person compares: ``XXXX-XXXX-XXXX-XXXX`` (80 bits of
    sha256(label + envKey), base32)."""
    digest = hashlib.sha256(_FINGERPRINT_LABEL + env_key.encode("utf-8")).digest()
    text = _base32(digest[:10], 16)
    return "-".join(text[i : i + 4] for i in range(0, 16, 4))


class PendingCode(Contract):
    """A live code: its sha256, the ``envKey`` it is bound to, when minted and when it expires
    (ms), and how many failed claims it has seen."""

    model_config = _ALIASED

    hash: Sha256Hex
    env_key: EnvKey = Field(alias="envKey")
    issued_at: int = Field(alias="issuedAt", ge=0)
    expires_at: int = Field(alias="expiresAt", ge=0)
    failures: int = Field(default=0, ge=0)


class PairCodes(Contract):
    """``pair-codes.json``: the live codes and the times of recent claims (for the rate limit)."""

    model_config = _ALIASED

    schema_: Literal["voicebox-pair-codes-v1"] = Field(
        default="voicebox-pair-codes-v1", alias="schema"
    )
    codes: tuple[PendingCode, ...] = Field(default=(), max_length=MAX_LIVE_CODES)
    recent_claims: tuple[int, ...] = Field(
        default=(), alias="recentClaims", max_length=MAX_CLAIMS_PER_WINDOW
    )

    def live(self, now_ms: int) -> PairCodes:
        """A copy without expired codes and without claims older than the window."""
        codes = tuple(c for c in self.codes if c.expires_at > now_ms)
        recent = tuple(t for t in self.recent_claims if t > now_ms - WINDOW_MS)
        return self.model_copy(update={"codes": codes, "recent_claims": recent})

    def minted(self, digest: str, env_key: str, now_ms: int) -> PairCodes:
        """A copy that also holds the code whose sha256 is ``digest`` (the oldest live code
        gives way when :data:`MAX_LIVE_CODES` are live)."""
        fresh = PendingCode(
            hash=digest, envKey=env_key, issuedAt=now_ms, expiresAt=now_ms + CODE_TTL_MS
        )
        kept = self.live(now_ms).codes[-(MAX_LIVE_CODES - 1) :]
        return self.live(now_ms).model_copy(update={"codes": (*kept, fresh)})

    def claimed(self, code: Secret, now_ms: int) -> tuple[PairCodes, str | None]:
        """Judge one claim at ``now_ms``: the document to store and the ``envKey`` won, or
        ``None`` when the claim failed (see the module docstring for every rule). Raises
        ``rate-limited`` (nothing changes: the document is not stored)."""
        current = self.live(now_ms)
        if len(current.recent_claims) >= MAX_CLAIMS_PER_WINDOW:
            raise Refused(Code.RATE_LIMITED)
        recent = (*current.recent_claims, now_ms)
        digest = code_hash(code)
        probe = (digest or "-").encode("ascii")
        found: PendingCode | None = None
        for pending in current.codes:  # every hash compared, in constant time each
            if hmac.compare_digest(pending.hash.encode("ascii"), probe) and found is None:
                found = pending
        if found is not None:
            rest = tuple(c for c in current.codes if c is not found)
            return current.model_copy(update={"codes": rest, "recent_claims": recent}), (
                found.env_key
            )
        failed = tuple(c.model_copy(update={"failures": c.failures + 1}) for c in current.codes)
        alive = tuple(c for c in failed if c.failures < MAX_FAILURES)
        return current.model_copy(update={"codes": alive, "recent_claims": recent}), None

    def to_json(self) -> bytes:
        """The document's bytes for HOST_DIR (hashes only: no code is ever stored)."""
        return self.model_dump_json(by_alias=True).encode("utf-8")


class MintedCode(Contract):
    """A code just minted: the code itself (shown once, to the operator), its ``envKey``, the
    fingerprint to compare, and when it expires (ms)."""

    model_config = _ALIASED

    code: Secret
    env_key: str = Field(alias="envKey")
    fingerprint: str
    expires_at: int = Field(alias="expiresAt")


class PairCodeStore:
    """Mint and claim codes over HOST_DIR (see the module docstring). Acts are serialised."""

    def __init__(self, state: HostState, clock: Clock, random: Randomness) -> None:
        self._state = state
        self._clock = clock
        self._random = random
        self._lock = asyncio.Lock()

    async def load(self) -> PairCodes:
        """The stored document (empty when absent); one that does not parse is treated as
        empty — every code it held is then gone, which fails closed."""
        raw = await self._state.load(PAIR_CODES_DOC)
        if raw is None:
            return PairCodes()
        try:
            return PairCodes.model_validate_json(raw)
        except ValidationError:
            return PairCodes()

    async def mint(self, env_key: str) -> MintedCode:
        """A new code bound to ``env_key``, an environment this host serves; refuses
        ``unknown-environment``. The caller has already checked the operator's authority
        (the host token, or the operator's own shell on this machine)."""
        async with self._lock:
            env = (await load_environments(self._state)).resolve_served(env_key)
            code = new_code(self._random)
            digest = code_hash(code)
            assert digest is not None
            now = self._clock.now_ms()
            document = (await self.load()).minted(digest, env.key, now)
            await self._state.store(PAIR_CODES_DOC, document.to_json())
        return MintedCode(
            code=code,
            envKey=env.key,
            fingerprint=env_fingerprint(env.key),
            expiresAt=now + CODE_TTL_MS,
        )

    async def claim(self, code: Secret) -> str:
        """The ``envKey`` ``code`` was bound to, the code now spent; refuses
        ``rate-limited`` or ``pairing-code-refused`` (also when the environment it was bound
        to is no longer served: ``unknown-environment`` would tell a guesser the code was
        right)."""
        async with self._lock:
            document, env_key = (await self.load()).claimed(code, self._clock.now_ms())
            await self._state.store(PAIR_CODES_DOC, document.to_json())
            if env_key is None:
                raise Refused(Code.PAIRING_CODE_REFUSED)
            envs = await load_environments(self._state)
            served = envs.find(env_key)
            if served is None or served.kind != "local":
                raise Refused(Code.PAIRING_CODE_REFUSED)
            return env_key
