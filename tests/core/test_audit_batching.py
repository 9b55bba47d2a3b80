"""Group commit of audit appends (core/audit.py; SPEC §5, issue 9): concurrent appends share
durable writes, each ``append`` still returns only once its own record is durable, and a failed
write never leaves a gap in the chain or a ``logged`` number for a record that is not there."""

from __future__ import annotations

import asyncio

import pytest

from core.audit import MAX_BATCH, AuditLog, BatchAuditSink
from core.memory.adapters import FixedClock, MemoryAuditKey, MemoryAuditSink, MemoryHostState
from core.refusals import Code, Refused


class BatchSink(MemoryAuditSink):
    """A memory sink with all-or-nothing batch writes that take real time (an event-loop
    turn), recording the size of every write; ``fail_at`` refuses the write holding that seq."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__()
        self.writes: list[int] = []
        self.fail_at = fail_at

    async def _write(self, rows: list[tuple[int, dict[str, object]]]) -> None:
        await asyncio.sleep(0.001)
        if self.fail_at is not None and any(seq == self.fail_at for seq, _ in rows):
            self.fail_at = None
            raise Refused(Code.STORAGE_FAILED, "The disk said no.")
        if any(seq in self.records for seq, _ in rows):
            raise Refused(Code.STORAGE_FAILED, "That audit sequence number is taken.")
        for seq, record in rows:
            self.records[seq] = dict(record)
        self.writes.append(len(rows))

    async def append(self, seq: int, record: dict[str, object]) -> None:
        await self._write([(seq, record)])

    async def append_many(self, records: list[tuple[int, dict[str, object]]]) -> None:
        await self._write(records)


class SlowSink(MemoryAuditSink):
    """A one-record-at-a-time sink whose writes take an event-loop turn (no batch writes)."""

    async def append(self, seq: int, record: dict[str, object]) -> None:
        await asyncio.sleep(0.001)
        await super().append(seq, record)


# These scenarios run their own event loop (asyncio.run); inside Pyodide the test runner already
# runs in the one loop there is, so they are CPython-only. The browser exercises the same code
# with real concurrency in the benchmark's audit section.
needs_own_loop = pytest.mark.cpython_only


def _one(log: AuditLog, i: int) -> object:
    return log.append(actor="page", op=f"op{i}", decision="admitted", rule="admitted")


def test_the_batch_sink_is_recognised_and_the_plain_one_is_not() -> None:
    assert isinstance(BatchSink(), BatchAuditSink)
    assert not isinstance(MemoryAuditSink(), BatchAuditSink)


@needs_own_loop
def test_concurrent_appends_share_writes_and_keep_call_order() -> None:
    async def scenario() -> tuple[list[int], BatchSink, bool]:
        sink = BatchSink()
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
        seqs = await asyncio.gather(*(_one(log, i) for i in range(50)))
        return list(seqs), sink, (await log.verify()).ok

    seqs, sink, verified = asyncio.run(scenario())
    assert seqs == list(range(1, 51))
    assert [sink.records[s]["op"] for s in seqs] == [f"op{i}" for i in range(50)]
    assert verified
    assert sum(sink.writes) == 50
    assert len(sink.writes) < 50  # the first write goes alone, the rest share


@needs_own_loop
def test_an_append_returns_only_once_its_record_is_durable() -> None:
    async def scenario() -> list[bool]:
        sink = BatchSink()
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
        stored_when_returned = []

        async def one(i: int) -> None:
            seq = await _one(log, i)
            stored_when_returned.append(seq in sink.records)

        await asyncio.gather(*(one(i) for i in range(20)))
        return stored_when_returned

    assert asyncio.run(scenario()) == [True] * 20


@needs_own_loop
def test_a_failed_write_fails_its_records_and_every_later_one_and_leaves_no_gap() -> None:
    async def scenario() -> tuple[list[object], AuditLog, BatchSink]:
        sink = BatchSink(fail_at=5)
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
        outcomes = await asyncio.gather(*(_one(log, i) for i in range(12)), return_exceptions=True)
        return list(outcomes), log, sink

    outcomes, log, sink = asyncio.run(scenario())
    logged = [o for o in outcomes if isinstance(o, int)]
    failed = [o for o in outcomes if isinstance(o, Exception)]
    # every number a caller was given is on disk, in an unbroken chain from 1
    assert sorted(sink.records) == sorted(logged) == list(range(1, len(logged) + 1))
    assert failed and all(isinstance(e, Refused) for e in failed)
    assert 5 not in sink.records
    # the next append continues after the last durable record, and the chain verifies
    after = asyncio.run(_one(log, 99))  # type: ignore[arg-type]
    assert after == len(logged) + 1
    assert asyncio.run(log.verify()).ok


@needs_own_loop
def test_without_batch_writes_records_before_a_failure_are_still_logged() -> None:
    async def scenario() -> list[object]:
        sink = SlowSink()
        sink.records[4] = {"taken": True}  # another writer holds seq 4
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
        log._head = (0, "0" * 64)  # start as if the sink were empty (a stale head)
        return list(await asyncio.gather(*(_one(log, i) for i in range(6)), return_exceptions=True))

    outcomes = asyncio.run(scenario())
    assert outcomes[:3] == [1, 2, 3]
    assert all(isinstance(o, Refused) for o in outcomes[3:])


@needs_own_loop
def test_no_write_holds_more_than_max_batch_records() -> None:
    async def scenario() -> BatchSink:
        sink = BatchSink()
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
        await asyncio.gather(*(_one(log, i) for i in range(MAX_BATCH + 40)))
        return sink

    sink = asyncio.run(scenario())
    assert max(sink.writes) <= MAX_BATCH
    assert sum(sink.writes) == MAX_BATCH + 40


@needs_own_loop
def test_a_caller_that_stops_waiting_never_leaves_a_gap() -> None:
    async def scenario() -> tuple[list[object], BatchSink, AuditLog]:
        sink = BatchSink()
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
        tasks = [asyncio.ensure_future(_one(log, i)) for i in range(8)]
        await asyncio.sleep(0)  # all chained; the first is writing
        tasks[3].cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        return list(outcomes), sink, log

    outcomes, sink, log = asyncio.run(scenario())
    logged = {o for o in outcomes if isinstance(o, int)}
    # the chain on disk is unbroken from 1, and holds every number a caller was given
    assert sorted(sink.records) == list(range(1, len(sink.records) + 1))
    assert logged <= set(sink.records)
    assert asyncio.run(log.verify()).ok
    on_disk = len(sink.records)
    assert asyncio.run(_one(log, 9)) == on_disk + 1  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [1, 3])
def test_uncontended_appends_need_no_event_loop(count: int) -> None:
    from tests.support import run

    log = AuditLog(MemoryAuditSink(), FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
    assert [run(_one(log, i)) for i in range(count)] == list(range(1, count + 1))  # type: ignore[arg-type]
