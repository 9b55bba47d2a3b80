"""The audit sink over IndexedDB (SPEC §5), through the worker's ``vbx_idb`` JS module.

Each call is one IndexedDB transaction in JavaScript (a Python ``await`` between two requests
would end it — PLATFORM.md); records cross as JSON text. Appends use ``durability:
"strict"`` and ``add`` (never ``put``), so a taken sequence number fails instead of
overwriting. ``append_many`` (:class:`core.audit.BatchAuditSink`) writes a group commit's
records in one such transaction, all or nothing.
"""

from __future__ import annotations

import json
from typing import Any

from pyodide.ffi import JsException

from core.json_bound import parse_json
from core.ports import StoredAuditRecord
from core.refusals import Code, Refused

__all__ = ["IdbAuditSink"]


class IdbAuditSink:
    """:class:`core.ports.AuditSink` over the ``audit`` object store."""

    def __init__(self, idb: Any) -> None:
        self._idb = idb

    async def append(self, seq: int, record: dict[str, object]) -> None:
        """See :meth:`core.ports.AuditSink.append`."""
        await self._write(self._idb.auditAppend, seq, json.dumps(record, ensure_ascii=False))

    async def append_many(self, records: list[tuple[int, dict[str, object]]]) -> None:
        """See :meth:`core.audit.BatchAuditSink.append_many`."""
        rows = [[seq, record] for seq, record in records]
        await self._write(self._idb.auditAppendMany, json.dumps(rows, ensure_ascii=False))

    @staticmethod
    async def _write(method: Any, *args: object) -> None:
        try:
            await method(*args)
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
        row = parse_json(str(await self._idb.auditLast()), what="The stored audit record")
        if row is None:
            return None
        return StoredAuditRecord(int(row["seq"]), row["record"])

    async def range(self, first: int, last: int) -> list[StoredAuditRecord]:
        """See :meth:`core.ports.AuditSink.range`."""
        rows = parse_json(str(await self._idb.auditRange(first, last)), what="The stored audit")
        return [StoredAuditRecord(int(r["seq"]), r["record"]) for r in rows]
