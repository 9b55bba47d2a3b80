"""The audit: an append-only, hash-chained record of every host decision (SPEC §5).

A record names the environment, the actor (seat), the operation, the decision
(``admitted``/``refused``/``recorded``), the rule or refusal code, the project, and non-secret
details. Each record carries ``prev``, the hash of the record before it, and ``hash``, the
sha256 of its own canonical JSON without ``hash`` — so editing or deleting any record breaks the
chain at that record, and :meth:`AuditLog.verify` names the first broken sequence number.

One :class:`AuditLog` writes at a time (the host holds the storage lock, SPEC §3); appends are
serialised and each is durable before ``append`` returns, so the sequence number it returns can
be reported as ``logged`` (seed 002 §3).
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationError

from core.model import Contract, canonical_json
from core.ports import AuditSink, Clock

__all__ = ["GENESIS", "AuditLog", "AuditRecord", "Decision", "Verification", "record_hash"]

GENESIS = "0" * 64
"""The ``prev`` of the first record."""

Decision = Literal["admitted", "refused", "recorded"]
DetailValue = Annotated[str, StringConstraints(max_length=1000)] | int | bool | None
MAX_DETAILS = 32


class AuditRecord(Contract):
    """One audit record. Stored in the sink as its JSON object; hashed canonically."""

    seq: int = Field(ge=1)
    at: str = Field(description="ISO-8601 UTC time with milliseconds.", max_length=40)
    env: str = Field(description="The environment the host acted for ('local' or an envKey).")
    actor: str = Field(max_length=200, description="Seat or origin: 'page', 'human-ui', ...")
    op: str = Field(max_length=200)
    decision: Decision
    rule: str = Field(max_length=200, description="The refusal code, or the rule that admitted.")
    project: str | None = Field(default=None, max_length=200)
    details: dict[Annotated[str, StringConstraints(max_length=64)], DetailValue] = Field(
        default_factory=dict, max_length=MAX_DETAILS
    )
    prev: str = Field(pattern="^[0-9a-f]{64}$")
    hash: str = Field(pattern="^[0-9a-f]{64}$")


class Verification(Contract):
    """The outcome of :meth:`AuditLog.verify`.

    ``ok`` is true when every record's hash and link hold; otherwise ``broken_seq`` is the first
    sequence number whose record was edited, deleted (a gap) or unlinked, and ``reason`` says
    which. ``checked`` counts records examined.
    """

    ok: bool
    checked: int
    broken_seq: int | None = None
    reason: str | None = None


def record_hash(fields: dict[str, object]) -> str:
    """sha256 hex of the canonical JSON of ``fields`` without its ``hash`` key."""
    body = {k: v for k, v in fields.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


class AuditLog:
    """Appends hash-chained records to an :class:`~core.ports.AuditSink` and verifies them.

    ``env`` is the environment this host acts for (``"local"`` until the host knows its
    envKey; settable); ``clock`` stamps records.
    """

    def __init__(self, sink: AuditSink, clock: Clock, env: str = "local") -> None:
        self._sink = sink
        self._clock = clock
        self.env = env
        self._lock = asyncio.Lock()
        self._head: tuple[int, str] | None = None

    async def _load_head(self) -> tuple[int, str]:
        if self._head is None:
            last = await self._sink.last()
            self._head = (0, GENESIS) if last is None else (last.seq, str(last.record["hash"]))
        return self._head

    async def append(
        self,
        *,
        actor: str,
        op: str,
        decision: Decision,
        rule: str,
        project: str | None = None,
        details: dict[str, DetailValue] | None = None,
    ) -> int:
        """Append one record and return its sequence number once it is durable.

        ``details`` must be non-secret scalars (at most 32 keys). Raises ``storage-failed``
        when the sink refuses (e.g. another writer took the sequence number); the in-memory
        head is then reloaded from the sink.
        """
        async with self._lock:
            seq_prev, hash_prev = await self._load_head()
            fields: dict[str, object] = {
                "seq": seq_prev + 1,
                "at": _iso(self._clock.now_ms()),
                "env": self.env,
                "actor": actor,
                "op": op,
                "decision": decision,
                "rule": rule,
                "project": project,
                "details": dict(details or {}),
                "prev": hash_prev,
            }
            fields["hash"] = record_hash(fields)
            record = AuditRecord.model_validate(fields)
            data = record.model_dump(mode="json")
            try:
                await self._sink.append(record.seq, data)
            except Exception:
                self._head = None
                raise
            self._head = (record.seq, record.hash)
            return record.seq

    async def head_seq(self) -> int:
        """The sequence number of the newest record (0 when empty)."""
        return (await self._load_head())[0]

    async def page(self, *, before: int | None = None, limit: int = 100) -> list[dict[str, object]]:
        """Up to ``limit`` records, newest first, with ``seq < before`` when given."""
        last = await self._sink.last()
        if last is None:
            return []
        top = last.seq if before is None else min(before - 1, last.seq)
        if top < 1:
            return []
        rows = await self._sink.range(max(1, top - limit + 1), top)
        return [r.record for r in reversed(rows)]

    async def verify(self, batch: int = 500) -> Verification:
        """Walk the whole chain; name the first record that was edited, removed or unlinked."""
        last = await self._sink.last()
        if last is None:
            return Verification(ok=True, checked=0)
        expected_prev = GENESIS
        checked = 0
        for start in range(1, last.seq + 1, batch):
            rows = await self._sink.range(start, min(start + batch - 1, last.seq))
            by_seq = {r.seq: r.record for r in rows}
            for seq in range(start, min(start + batch - 1, last.seq) + 1):
                checked += 1
                rec = by_seq.get(seq)
                if rec is None:
                    return Verification(
                        ok=False, checked=checked, broken_seq=seq, reason="record missing"
                    )
                broken = _check_record(seq, rec, expected_prev)
                if broken is not None:
                    return Verification(ok=False, checked=checked, broken_seq=seq, reason=broken)
                expected_prev = str(rec["hash"])
        return Verification(ok=True, checked=checked)


def _check_record(seq: int, rec: dict[str, object], expected_prev: str) -> str | None:
    try:
        parsed = AuditRecord.model_validate(rec)
    except ValidationError:
        return "record does not parse"
    if parsed.seq != seq:
        return "sequence number changed"
    if record_hash(rec) != parsed.hash:
        return "record content does not match its hash"
    if parsed.prev != expected_prev:
        return "record does not link to the previous record"
    return None
