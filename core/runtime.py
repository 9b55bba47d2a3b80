"""Real clock and randomness that work on CPython and in Pyodide alike.

In Pyodide, ``time.time`` reads the browser's clock and ``secrets`` draws from
``crypto.getRandomValues``, so these need no browser adapter.
"""

from __future__ import annotations

import secrets
import time

__all__ = ["SystemClock", "SystemRandomness"]


class SystemClock:
    """:class:`~core.ports.Clock` over the system time."""

    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        return int(time.time() * 1000)


class SystemRandomness:
    """:class:`~core.ports.Randomness` over :mod:`secrets` (a CSPRNG)."""

    def token_bytes(self, n: int) -> bytes:
        """``n`` bytes of CSPRNG output."""
        return secrets.token_bytes(n)
