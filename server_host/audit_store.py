"""The environment's audit on disk: records in SQLite, the HMAC key in a ``0600`` file
(SPEC §5; issue 13's chain, key and anchor, as the browser keeps them).

:class:`SqliteAuditSink` is core's :class:`~core.audit.BatchAuditSink` over stdlib
``sqlite3``: one table ``records(seq INTEGER PRIMARY KEY, record TEXT)``, the record as its
JSON text, journal ``WAL`` and ``synchronous=FULL`` — a commit is on disk when ``append``
returns, so the ``logged`` number it gives is durable (seed 002 §3). A taken sequence number
is refused ``storage-failed`` (a second writer is detected, never merged). Reads and writes
run in a worker thread, one at a time, so the event loop never waits on an ``fsync``.

:class:`FileAuditKey` is core's :class:`~core.ports.AuditKey`: 32 bytes of CSPRNG output in
HOST_DIR ``audit-key`` (created ``0600``, ``O_EXCL``, once), read when the server starts; the
MACs are stdlib ``hmac`` SHA-256. The hash chain, the MACs, the anchor (HOST_DIR
``audit-anchor.json``) and :meth:`~core.audit.AuditLog.verify` are core's, unchanged: an
edited row is ``edited``, deleted newest rows ``truncated``, a wiped table ``wiped``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
from pathlib import Path

from core.json_bound import parse_json
from core.ports import StoredAuditRecord
from core.refusals import Code, Refused

__all__ = ["AUDIT_DB", "AUDIT_KEY_FILE", "FileAuditKey", "SqliteAuditSink"]

AUDIT_DB = "audit.sqlite3"
AUDIT_KEY_FILE = "audit-key"
_KEY_BYTES = 32


class FileAuditKey:
    """:class:`core.ports.AuditKey` over HOST_DIR ``audit-key`` (see the module docstring)."""

    def __init__(self, host_dir: Path) -> None:
        path = host_dir / AUDIT_KEY_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            try:
                os.write(fd, secrets.token_bytes(_KEY_BYTES))
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            secret = os.read(fd, _KEY_BYTES + 1)
        finally:
            os.close(fd)
        if len(secret) != _KEY_BYTES:
            raise Refused(Code.STORAGE_FAILED, "HOST_DIR audit-key is not a key.")
        self._secret = secret

    def __repr__(self) -> str:
        return "FileAuditKey(<secret>)"

    async def mac(self, data: bytes) -> str:
        """See :meth:`core.ports.AuditKey.mac`."""
        return hmac.new(self._secret, data, hashlib.sha256).hexdigest()

    async def mac_many(self, items: list[bytes]) -> list[str]:
        """See :meth:`core.ports.AuditKey.mac_many`."""
        return [hmac.new(self._secret, item, hashlib.sha256).hexdigest() for item in items]


class SqliteAuditSink:
    """:class:`core.audit.BatchAuditSink` over ``path`` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        fresh = not path.exists()
        if fresh:  # created 0600 before SQLite opens it; its -wal and -shm take that mode
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS records (seq INTEGER PRIMARY KEY, record TEXT NOT NULL)"
        )
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def _insert(self, rows: list[tuple[int, dict[str, object]]]) -> None:
        data = [(seq, json.dumps(record, ensure_ascii=False)) for seq, record in rows]
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT INTO records (seq, record) VALUES (?, ?)", data)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                taken = isinstance(exc, sqlite3.IntegrityError)
                raise Refused(
                    Code.STORAGE_FAILED,
                    "That audit sequence number is taken."
                    if taken
                    else "The audit database refused the write.",
                ) from None

    async def append(self, seq: int, record: dict[str, object]) -> None:
        """See :meth:`core.ports.AuditSink.append`."""
        await asyncio.to_thread(self._insert, [(seq, record)])

    async def append_many(self, records: list[tuple[int, dict[str, object]]]) -> None:
        """See :meth:`core.audit.BatchAuditSink.append_many` (one transaction)."""
        await asyncio.to_thread(self._insert, records)

    def _rows(self, sql: str, args: tuple[int, ...]) -> list[StoredAuditRecord]:
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        out = []
        for seq, text in rows:
            try:
                record = parse_json(text, what="A stored audit record")
            except Refused:
                record = {"unreadable": True}  # verify names it: malformed
            out.append(StoredAuditRecord(int(seq), record if isinstance(record, dict) else {}))
        return out

    async def last(self) -> StoredAuditRecord | None:
        """See :meth:`core.ports.AuditSink.last`."""
        rows = await asyncio.to_thread(
            self._rows, "SELECT seq, record FROM records ORDER BY seq DESC LIMIT 1", ()
        )
        return rows[0] if rows else None

    async def range(self, first: int, last: int) -> list[StoredAuditRecord]:
        """See :meth:`core.ports.AuditSink.range`."""
        return await asyncio.to_thread(
            self._rows,
            "SELECT seq, record FROM records WHERE seq BETWEEN ? AND ? ORDER BY seq",
            (first, last),
        )
