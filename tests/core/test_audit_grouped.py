"""Grouped read records (core/audit.py "Grouped reads", issue 18): a read-only call's record is
chained at once and answered as pending, committed within ``GROUP_WINDOW_MS``; a mutating
call is still answered only once its own record — and so every record chained before it — is
durable; a tab killed inside the window loses at most that window's read records, never a
write's, and leaves a chain that verifies with no gap."""

from __future__ import annotations

import asyncio
import json

import pytest

import core.audit
from core.audit import CHAIN_STEP, GENESIS, GROUP_WINDOW_MS, AuditLog
from core.memory.adapters import FixedClock, MemoryAuditKey, MemoryAuditSink, MemoryHostState
from tests.support import HostHarness

# Each scenario runs its own event loop (asyncio.run): CPython only (see test_audit_batching).
pytestmark = pytest.mark.cpython_only


class SlowSink(MemoryAuditSink):
    """A memory sink whose writes take an event-loop turn (like IndexedDB's commit)."""

    async def append(self, seq: int, record: dict[str, object]) -> None:
        await asyncio.sleep(0.001)
        await super().append(seq, record)


KEY = MemoryAuditKey()  # the host's key survives a reload


def _log(sink: MemoryAuditSink, state: MemoryHostState) -> AuditLog:
    return AuditLog(sink, FixedClock(), key=KEY, state=state)


def _read(log: AuditLog, i: int) -> object:
    return log.append(actor="page", op=f"read{i}", decision="admitted", rule="ok", grouped=True)


def _write(log: AuditLog, i: int) -> object:
    return log.append(actor="page", op=f"write{i}", decision="admitted", rule="ok")


def test_a_read_record_is_answered_pending_then_durable_within_the_window() -> None:
    sink, state = SlowSink(), MemoryHostState()

    async def scenario() -> None:
        log = _log(sink, state)
        seq = await _read(log, 1)
        assert seq == 1 and not log.is_durable(seq) and seq not in sink.records
        await asyncio.sleep(GROUP_WINDOW_MS / 1000 * 3)
        assert log.is_durable(seq) and seq in sink.records
        assert (await log.verify()).ok

    asyncio.run(scenario())


def test_a_write_is_answered_only_once_it_and_every_read_before_it_are_durable() -> None:
    sink, state = SlowSink(), MemoryHostState()

    async def scenario() -> None:
        log = _log(sink, state)
        reads = [await _read(log, i) for i in range(3)]
        assert not any(seq in sink.records for seq in reads)
        seq = await _write(log, 1)
        assert seq == 4 and log.is_durable(seq)
        assert sorted(sink.records) == [1, 2, 3, 4]  # the reads went with the write's commit

    asyncio.run(scenario())


def test_a_tab_killed_inside_the_window_loses_only_read_records_never_a_writes() -> None:
    """The loop stops (asyncio.run cancels the flush task) right after reads that followed a
    write: the write and every record before it are on storage; only the reads after it are
    lost, and a reload's chain verifies and continues with no gap."""
    sink, state = SlowSink(), MemoryHostState()
    written: list[int] = []

    async def until_killed() -> None:
        log = _log(sink, state)
        for i in range(2):
            await _read(log, i)
        written.append(await _write(log, 1))
        for i in range(2, 5):
            await _read(log, i)
        # killed here: no await gives the flush task its window

    asyncio.run(until_killed())
    (write_seq,) = written
    assert sorted(sink.records) == list(range(1, write_seq + 1))
    assert all(json.dumps(sink.records[s]).count('"read') for s in (1, 2))

    async def after_reload() -> None:
        log = _log(sink, state)
        assert (await log.verify()).ok
        assert await _write(log, 2) == write_seq + 1

    asyncio.run(after_reload())


def test_a_file_read_answers_logged_pending_and_a_file_write_a_durable_number() -> None:
    """Through the pipeline: ``file.read`` (declared read-only) answers ``logged_pending``;
    ``file.write`` answers only once its record is on storage and never says pending."""
    harness = HostHarness()
    project = harness.ok("project.create", name="Grouped")["project"]["id"]
    harness.ok("file.write", b"hello", project=project, path="a.txt")

    async def scenario() -> None:
        message = {"v": 1, "id": "r1", "op": "file.read", "args": {"project": project}}
        message["args"]["path"] = "a.txt"
        text, body = await harness.host.handle(json.dumps(message), None)
        read = json.loads(text)
        assert read["ok"] and body == b"hello"
        assert read["logged_pending"] is True and read["logged"] not in harness.sink.records
        message = {"v": 1, "id": "w1", "op": "file.write", "args": {"project": project}}
        message["args"]["path"] = "b.txt"
        text, _ = await harness.host.handle(json.dumps(message), b"bytes")
        wrote = json.loads(text)
        assert wrote["ok"] and wrote["logged_pending"] is None
        assert {read["logged"], wrote["logged"]} <= set(harness.sink.records)

    asyncio.run(scenario())


def test_reads_that_arrive_while_a_write_commits_are_committed_all_the_same() -> None:
    """Reads and writes interleaved, concurrently: every read record still reaches storage
    within the window of the last one, in chain order, with no gap."""
    sink, state = SlowSink(), MemoryHostState()

    async def scenario() -> None:
        log = _log(sink, state)
        calls = [_read(log, i) if i % 3 else _write(log, i) for i in range(30)]
        seqs = await asyncio.gather(*calls)
        assert sorted(seqs) == list(range(1, 31))
        await log.settled()
        assert sorted(sink.records) == list(range(1, 31))
        assert all(log.is_durable(seq) for seq in seqs)
        assert (await log.verify()).ok

    asyncio.run(scenario())


def test_reading_the_audit_shows_a_read_record_still_in_its_window() -> None:
    """The audit surface and a verification never miss a pending read: reading the audit
    writes the grouped records first."""
    sink, state = SlowSink(), MemoryHostState()

    async def scenario() -> None:
        log = _log(sink, state)
        seq = await _read(log, 1)
        assert seq not in sink.records
        (newest,) = await log.page(limit=1)
        assert newest["seq"] == seq and log.is_durable(seq)
        seq = await _read(log, 2)
        verified = await log.verify()
        assert verified.ok and verified.checked == seq

    asyncio.run(scenario())


def test_a_read_record_is_chained_at_its_commit_in_call_order_not_on_the_calls_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 18, round four: a grouped append numbers its record and returns without hashing
    it (the chaining is the group commit's work, off the read's answer path); a strict append
    chains every record before it first; once committed, every record links to the one
    before it in call order, matches its own hash, and the chain verifies."""
    sink, state = SlowSink(), MemoryHostState()
    hashed: list[object] = []
    real_hash = core.audit.record_hash

    def counting(fields: dict[str, object]) -> str:
        hashed.append(fields["seq"])
        return real_hash(fields)

    monkeypatch.setattr(core.audit, "record_hash", counting)

    async def scenario() -> None:
        log = _log(sink, state)
        reads = [await _read(log, i) for i in range(3)]
        assert reads == [1, 2, 3] and hashed == []  # numbered, not yet chained
        assert await _write(log, 3) == 4 and hashed == [1, 2, 3, 4]
        more = [await _read(log, i) for i in range(4, 7)]
        assert more == [5, 6, 7] and hashed == [1, 2, 3, 4]
        await log.settled()
        assert hashed == [1, 2, 3, 4, 5, 6, 7]
        prev = GENESIS
        for seq in range(1, 8):
            record = sink.records[seq]
            assert record["op"] == (f"write{seq - 1}" if seq == 4 else f"read{seq - 1}")
            assert record["prev"] == prev and record["hash"] == real_hash(record)
            prev = str(record["hash"])
        assert (await log.verify()).ok

    asyncio.run(scenario())


class GatedSink(MemoryAuditSink):
    """A memory sink whose writes wait for ``gate`` (an IndexedDB commit in flight) and that
    counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.writes = 0

    async def append(self, seq: int, record: dict[str, object]) -> None:
        self.writes += 1
        self.entered.set()
        await self.gate.wait()
        await super().append(seq, record)


def test_reads_appended_while_a_batch_is_written_wait_for_their_own_window() -> None:
    """Issue 18, round four: the group commit does not start a second commit right behind the
    first for the reads that arrived while it was written (each commit is an IndexedDB
    transaction and an anchor write on the worker's thread, in the way of the next read); they
    are committed when their own window ends, and every record is then durable and verifies."""
    state = MemoryHostState()

    async def scenario() -> None:
        sink = GatedSink()
        log = _log(sink, state)
        first = await _read(log, 1)
        await asyncio.wait_for(sink.entered.wait(), GROUP_WINDOW_MS / 1000 * 20)
        second = await _read(log, 2)  # arrives while the first batch is being written
        sink.gate.set()
        for _ in range(20):  # the first commit finishes; many loop turns, far below a window
            await asyncio.sleep(0)
        assert log.is_durable(first) and not log.is_durable(second)
        assert sink.writes == 1
        await asyncio.sleep(GROUP_WINDOW_MS / 1000 * 3)
        assert log.is_durable(second) and sink.writes == 2
        assert (await log.verify()).ok

    asyncio.run(scenario())


def test_a_commit_chains_a_large_batch_in_steps_and_a_call_is_served_between() -> None:
    """Issue 18, round four: the group commit hashes its grouped records ``CHAIN_STEP`` at a
    time with a turn of the event loop between, so a call that arrives while a large batch is
    chained runs before the chaining is over (the worker answers a read between two steps);
    the chain is the same and verifies."""
    sink, state = SlowSink(), MemoryHostState()
    seen: list[int] = []

    async def scenario() -> None:
        log = _log(sink, state)
        count = CHAIN_STEP * 8
        for i in range(count):
            await _read(log, i)

        async def a_call_meanwhile() -> None:
            seen.append(len(log._unchained))

        await asyncio.gather(log.settled(), a_call_meanwhile())
        assert seen and 0 < seen[0] < count  # it ran while records were still unchained
        assert sorted(sink.records) == list(range(1, count + 1))
        assert (await log.verify()).ok

    asyncio.run(scenario())


class AnchorWatch(MemoryHostState):
    """HOST_DIR noting the sequence number of each anchor written."""

    def __init__(self) -> None:
        super().__init__()
        self.anchored: list[int] = []

    async def store(self, name: str, data: bytes) -> None:
        if name == core.audit.ANCHOR_NAME:
            self.anchored.append(int(json.loads(data)["seq"]))
        await super().store(name, data)


def _paced(sink: MemoryAuditSink, state: MemoryHostState) -> AuditLog:
    """A background-anchored log whose read interval never ends within a test (60 s)."""
    return AuditLog(
        sink,
        FixedClock(),
        key=KEY,
        state=state,
        background_anchor=True,
        anchor_reads_interval_ms=60_000,
    )


async def _turns(n: int = 20) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def test_read_only_batches_move_the_anchor_at_most_once_an_interval_a_write_at_once() -> None:
    sink, state = SlowSink(), AnchorWatch()

    async def scenario() -> None:
        log = _paced(sink, state)
        await _read(log, 1)
        await log.settled()
        await _turns()
        assert state.anchored[-1] == 1  # the first anchor write after a while: at once
        await _read(log, 2)
        await _read(log, 3)
        await log.settled()
        await _turns()
        assert log.is_durable(3) and state.anchored[-1] == 1  # reads only: the interval waits
        seq = await _write(log, 4)
        await _turns()
        assert seq == 4 and state.anchored[-1] == 4  # a write's batch: anchored at once
        await _read(log, 5)
        await log.settled()
        await _turns()
        assert state.anchored[-1] == 4
        verdict = await log.verify()  # a verification waits for nothing: the anchor catches up
        assert verdict.ok and verdict.anchor_seq == 5 and state.anchored[-1] == 5

    asyncio.run(scenario())


def test_newest_read_records_deleted_while_their_anchor_waits_are_named_truncated() -> None:
    sink, state = SlowSink(), AnchorWatch()

    async def scenario() -> tuple[bool, str | None, int | None]:
        log = _paced(sink, state)
        await _read(log, 1)
        await log.settled()
        await _turns()
        for i in range(2, 6):
            await _read(log, i)
        await log.settled()
        del sink.records[5], sink.records[4]  # while the anchor waits for the interval
        verdict = await log.verify()
        return verdict.ok, verdict.finding, verdict.broken_seq

    assert asyncio.run(scenario()) == (False, "truncated", 4)
