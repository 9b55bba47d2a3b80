"""The audit's key and anchor (core/audit.py; SPEC §5; issue 13, finding 3).

Someone who can edit the audit store but holds neither the host's key nor its HOST_DIR can
delete the newest records, re-hash a rewritten chain, clear the store or append a linked
record; ``verify`` names each, a sequence number is never handed out twice, and an audit from
before the anchor still verifies, marked unanchored up to its first anchored record.

A "restart" is a new :class:`AuditLog` over the same store, HOST_DIR and key.
"""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from core.audit import ANCHOR_NAME, GENESIS, AuditLog, Verification, record_hash
from core.memory.adapters import FixedClock, MemoryAuditKey, MemoryAuditSink, MemoryHostState
from core.refusals import Code, Refused
from tests.support import run


class Profile:
    """One host's durable parts: its audit store, its HOST_DIR and its key."""

    def __init__(self) -> None:
        self.sink = MemoryAuditSink()
        self.state = MemoryHostState()
        self.key = MemoryAuditKey()

    def boot(self) -> AuditLog:
        return AuditLog(self.sink, FixedClock(), key=self.key, state=self.state)

    def anchor(self) -> dict[str, object]:
        return json.loads(self.state.docs[ANCHOR_NAME])


def _append(log: AuditLog, i: int = 0) -> int:
    return run(log.append(actor="page", op=f"op{i}", decision="admitted", rule="admitted"))


def filled(n: int = 8) -> tuple[Profile, AuditLog]:
    profile = Profile()
    log = profile.boot()
    for i in range(n):
        _append(log, i)
    return profile, log


def named(v: Verification) -> tuple[bool, str | None, int | None]:
    return v.ok, v.finding, v.broken_seq


def legacy_records(n: int) -> dict[int, dict[str, object]]:
    """An audit as the host wrote it before the anchor existed: hash-chained, no MAC."""
    records: dict[int, dict[str, object]] = {}
    prev = GENESIS
    for seq in range(1, n + 1):
        rec: dict[str, object] = {
            "seq": seq,
            "at": "2026-01-01T00:00:00.000+00:00",
            "env": "local",
            "actor": "page",
            "op": f"old{seq}",
            "decision": "admitted",
            "rule": "admitted",
            "project": None,
            "details": {},
            "prev": prev,
        }
        rec["hash"] = record_hash(rec)
        records[seq] = rec
        prev = str(rec["hash"])
    return records


def test_every_record_carries_a_mac_under_the_hosts_key_and_the_anchor_names_the_head() -> None:
    profile, log = filled(5)
    for seq, rec in profile.sink.records.items():
        assert isinstance(rec["mac"], str) and len(rec["mac"]) == 64, seq
    assert len({rec["mac"] for rec in profile.sink.records.values()}) == 5
    anchor = profile.anchor()
    assert (anchor["seq"], anchor["hash"], anchor["since"]) == (
        5,
        profile.sink.records[5]["hash"],
        1,
    )
    v = run(log.verify())
    assert (v.ok, v.checked, v.anchor_seq, v.unanchored_until) == (True, 5, 5, None)


def test_deleting_the_newest_records_is_named_a_truncated_tail() -> None:
    profile, log = filled(8)
    del profile.sink.records[8], profile.sink.records[7]
    v = run(log.verify())
    assert named(v) == (False, "truncated", 7)
    assert "7–8" in (v.reason or "")


def test_after_deleting_the_newest_records_and_a_restart_no_number_is_reused() -> None:
    profile, _ = filled(8)
    del profile.sink.records[8], profile.sink.records[7]
    log = profile.boot()
    assert named(run(log.verify())) == (False, "truncated", 7)
    assert run(log.head_seq()) == 8
    assert _append(log) == 9
    # the deleted records stay visible, now as a gap, and the new record links on after them
    assert named(run(log.verify())) == (False, "gap", 7)
    assert profile.sink.records[9]["prev"] != profile.sink.records[6]["hash"]


def test_the_running_host_never_reuses_a_number_after_its_newest_records_are_deleted() -> None:
    profile, log = filled(6)
    del profile.sink.records[6]
    assert _append(log) == 7
    assert named(run(log.verify())) == (False, "gap", 6)


@pytest.mark.parametrize("macs", ["kept", "stripped"])
def test_a_rewritten_and_rehashed_chain_is_named_rewritten(macs: str) -> None:
    profile, log = filled(8)
    records = profile.sink.records
    records[3]["decision"] = "refused"
    prev = records[2]["hash"]
    for seq in range(3, 9):
        records[seq]["prev"] = prev
        records[seq]["hash"] = record_hash(records[seq])
        if macs == "stripped":
            del records[seq]["mac"]
        prev = records[seq]["hash"]
    assert named(run(log.verify())) == (False, "rewritten", 3)
    assert named(run(profile.boot().verify())) == (False, "rewritten", 3)


def test_a_wiped_store_is_named_wiped_and_no_number_is_reused() -> None:
    profile, log = filled(5)
    profile.sink.records.clear()
    v = run(log.verify())
    assert named(v) == (False, "wiped", 1)
    assert "5" in (v.reason or "")
    restarted = profile.boot()
    assert named(run(restarted.verify())) == (False, "wiped", 1)
    assert _append(restarted) == 6
    assert named(run(restarted.verify())) == (False, "gap", 1)


@pytest.mark.parametrize("mac", ["copied", "absent", "made-up"])
def test_a_forged_linked_append_is_named_forged(mac: str) -> None:
    profile, log = filled(5)
    last = profile.sink.records[5]
    forged = copy.deepcopy(last)
    forged.update(seq=6, op="blocks.ratify", rule="human-ui", prev=last["hash"])
    if mac == "absent":
        del forged["mac"]
    elif mac == "made-up":
        forged["mac"] = "ab" * 32
    forged["hash"] = record_hash(forged)
    profile.sink.records[6] = forged
    assert named(run(log.verify())) == (False, "forged", 6)
    assert named(run(profile.boot().verify())) == (False, "forged", 6)


def test_a_forged_record_stays_named_forged_after_the_host_writes_on() -> None:
    profile, log = filled(5)
    forged = copy.deepcopy(profile.sink.records[5])
    forged.update(seq=6, op="forged", prev=forged["hash"])
    forged["hash"] = record_hash(forged)
    profile.sink.records[6] = forged
    with pytest.raises(Refused):  # the host's next number is taken: it reads the head again
        _append(log)
    assert _append(log) == 7
    assert _append(log) == 8
    assert profile.anchor()["seq"] == 8
    assert named(run(log.verify())) == (False, "forged", 6)
    assert named(run(profile.boot().verify())) == (False, "forged", 6)


def test_a_mac_stripped_from_one_record_is_named() -> None:
    profile, log = filled(5)
    del profile.sink.records[2]["mac"]
    assert named(run(log.verify())) == (False, "rewritten", 2)


def test_an_audit_from_before_the_anchor_verifies_marked_unanchored_until_its_first_mac() -> None:
    profile = Profile()
    profile.sink.records.update(legacy_records(4))
    log = profile.boot()
    v = run(log.verify())
    assert (v.ok, v.checked, v.unanchored_until, v.finding) == (True, 4, 4, None)
    assert _append(log) == 5
    assert profile.sink.records[5]["prev"] == profile.sink.records[4]["hash"]
    assert "mac" not in profile.sink.records[4] and "mac" in profile.sink.records[5]
    v = run(profile.boot().verify())
    assert (v.ok, v.checked, v.unanchored_until, v.anchor_seq) == (True, 5, 4, 5)


def test_once_adopted_an_old_audit_is_anchored_against_truncation_and_rewriting() -> None:
    profile = Profile()
    profile.sink.records.update(legacy_records(6))
    run(profile.boot().head_seq())  # the new host starts over the old audit
    del profile.sink.records[6]
    assert named(run(profile.boot().verify())) == (False, "truncated", 6)
    profile.sink.records.update(legacy_records(6))
    profile.sink.records[6]["op"] = "rewritten"
    profile.sink.records[6]["hash"] = record_hash(profile.sink.records[6])
    assert named(run(profile.boot().verify())) == (False, "rewritten", 6)


def test_a_lost_anchor_is_named_and_stays_named_after_a_restart() -> None:
    profile, log = filled(5)
    del profile.state.docs[ANCHOR_NAME]
    del profile.sink.records[5]  # what a lost anchor would let go unseen
    v = run(log.verify())
    assert named(v) == (False, "anchor-lost", 1) and "missing" in (v.reason or "")
    restarted = profile.boot()
    assert _append(restarted) == 5  # the store's head is all the host has left
    assert named(run(restarted.verify())) == (False, "anchor-lost", 1)


def test_an_anchor_that_does_not_carry_the_hosts_mac_is_named() -> None:
    profile, log = filled(6)
    anchor = profile.anchor()
    anchor["seq"], anchor["hash"] = 4, profile.sink.records[4]["hash"]  # hide two deletions
    profile.state.docs[ANCHOR_NAME] = json.dumps(anchor).encode()
    del profile.sink.records[6], profile.sink.records[5]
    v = run(log.verify())
    assert named(v) == (False, "anchor-lost", 1) and "does not" in (v.reason or "")


def test_records_under_another_key_are_not_this_hosts() -> None:
    profile, _ = filled(3)
    stranger = AuditLog(profile.sink, FixedClock(), key=MemoryAuditKey(), state=profile.state)
    assert named(run(stranger.verify()))[:2] == (False, "forged")


class FailingState(MemoryHostState):
    """HOST_DIR whose writes fail while ``broken`` is set (a full disk, a crash)."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    async def store(self, name: str, data: bytes) -> None:
        if self.broken:
            raise Refused(Code.STORAGE_FAILED, "The disk said no.")
        await super().store(name, data)


def test_an_anchor_left_behind_by_a_failed_write_fails_no_append_and_the_audit_verifies() -> None:
    profile = Profile()
    profile.state = FailingState()
    log = profile.boot()
    assert [_append(log, i) for i in range(3)] == [1, 2, 3]
    profile.state.broken = True  # the records commit, the anchor stays at 3
    assert [_append(log, i) for i in range(3, 6)] == [4, 5, 6]  # each `logged` is on disk
    assert sorted(profile.sink.records) == [1, 2, 3, 4, 5, 6]
    assert log.anchor_failures == 3 and profile.anchor()["seq"] == 3
    v = run(log.verify())
    assert (v.ok, v.checked, v.anchor_seq) == (True, 6, 3)
    profile.state.broken = False
    restarted = profile.boot()  # records past the anchor are the host's own: it anchors on
    assert _append(restarted) == 7
    v = run(restarted.verify())
    assert (v.ok, v.checked, v.anchor_seq) == (True, 7, 7)


class RefusingSink(MemoryAuditSink):
    """An audit store whose writes fail while ``broken`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    async def append(self, seq: int, record: dict[str, object]) -> None:
        if self.broken:
            raise Refused(Code.STORAGE_FAILED, "The disk said no.")
        await super().append(seq, record)


def test_the_anchor_never_runs_ahead_of_the_store() -> None:
    profile = Profile()
    profile.sink = RefusingSink()
    log = profile.boot()
    _append(log)
    _append(log)
    profile.sink.broken = True
    with pytest.raises(Refused):
        _append(log)
    assert profile.anchor()["seq"] == 2
    profile.sink.broken = False
    assert _append(log) == 3
    assert run(log.verify()).ok


class WatchedSink(MemoryAuditSink):
    """A store with all-or-nothing batch writes that take an event-loop turn; the HOST_DIR
    beside it notes, at each anchor write, the newest durable record."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def append(self, seq: int, record: dict[str, object]) -> None:
        await self.append_many([(seq, record)])

    async def append_many(self, records: list[tuple[int, dict[str, object]]]) -> None:
        await asyncio.sleep(0.001)
        for seq, record in records:
            await super().append(seq, record)
        self.writes += 1


class WatchingState(MemoryHostState):
    def __init__(self, sink: MemoryAuditSink) -> None:
        super().__init__()
        self.sink = sink
        self.anchored: list[tuple[int, int]] = []  # (anchor seq, newest durable seq)

    async def store(self, name: str, data: bytes) -> None:
        if name == ANCHOR_NAME:
            self.anchored.append((json.loads(data)["seq"], max(self.sink.records, default=0)))
        await super().store(name, data)


@pytest.mark.cpython_only  # its own event loop (see test_audit_batching.py)
def test_the_anchor_moves_once_per_group_commit_and_only_after_it_is_durable() -> None:
    async def scenario() -> tuple[list[int], WatchedSink, WatchingState, Verification]:
        sink = WatchedSink()
        state = WatchingState(sink)
        log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=state)
        seqs = await asyncio.gather(
            *(
                log.append(actor="a", op="x", decision="admitted", rule="admitted")
                for _ in range(60)
            )
        )
        return list(seqs), sink, state, await log.verify()

    seqs, sink, state, verdict = asyncio.run(scenario())
    assert seqs == list(range(1, 61)) and verdict.ok and verdict.anchor_seq == 60
    moves = state.anchored[1:]  # the first is the anchor made for the empty store at start
    assert state.anchored[0] == (0, 0)
    assert len(moves) == sink.writes < 60
    assert all(anchor <= durable for anchor, durable in moves)
    assert [a for a, _ in moves] == sorted(a for a, _ in moves)


def test_the_key_never_reaches_host_dir_or_the_store() -> None:
    secret = bytes(range(32))
    profile = Profile()
    profile.key = MemoryAuditKey(secret)
    log = profile.boot()
    _append(log)
    stored = b"".join(profile.state.docs.values()) + json.dumps(profile.sink.records).encode()
    assert secret.hex().encode() not in stored and secret not in stored
    assert secret.hex() not in repr(profile.key)


class HeldState(MemoryHostState):
    """HOST_DIR whose anchor writes wait until ``release`` is set (an anchor write in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.started = 0

    async def store(self, name: str, data: bytes) -> None:
        if name == ANCHOR_NAME and self.docs.get(name) is not None:
            self.started += 1
            await self.release.wait()
        await super().store(name, data)


@pytest.mark.cpython_only
def test_with_a_background_anchor_an_append_waits_for_its_commit_only() -> None:
    async def scenario() -> tuple[list[int], int, int, Verification, int]:
        sink, state = WatchedSink(), HeldState()  # each commit takes an event-loop turn
        log = AuditLog(
            sink, FixedClock(), key=MemoryAuditKey(), state=state, background_anchor=True
        )
        seqs = [
            await log.append(actor="a", op="x", decision="admitted", rule="admitted")
            for _ in range(5)
        ]
        held_at = json.loads(state.docs[ANCHOR_NAME])["seq"]  # still the first anchor's
        state.release.set()
        verdict = await log.verify()  # waits until the anchor caught up
        return seqs, held_at, state.started, verdict, json.loads(state.docs[ANCHOR_NAME])["seq"]

    seqs, held_at, started, verdict, anchored = asyncio.run(scenario())
    assert seqs == [1, 2, 3, 4, 5] and held_at == 0
    assert started == 2  # one write held (record 1), then one for the newest durable: 5
    assert (verdict.ok, verdict.anchor_seq, anchored) == (True, 5, 5)


@pytest.mark.cpython_only
def test_with_a_background_anchor_newest_records_deleted_before_it_lands_are_named() -> None:
    async def scenario() -> Verification:
        sink, state = WatchedSink(), HeldState()
        log = AuditLog(
            sink, FixedClock(), key=MemoryAuditKey(), state=state, background_anchor=True
        )
        for _ in range(5):
            await log.append(actor="a", op="x", decision="admitted", rule="admitted")
        del sink.records[5], sink.records[4]  # while the anchor write is still in flight
        state.release.set()
        return await log.verify()

    assert named(asyncio.run(scenario())) == (False, "truncated", 4)


class CountingKey(MemoryAuditKey):
    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    async def mac_many(self, items: list[bytes]) -> list[str]:
        self.batches += 1
        return await super().mac_many(items)


class CrossingsKey(MemoryAuditKey):
    """Counts every crossing into the key: single MACs and batches."""

    def __init__(self) -> None:
        super().__init__()
        self.singles = 0
        self.batches = 0

    async def mac(self, data: bytes) -> str:
        self.singles += 1
        return await super().mac(data)

    async def mac_many(self, items: list[bytes]) -> list[str]:
        self.batches += 1
        return await super().mac_many(items)


@pytest.mark.cpython_only  # its own event loop (see test_audit_batching.py)
@pytest.mark.parametrize("background", [False, True])
def test_each_commit_crosses_into_the_key_once_its_anchor_maced_with_its_records(
    background: bool,
) -> None:
    async def scenario() -> tuple[int, int, int, Verification]:
        sink, key = WatchedSink(), CrossingsKey()
        state = WatchingState(sink)
        log = AuditLog(sink, FixedClock(), key=key, state=state, background_anchor=background)
        await log.head_seq()  # the anchor made for the empty store at start: one single MAC
        singles = key.singles
        for i in range(6):
            await log.append(actor="a", op=f"x{i}", decision="admitted", rule="admitted")
        crossings = key.singles - singles, key.batches
        verdict = await log.verify()
        return crossings[0], crossings[1], sink.writes, verdict

    singles, batches, writes, verdict = asyncio.run(scenario())
    assert verdict.ok and verdict.anchor_seq == 6
    assert (singles, batches) == (0, writes) and writes == 6


@pytest.mark.cpython_only
def test_records_are_maced_once_per_written_batch_and_anchored_in_the_background() -> None:
    async def scenario() -> tuple[WatchedSink, CountingKey, WatchingState, Verification]:
        sink, key = WatchedSink(), CountingKey()
        state = WatchingState(sink)
        log = AuditLog(sink, FixedClock(), key=key, state=state, background_anchor=True)
        await asyncio.gather(
            *(
                log.append(actor="a", op="x", decision="admitted", rule="admitted")
                for _ in range(80)
            )
        )
        writes, batches = sink.writes, key.batches
        verdict = await log.verify()
        key.batches = batches
        sink.writes = writes
        return sink, key, state, verdict

    sink, key, state, verdict = asyncio.run(scenario())
    assert verdict.ok and verdict.anchor_seq == 80
    assert key.batches == sink.writes < 80
    moves = state.anchored[1:]
    assert 1 <= len(moves) <= sink.writes
    assert all(anchor <= durable for anchor, durable in moves)
