"""HOST_DIR sealed at rest: :class:`~core.ports.HostState` whose documents are AES-GCM
encrypted under a non-extractable WebCrypto key (SPEC §1, §6; ``worker/sealed.mjs``).

Tokens, bearers and peer host tokens live in HOST_DIR; a copy of the profile's OPFS files
alone does not reveal them. A document that is not sealed (written before sealing existed) is
read as it is and sealed on its next store; one whose seal does not open (another key, or
altered bytes) refuses ``storage-failed`` — the host never guesses a secret.
"""

from __future__ import annotations

from typing import Any

from pyodide.ffi import JsException, to_js

from core.ports import HostState
from core.refusals import Code, Refused

__all__ = ["SealedHostState"]

MAGIC = b"VBX1"


class SealedHostState:
    """:class:`core.ports.HostState` sealing every document it stores (see module docstring)."""

    def __init__(self, inner: HostState, sealer: Any) -> None:
        self._inner = inner
        self._sealer = sealer

    async def load(self, name: str) -> bytes | None:
        """See :meth:`core.ports.HostState.load`."""
        raw = await self._inner.load(name)
        if raw is None or not raw.startswith(MAGIC):
            return raw
        try:
            opened: bytes = (await self._sealer.open(to_js(raw))).to_bytes()
            return opened
        except JsException:
            raise Refused(
                Code.STORAGE_FAILED, f"{name} is sealed with another key or was altered."
            ) from None

    async def store(self, name: str, data: bytes) -> None:
        """See :meth:`core.ports.HostState.store`."""
        sealed = (await self._sealer.seal(to_js(data))).to_bytes()
        await self._inner.store(name, sealed)
