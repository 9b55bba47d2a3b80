"""The audit: an append-only, hash-chained record of every host decision (SPEC §5).

A record names the environment, the actor (seat), the operation, the decision
(``admitted``/``refused``/``recorded``), the rule or refusal code, the project, and non-secret
details. Each record carries ``prev``, the hash of the record before it, and ``hash``, the
sha256 of its own canonical JSON without ``hash`` — so editing or deleting any record breaks the
chain at that record, and :meth:`AuditLog.verify` names the first broken sequence number.

One :class:`AuditLog` writes at a time (the host holds the storage lock, SPEC §3). Each
``append`` is durable before it returns, so the sequence number it returns can be reported as
``logged`` (seed 002 §3).

**Group commit.** Records are chained (sequence number, ``prev``, ``hash``) the moment
``append`` is called, in call order, and written by one writer: while a write is in flight,
later appends queue, and the next write takes the whole queue (at most :data:`MAX_BATCH`
records) in one durable transaction when the sink offers :class:`BatchAuditSink`. Calls that
arrive together (concurrent host calls) thus share one commit instead of paying one each; a
lone call still waits only for its own. A batch is written only after every earlier one is
durable, and each ``append`` returns only once its own record is. If a write fails, that
record and every record chained after it fail (their callers get the error and no ``logged``),
and the head is read again from the sink — the chain on disk never has a gap.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import Field, StringConstraints, ValidationError

from core.model import Contract, canonical_json
from core.ports import AuditSink, Clock
from core.refusals import Code, Refused

__all__ = [
    "GENESIS",
    "MAX_BATCH",
    "AuditLog",
    "AuditRecord",
    "BatchAuditSink",
    "Decision",
    "Verification",
    "record_hash",
]

GENESIS = "0" * 64
"""The ``prev`` of the first record."""

MAX_BATCH = 256
"""At most this many records go to the sink in one write."""

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


@runtime_checkable
class BatchAuditSink(AuditSink, Protocol):
    """An :class:`~core.ports.AuditSink` that can also store several records in one durable,
    all-or-nothing write (IndexedDB: one ``strict`` transaction)."""

    async def append_many(self, records: list[tuple[int, dict[str, object]]]) -> None:
        """Store every ``(seq, record)`` or none; raise ``storage-failed`` if any ``seq`` is
        taken."""
        ...


class _Queued:
    """One chained record waiting to be written, and how its ``append`` learns the outcome:
    ``turn`` (only when it had to wait) resolves True to make it the writer, or False once
    another writer settled it."""

    __slots__ = ("data", "error", "seq", "settled", "turn")

    def __init__(self, seq: int, data: dict[str, object]) -> None:
        self.seq = seq
        self.data = data
        self.settled = False
        self.error: Exception | None = None
        self.turn: asyncio.Future[bool] | None = None

    def settle(self, error: Exception | None = None) -> None:
        if self.settled:
            return
        self.settled = True
        self.error = error
        if self.turn is not None and not self.turn.done():
            self.turn.set_result(False)

    def result(self) -> int:
        if self.error is not None:
            raise self.error
        return self.seq


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
        self._queue: list[_Queued] = []
        self._writing = False

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
        head is then reloaded from the sink. Concurrent appends share writes (module
        docstring); an uncontended append needs no running event loop.
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
            mine = _Queued(record.seq, record.model_dump(mode="json"))
            self._queue.append(mine)
            self._head = (record.seq, record.hash)
            if self._writing:
                mine.turn = asyncio.get_running_loop().create_future()
            else:
                self._writing = True
        if mine.turn is not None and not await mine.turn:
            return mine.result()  # another writer wrote it
        try:
            await self._write_until(mine)
        finally:
            self._hand_over()
        return mine.result()

    async def _write_until(self, mine: _Queued) -> None:
        """As the writer: write queued batches, in order, until ``mine`` is settled."""
        while not mine.settled:
            batch = self._queue[:MAX_BATCH]
            del self._queue[:MAX_BATCH]
            written = 0
            try:
                if len(batch) > 1 and isinstance(self._sink, BatchAuditSink):
                    await self._sink.append_many([(q.seq, q.data) for q in batch])
                    written = len(batch)
                else:
                    for q in batch:
                        await self._sink.append(q.seq, q.data)
                        q.settle()
                        written += 1
            except Exception as exc:
                self._fail(batch, written, exc)
                continue
            except BaseException:  # cancelled mid-write: the outcome is unknown
                self._fail(batch, written, Refused(Code.STORAGE_FAILED))
                raise
            for q in batch:
                q.settle()

    def _fail(self, batch: list[_Queued], written: int, error: Exception) -> None:
        """``batch[:written]`` is durable; the rest, and everything queued after it, failed
        with ``error``; the head is read again from the sink on the next append."""
        for q in batch[:written]:
            q.settle()
        failed = batch[written:] + self._queue
        self._queue = []
        self._head = None
        for q in failed:
            q.settle(error)

    def _hand_over(self) -> None:
        """Pass the writer's role to the oldest queued append still waiting for its turn."""
        self._writing = False
        while self._queue:
            head = self._queue[0]
            if head.turn is not None and not head.turn.done():
                self._writing = True
                head.turn.set_result(True)
                return
            # its caller stopped waiting; the record is chained all the same: fail it and
            # everything after it, and read the head again
            failed, self._queue = self._queue, []
            self._head = None
            for q in failed:
                q.settle(Refused(Code.STORAGE_FAILED, "The audit record was abandoned."))

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
