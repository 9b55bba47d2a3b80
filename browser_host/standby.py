"""The answerer of a tab whose host is active in another tab (SPEC §3: one host owns the storage).

While another tab's worker holds the storage lock ``voicebox-host``, this tab's worker has
Python loaded but opens neither OPFS nor IndexedDB. Every request it gets is answered — never
silence — with the refusal ``host-active-elsewhere`` (423), with the request's id when it can
be read. Nothing is audited: the audit belongs to the host that owns the storage. When the
other tab closes, the worker takes the lock and starts the real host (``worker/host.mjs``).
"""

from __future__ import annotations

from typing import Any

from pyodide.ffi import to_js

from browser_host.jsutil import js_options
from core.protocol import INBOUND_BOUNDS, RefusalAnswer, salvage_id
from core.refusals import Code, Refused

__all__ = ["StandbyBridge"]

MESSAGE = (
    "This site's host is active in another tab, which owns the storage; this tab does not "
    "write. It takes over by itself when that tab closes."
)


class StandbyBridge:
    """Same shape as :class:`browser_host.main.HostBridge`; refuses everything."""

    async def handle(
        self, text: str, body: Any = None, attachment: Any = None, emit: Any = None
    ) -> Any:
        """Return the JS array ``[answerJsonText, undefined, undefined]``: a refusal
        ``host-active-elsewhere`` (423) carrying the request's id when it is readable. Never
        raises."""
        return _answer(salvage_id(str(text)))

    def bounds(self) -> Any:
        """As :meth:`browser_host.main.HostBridge.bounds`."""
        return js_options(**INBOUND_BOUNDS.model_dump())

    async def refuse(self, part: str, size: int, text: Any = None) -> Any:
        """A message over :meth:`bounds` gets the same ``host-active-elsewhere`` answer, its
        bytes never converted (its id read only from a ``text`` within bounds)."""
        return _answer(salvage_id(text) if isinstance(text, str) else None)


def _answer(request_id: str | None) -> Any:
    refusal = Refused(Code.HOST_ACTIVE_ELSEWHERE, MESSAGE)
    answer = RefusalAnswer(id=request_id, refusal=refusal.body(), logged=None)
    return to_js([answer.model_dump_json(), None, None])
