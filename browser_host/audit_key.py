"""The audit key in the browser: :class:`~core.ports.AuditKey` over ``worker/sealed.mjs``'s
``AuditKey`` — a non-extractable WebCrypto HMAC-SHA256 key in the environment's IndexedDB
``keys`` store, made on first use (issue 13; docs/security.md, "Audit").

Python never holds the key's bytes: it hands data to WebCrypto and gets the MAC back as hex.
"""

from __future__ import annotations

from typing import Any

from pyodide.ffi import to_js

from browser_host.jsutil import JS_ERRORS, settle
from core.refusals import Code, Refused

__all__ = ["WebCryptoAuditKey"]


class WebCryptoAuditKey:
    """:class:`core.ports.AuditKey` over the worker's ``AuditKey`` object."""

    def __init__(self, js_key: Any) -> None:
        self._key = js_key

    async def mac(self, data: bytes) -> str:
        """See :meth:`core.ports.AuditKey.mac`; ``storage-failed`` when WebCrypto or the
        ``keys`` store fails."""
        try:
            return str(await settle(self._key.mac(to_js(data))))
        except JS_ERRORS:
            raise Refused(Code.STORAGE_FAILED, "The audit key could not be used.") from None

    async def mac_many(self, items: list[bytes]) -> list[str]:
        """See :meth:`core.ports.AuditKey.mac_many` (one call into JavaScript)."""
        if not items:
            return []
        try:
            macs = await settle(self._key.macMany(to_js(list(items))))
        except JS_ERRORS:
            raise Refused(Code.STORAGE_FAILED, "The audit key could not be used.") from None
        return [str(mac) for mac in macs]
