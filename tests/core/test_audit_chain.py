"""The audit hash chain (core/audit.py; SPEC §5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.audit import GENESIS, AuditLog, record_hash
from core.memory.adapters import FixedClock, MemoryAuditKey, MemoryAuditSink, MemoryHostState
from tests.support import run


def filled(n: int) -> tuple[AuditLog, MemoryAuditSink]:
    sink = MemoryAuditSink()
    log = AuditLog(sink, FixedClock(), key=MemoryAuditKey(), state=MemoryHostState())
    for i in range(n):
        run(
            log.append(
                actor="page", op=f"op{i}", decision="admitted", rule="admitted", details={"i": i}
            )
        )
    return log, sink


def test_records_link_each_to_the_hash_of_the_one_before() -> None:
    _, sink = filled(5)
    assert sink.records[1]["prev"] == GENESIS
    for seq in range(2, 6):
        assert sink.records[seq]["prev"] == sink.records[seq - 1]["hash"]
        assert sink.records[seq]["hash"] == record_hash(sink.records[seq])


def test_append_returns_the_durable_sequence_number() -> None:
    log, sink = filled(3)
    seq = run(log.append(actor="page", op="x", decision="refused", rule="path-invalid"))
    assert seq == 4 and 4 in sink.records


def test_an_intact_chain_verifies() -> None:
    log, _ = filled(12)
    assert run(log.verify(batch=5)).model_dump() == {
        "ok": True,
        "checked": 12,
        "broken_seq": None,
        "reason": None,
        "finding": None,
        "unanchored_until": None,
        "anchor_seq": 12,
    }


def test_an_edited_record_is_named_by_verify() -> None:
    log, sink = filled(10)
    sink.records[6]["decision"] = "refused"
    v = run(log.verify(batch=4))
    assert (v.ok, v.broken_seq, v.reason) == (False, 6, "record content does not match its hash")


def test_a_deleted_record_is_named_by_verify() -> None:
    log, sink = filled(10)
    del sink.records[4]
    v = run(log.verify())
    assert (v.ok, v.broken_seq, v.reason) == (False, 4, "record missing")


def test_a_rehashed_forgery_is_named_at_that_record_by_its_mac() -> None:
    log, sink = filled(6)
    rec = sink.records[3]
    rec["rule"] = "forged"
    rec["hash"] = record_hash(rec)
    v = run(log.verify())
    assert (v.ok, v.broken_seq, v.finding) == (False, 3, "rewritten")


def test_a_second_writer_cannot_take_a_sequence_number() -> None:
    sink = MemoryAuditSink()
    key, state = MemoryAuditKey(), MemoryHostState()  # one host's key and HOST_DIR, two logs
    first = AuditLog(sink, FixedClock(), key=key, state=state)
    second = AuditLog(sink, FixedClock(), key=key, state=state)
    run(first.head_seq())
    run(second.head_seq())
    run(first.append(actor="a", op="x", decision="admitted", rule="admitted"))
    with pytest.raises(Exception):  # noqa: B017,PT011 — the sink's refusal, whatever its type
        run(second.append(actor="b", op="y", decision="admitted", rule="admitted"))
    # the failed writer reloads the head and appends after the real last record
    assert run(second.append(actor="b", op="y", decision="admitted", rule="admitted")) == 2
    assert run(first.verify()).ok


def test_page_lists_newest_first_before_a_sequence_number() -> None:
    log, _ = filled(7)
    assert [r["seq"] for r in run(log.page(limit=3))] == [7, 6, 5]
    assert [r["seq"] for r in run(log.page(before=3, limit=10))] == [2, 1]


FIELDS = ["at", "env", "actor", "op", "decision", "rule", "project", "prev", "details"]


@settings(max_examples=60)
@given(seq=st.integers(1, 8), field=st.sampled_from(FIELDS), value=st.text(max_size=5))
def test_any_single_field_edit_is_detected_at_that_record(seq: int, field: str, value: str) -> None:
    log, sink = filled(8)
    original = sink.records[seq][field]
    new = {"tampered": value} if field == "details" else value
    if new == original:
        return
    sink.records[seq][field] = new
    v = run(log.verify(batch=3))
    assert not v.ok and v.broken_seq == seq


def test_records_say_when_in_rfc3339_utc_with_z_and_older_offset_records_still_verify(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 14: one time format. A record's ``at`` is the host's one instant format (``Z``);
    records the previous build wrote with ``+00:00`` are kept as stored and verify, and the
    chain continues after them."""
    from datetime import UTC, datetime

    import core.audit

    def previous_format(ms: int) -> str:  # what records said before: isoformat's "+00:00"
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")

    sink = MemoryAuditSink()
    clock = FixedClock()
    state, key = MemoryHostState(), MemoryAuditKey()
    monkeypatch.setattr(core.audit, "instant_iso", previous_format)
    old = AuditLog(sink, clock, key=key, state=state)
    for i in range(3):
        run(old.append(actor="page", op=f"old{i}", decision="admitted", rule="admitted"))
    monkeypatch.undo()
    log = AuditLog(sink, clock, key=key, state=state)  # the next build, over the same audit
    for i in range(2):
        run(log.append(actor="page", op=f"new{i}", decision="admitted", rule="admitted"))
    assert [sink.records[s]["at"] for s in (1, 5)] == [
        "2026-01-01T00:00:00.000+00:00",
        "2026-01-01T00:00:00.000Z",
    ]
    v = run(log.verify())
    assert (v.ok, v.checked, v.finding) == (True, 5, None)
