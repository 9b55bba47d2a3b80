"""The audit sink over IndexedDB (SPEC §5), through the worker's ``vbx_idb`` JS module.

Each call is one IndexedDB transaction in JavaScript (a Python ``await`` between two requests
would end it — PLATFORM.md); records cross as JSON text. Appends use ``durability:
"strict"`` and ``add`` (never ``put``), so a taken sequence number fails instead of
overwriting.
"""

from __future__ import annotations

import json
from typing import Any

from pyodide.ffi import JsException

from core.ports import StoredAuditRecord
from core.refusals import Code, Refused

__all__ = ["IdbAuditSink"]


class IdbAuditSink:
    """:class:`core.ports.AuditSink` over the ``audit`` object store."""

    def __init__(self, idb: Any) -> None:
        self._idb = idb

    async def append(self, seq: int, record: dict[str, object]) -> None:
        """See :meth:`core.ports.AuditSink.append`."""
        try:
            await self._idb.auditAppend(seq, json.dumps(record, ensure_ascii=False))
        except JsException as exc:
            code = (
                Code.STORAGE_QUOTA_EXCEEDED
                if getattr(exc, "name", "") == "QuotaExceededError"
                else Code.STORAGE_FAILED
            )
            raise Refused(
                code, f"The audit could not be written ({getattr(exc, 'name', '')})."
            ) from None

    async def last(self) -> StoredAuditRecord | None:
        """See :meth:`core.ports.AuditSink.last`."""
        row = json.loads(str(await self._idb.auditLast()))
        if row is None:
            return None
        return StoredAuditRecord(int(row["seq"]), row["record"])

    async def range(self, first: int, last: int) -> list[StoredAuditRecord]:
        """See :meth:`core.ports.AuditSink.range`."""
        rows = json.loads(str(await self._idb.auditRange(first, last)))
        return [StoredAuditRecord(int(r["seq"]), r["record"]) for r in rows]
