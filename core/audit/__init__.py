"""The audit: an append-only, hash-chained, keyed and anchored record of every host decision
(SPEC §5; issue 13).

The package holds the contract and the machinery beside it (issue 35):

- :mod:`core.audit.record` — the record, its hash and MAC input, the anchor document (pure);
- :mod:`core.audit.verify` — what a walk of the chain finds and how it says so (pure);
- :mod:`core.audit.anchor` — loading the head and moving the anchor, and its pace;
- :mod:`core.audit.group_commit` — one writer, batched commits, grouped read records;
- here, :class:`AuditLog`, which appends, chains, reads and verifies, built on those parts.

Numbering, stamping and chaining a record stay here, beside :meth:`AuditLog.append`: they read
:func:`record_hash` and the clock's format at call time from this package's names.

One :class:`AuditLog` writes at a time (the host holds the storage lock, SPEC §3). Each
``append`` is durable before it returns, so the sequence number it returns can be reported as
``logged`` (seed 002 §3).
"""

from __future__ import annotations

import asyncio

from core.audit.anchor import ANCHOR_READS_INTERVAL_MS
from core.audit.group_commit import (
    CHAIN_STEP,
    GROUP_WINDOW_MS,
    MAX_BATCH,
    BatchAuditSink,
    _GroupCommit,
    _Queued,
)
from core.audit.record import (
    ANCHOR_NAME,
    GENESIS,
    AuditAnchor,
    AuditRecord,
    Decision,
    DetailValue,
    record_hash,
)
from core.audit.verify import _LOST, Finding, Verification, _check_record, _Walk
from core.ports import AuditKey, AuditSink, Clock, HostState
from core.refusals import Code, Refused
from core.time import instant_iso

__all__ = [
    "ANCHOR_NAME",
    "ANCHOR_READS_INTERVAL_MS",
    "GENESIS",
    "GROUP_WINDOW_MS",
    "MAX_BATCH",
    "AuditAnchor",
    "AuditLog",
    "AuditRecord",
    "BatchAuditSink",
    "Decision",
    "Finding",
    "Verification",
    "record_hash",
]


class AuditLog(_GroupCommit):
    """Appends hash-chained, MAC'd records to an :class:`~core.ports.AuditSink`, keeps their
    anchor in ``state`` (HOST_DIR) and verifies both (:mod:`core.audit.anchor`).

    ``key`` MACs records and the anchor that follows them (one
    :meth:`~core.ports.AuditKey.mac_many` per written batch); ``env`` is the environment this
    host acts for (``"local"`` until the host knows its envKey; settable); ``clock`` stamps
    records. ``background_anchor`` is fixed when the host is composed: False (the default)
    makes each append wait until its batch's anchor write is done; True — for a host running
    an event loop (the E1 worker, an ASGI server) — moves the anchor in a task of its own,
    beside the appends that follow, so an append costs one durable commit and not an anchor
    write too (figures: docs/operations.md), and the anchor trails the store by at most the
    write in flight — or, for read records only, by at most ``anchor_reads_interval_ms``
    (default :data:`ANCHOR_READS_INTERVAL_MS`) and one write (:mod:`core.audit.anchor`, "The
    anchor's pace"). ``anchor_failures`` counts anchor writes that failed (their records
    stayed durable).
    """

    def __init__(
        self,
        sink: AuditSink,
        clock: Clock,
        *,
        key: AuditKey,
        state: HostState,
        env: str = "local",
        background_anchor: bool = False,
        anchor_reads_interval_ms: int = ANCHOR_READS_INTERVAL_MS,
    ) -> None:
        self._sink = sink
        self._clock = clock
        self._key = key
        self._state = state
        self.env = env
        self.anchor_failures = 0
        self._background = background_anchor
        self._lock = asyncio.Lock()
        self._head: tuple[int, str] | None = None  # the newest chained record
        self._unchained: list[_Queued] = []  # numbered after the head, chained at the commit
        self._anchor: AuditAnchor | None = None
        self._queue: list[_Queued] = []
        self._writing = False
        self._durable_seq = 0  # the newest record known durable
        # durable, not yet anchored: (seq, hash, that anchor MAC'd with its batch or None)
        self._anchor_due: tuple[int, str, AuditAnchor | None] | None = None
        self._anchored_seq = 0  # the newest record an anchor write was made for
        self._anchoring: asyncio.Future[None] | None = None  # the background anchor task
        self._reads_interval = anchor_reads_interval_ms / 1000
        self._anchor_urgent = False  # the anchor due covers a record someone waited for
        self._anchor_started = float("-inf")  # loop time the last anchor write began
        self._anchor_pause: asyncio.Future[None] | None = None  # a read-only anchor's wait
        self._anchor_waiters: list[asyncio.Future[None]] = []
        self._flush: asyncio.Task[None] | None = None  # commits grouped records
        self._grouped_lock = asyncio.Lock()  # one grouped writer at a time (flush, settled)

    # --- appending -------------------------------------------------------------------------

    async def append(
        self,
        *,
        actor: str,
        op: str,
        decision: Decision,
        rule: str,
        project: str | None = None,
        details: dict[str, DetailValue] | None = None,
        grouped: bool = False,
    ) -> int:
        """Append one record and return its sequence number.

        Strict (the default): returns once the record is durable. ``grouped`` (a call that
        changed nothing, :mod:`core.audit.group_commit` "Grouped reads"): returns at once when
        an event loop runs, the record committed within :data:`GROUP_WINDOW_MS` (:meth:`is_durable`
        tells which). ``details`` must be non-secret scalars (at most 32 keys).
        Raises ``storage-failed`` when the sink refuses (e.g. another writer took the
        sequence number) or the key cannot MAC; the in-memory head is then read again.
        Concurrent appends share writes (:mod:`core.audit.group_commit`); an uncontended
        strict append needs no running event loop.
        """
        if grouped:
            try:
                loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            grouped = loop is not None
        async with self._lock:
            seq_prev, hash_prev = await self._load_head()
            if not grouped and self._unchained:
                seq_prev, hash_prev = self._chain()  # a strict record links to all before it
            seq = self._top_seq(seq_prev) + 1
            fields: dict[str, object] = {
                "seq": seq,
                "at": instant_iso(self._clock.now_ms()),
                "env": self.env,
                "actor": actor,
                "op": op,
                "decision": decision,
                "rule": rule,
                "project": project,
                "details": dict(details or {}),
                "prev": GENESIS if grouped else hash_prev,  # a grouped one's: at its commit
            }
            fields["hash"] = GENESIS if grouped else record_hash(fields)
            # the guard for every caller: the record is valid before it gets its number; a
            # strict model's fields are then its JSON data (no dump); the MAC comes at the write
            AuditRecord.model_validate(fields)
            if grouped:
                assert loop is not None
                due = loop.time() + GROUP_WINDOW_MS / 1000
                mine = _Queued(seq, None, fields, grouped=True, due=due)
                self._unchained.append(mine)
            else:
                mine = _Queued(seq, str(fields["hash"]), fields)
                self._head = (seq, mine.hash or GENESIS)
            self._queue.append(mine)
            if grouped:
                if self._flush is None or self._flush.done():
                    self._flush = asyncio.ensure_future(self._flush_grouped())
                return mine.seq
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

    def _top_seq(self, head_seq: int) -> int:
        """The newest number handed out: the last unchained record's, else the head's."""
        return self._unchained[-1].seq if self._unchained else head_seq

    def _chain(self, limit: int | None = None) -> tuple[int, str]:
        """Chain the numbered, unchained (grouped) records onto the head — every one, or the
        oldest ``limit`` — in number order: its ``prev`` is the hash of the record before it,
        its ``hash`` its own (the same bytes an append that chained it at once would have
        made: every other field was fixed when it was numbered). Returns the new head.
        Synchronous: nothing runs in between."""
        if self._head is None:  # never: a record is numbered only after the head is loaded
            raise Refused(Code.STORAGE_FAILED, "The audit's head is unknown.")
        seq, prev = self._head
        todo = self._unchained if limit is None else self._unchained[:limit]
        for q in todo:
            q.data["prev"] = prev
            prev = record_hash(q.data)
            q.data["hash"] = q.hash = prev
            seq = q.seq
        del self._unchained[: len(todo)]
        self._head = (seq, prev)
        return self._head

    async def _chain_in_steps(self) -> None:
        """:meth:`_chain` the records waiting, :data:`CHAIN_STEP` at a time with a turn of the
        event loop between two steps, so a call that arrives meanwhile is answered rather than
        waiting for the whole batch's hashing (issue 18, round four); the last step chains
        every record numbered by then."""
        steps = -(-len(self._unchained) // CHAIN_STEP)
        for _ in range(steps - 1):
            self._chain(CHAIN_STEP)
            await asyncio.sleep(0)
        if self._unchained:
            self._chain()

    def is_durable(self, seq: int) -> bool:
        """True when record ``seq`` is known durable (its batch was written)."""
        return seq <= self._durable_seq

    # --- reading ---------------------------------------------------------------------------

    async def head_seq(self) -> int:
        """The sequence number the audit has reached (0 when empty): the newest record, or
        the anchored head when newer records were deleted — the next append gets one more."""
        async with self._lock:
            return self._top_seq((await self._load_head())[0])

    async def page(self, *, before: int | None = None, limit: int = 100) -> list[dict[str, object]]:
        """Up to ``limit`` records, newest first, with ``seq < before`` when given (grouped
        records still pending are written first)."""
        await self.settled()
        last = await self._sink.last()
        if last is None:
            return []
        top = last.seq if before is None else min(before - 1, last.seq)
        if top < 1:
            return []
        rows = await self._sink.range(max(1, top - limit + 1), top)
        return [r.record for r in reversed(rows)]

    async def verify(self, batch: int = 500) -> Verification:
        """Walk the whole chain against the stored anchor; name the first thing found wrong
        (:data:`Finding`), in sequence order. Waits first for the anchor write of every
        record durable now (so what was just appended is anchored when it is checked), after
        writing the grouped records still pending."""
        await self.settled()
        await self._anchor_caught_up()
        anchor, problem = await self._read_anchor()  # first: it is never ahead of the store
        last = await self._sink.last()
        walk = _Walk(anchor, problem)
        if last is None:
            if anchor is not None and anchor.seq > 0:
                return walk.broken(
                    "wiped",
                    1,
                    f"the audit store is empty, but its anchor says it reached record "
                    f"{anchor.seq}: it was wiped",
                )
            return walk.intact()
        expected_prev = GENESIS
        for start in range(1, last.seq + 1, batch):
            end = min(start + batch - 1, last.seq)
            by_seq = {r.seq: r.record for r in await self._sink.range(start, end)}
            holds = dict(zip(by_seq, await self._macs_hold(list(by_seq.values())), strict=True))
            for seq in range(start, end + 1):
                walk.checked += 1
                rec = by_seq.get(seq)
                if rec is None:
                    return walk.broken("gap", seq, "record missing")
                broken = _check_record(seq, rec, expected_prev)
                if broken is not None:
                    return walk.broken(broken[0], seq, broken[1])
                found = walk.keyed(seq, rec, holds[seq])
                if found is not None:
                    return walk.broken(found[0], seq, found[1])
                expected_prev = str(rec["hash"])
        if anchor is None and walk.seen_mac:
            return walk.broken("anchor-lost", walk.first_mac or 1, _LOST[problem or "missing"])
        if anchor is not None and last.seq < anchor.seq:
            return walk.broken(
                "truncated",
                last.seq + 1,
                f"records {last.seq + 1}–{anchor.seq} are missing: the anchor says the audit "
                f"reached record {anchor.seq}, so its newest records were deleted",
            )
        return walk.intact()
