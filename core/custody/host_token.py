"""The host token: the secret that authorises administrative acts of one host (seed 002 §2-§3).

Pairing, completing and revoking require it; a missing or wrong token is refused
``host-token-required`` (403). The token lives only in HOST_DIR under :data:`HOST_TOKEN_DOC`
(encrypted at rest by the browser adapter, SPEC §1) and is compared in constant time. It is
``vbh_`` + 256 bits of CSPRNG output.
"""

from __future__ import annotations

from core.custody.bearer import token_text
from core.ports import HostState, Randomness
from core.refusals import Code, Refused
from core.secret import Secret

__all__ = ["HOST_TOKEN_DOC", "check_host_token", "ensure_host_token", "require_host_token"]

HOST_TOKEN_DOC = "host-token"
_PREFIX = "vbh_"


async def ensure_host_token(state: HostState, random: Randomness) -> Secret:
    """The host's token, drawn from ``random`` and stored on first use (idempotent)."""
    raw = await state.load(HOST_TOKEN_DOC)
    if raw:
        return Secret(raw.decode("utf-8"))
    token = token_text(_PREFIX, random, 32)
    await state.store(HOST_TOKEN_DOC, token.reveal().encode("utf-8"))
    return token


def check_host_token(presented: Secret | None, expected: Secret | None) -> None:
    """Refuse ``host-token-required`` unless ``presented`` equals ``expected`` (constant time).

    A host without a token (``expected`` is ``None`` or empty) refuses every presented token.
    """
    if presented is None or not presented or expected is None or not expected:
        raise Refused(Code.HOST_TOKEN_REQUIRED)
    if not presented == expected:
        raise Refused(Code.HOST_TOKEN_REQUIRED)


async def require_host_token(state: HostState, presented: Secret | None) -> None:
    """Check ``presented`` against the token stored in ``state`` (see :func:`check_host_token`)."""
    raw = await state.load(HOST_TOKEN_DOC)
    check_host_token(presented, Secret(raw.decode("utf-8")) if raw else None)
