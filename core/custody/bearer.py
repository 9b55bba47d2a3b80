"""Pairing bearers: their form, how they are drawn, how they are identified (seed 002 §3, SPEC §6).

A bearer is ``vbx_`` followed by the URL-safe base64 (no padding) of :data:`BEARER_BYTES`
bytes of CSPRNG output: 256 bits, 43 characters, 47 in all. The issuing side never stores the
bearer, only its sha256 hex (:func:`bearer_hash`); audit records may name a bearer only by
:func:`bearer_ref`, a short prefix of that hash.

Every comparison of a presented bearer goes through :func:`find_hash`, which compares digests
with :func:`hmac.compare_digest` against every stored hash without stopping early.
"""

from __future__ import annotations

import base64
import hmac
import re
from collections.abc import Iterable

from core.ports import Randomness
from core.secret import Secret

__all__ = [
    "BEARER_BYTES",
    "BEARER_PREFIX",
    "bearer_hash",
    "bearer_ref",
    "find_hash",
    "is_bearer_shaped",
    "new_bearer",
    "token_text",
]

BEARER_PREFIX = "vbx_"
BEARER_BYTES = 32
_BEARER_RE = re.compile(r"vbx_[A-Za-z0-9_-]{43}")


def token_text(prefix: str, random: Randomness, n_bytes: int) -> Secret:
    """``prefix`` + URL-safe base64 (unpadded) of ``n_bytes`` CSPRNG bytes, as a :class:`Secret`."""
    raw = random.token_bytes(n_bytes)
    if len(raw) != n_bytes:
        raise ValueError("the random source returned the wrong number of bytes")
    return Secret(prefix + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii"))


def new_bearer(random: Randomness) -> Secret:
    """A fresh bearer: ``vbx_`` + 256 bits from ``random`` (a CSPRNG port), seed 002 §3."""
    return token_text(BEARER_PREFIX, random, BEARER_BYTES)


def is_bearer_shaped(bearer: Secret) -> bool:
    """True when ``bearer`` has the form of a bearer (``vbx_`` + 43 URL-safe characters)."""
    return _BEARER_RE.fullmatch(bearer.reveal()) is not None


def bearer_hash(bearer: Secret) -> str:
    """The sha256 hex under which the issuing side keeps ``bearer`` (64 characters)."""
    return bearer.digest()


def bearer_ref(hash_hex: str) -> str:
    """A short, non-secret name of a stored bearer for audit details: 12 hex of its hash."""
    return hash_hex[:12]


def find_hash(stored: Iterable[str], presented: str) -> int | None:
    """Index of the first hash in ``stored`` equal to ``presented``, or ``None``.

    Every stored hash is compared in constant time and the loop never stops early, so the
    time taken does not depend on where (or whether) a match is.
    """
    found: int | None = None
    probe = presented.encode("ascii", "replace")
    for i, candidate in enumerate(stored):
        if hmac.compare_digest(candidate.encode("ascii", "replace"), probe) and found is None:
            found = i
    return found
