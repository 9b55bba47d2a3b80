"""Keeping the audit's anchor: loading the head, and moving the anchor after each durable
batch, at once or in the background at its own pace (SPEC §5; issues 13 and 18).

**The anchor.** Deleting the newest records, or all of them, leaves a chain that links; so the
host also keeps the head it last wrote, ``(seq, hash)``, outside the audit store: the document
:data:`ANCHOR_NAME` in HOST_DIR (:class:`~core.ports.HostState`; sealed in the browser), itself
MAC'd. It is a checkpoint in the sense of C2SP ``tlog-checkpoint`` / RFC 6962 signed tree
heads — an origin line, the size, the head hash, a signature — over a hash chain instead of a
Merkle tree, with an HMAC instead of a public-key signature (one party writes and verifies).
:meth:`AuditLog.verify` checks the store against it and names what it finds
(:data:`Finding`): a gap, a truncated tail, a rewritten chain, a wiped store, a forged
append, a lost anchor. The head the host appends after is the larger of the store's and the
anchor's, so a sequence number is never handed out twice and a deletion stays visible as a
gap. Records written before the anchor existed carry no MAC: they still verify, by hash chain
only, reported as ``unanchored_until``; the anchor's ``since`` says where the MACs begin.

**The anchor's pace** (issue 18, round five). With ``background_anchor``, a batch holding a
record someone waited for (a strict append: a write, a refusal, any call not ``read_only``)
moves the anchor at once, as every batch used to; a batch holding only grouped read records
moves it at most once in :data:`ANCHOR_READS_INTERVAL_MS` (counted from the start of the
anchor write before; the write then covers every batch durable by then). A steady stream of
reads thus costs one anchor write a quarter of a second instead of one a commit — each a MAC,
a seal and an OPFS write whose continuations share the worker's one thread with the reads
(docs/operations.md, "Round five"). :meth:`AuditLog.verify` (and anything else that waits for
the anchor) does not wait for the interval. The anchor trails the store by at most that
interval of read records plus one write; if the host stops inside it, those durable read
records are protected by their MACs against edits and forgery, not against deletion of the
newest (docs/security.md, "What the anchor cannot detect"). A write's record never waits.
"""

from __future__ import annotations

import asyncio
import hmac

from core.audit.record import ANCHOR_NAME, GENESIS, AuditAnchor, _mac_input
from core.audit.verify import AnchorProblem, _check_record
from core.ports import AuditKey, AuditSink, HostState
from core.refusals import Refused

ANCHOR_READS_INTERVAL_MS = 250
"""With ``background_anchor``, a batch holding only grouped (read) records moves the anchor at
most once in this many ms (measured from the start of the anchor write before); a batch
holding any other record moves it at once (module docstring, "The anchor's pace")."""


class _AnchorKeeper:
    """The part of :class:`core.audit.AuditLog` that keeps its anchor (module docstring).
    The state below is set by ``AuditLog.__init__``."""

    _sink: AuditSink
    _key: AuditKey
    _state: HostState
    anchor_failures: int
    _background: bool
    _head: tuple[int, str] | None
    _anchor: AuditAnchor | None
    _durable_seq: int
    _anchor_due: tuple[int, str, AuditAnchor | None] | None
    _anchored_seq: int
    _anchoring: asyncio.Future[None] | None
    _reads_interval: float
    _anchor_urgent: bool
    _anchor_started: float
    _anchor_pause: asyncio.Future[None] | None
    _anchor_waiters: list[asyncio.Future[None]]

    async def _macs_hold(self, records: list[dict[str, object]]) -> list[bool]:
        """For each record, whether it carries a valid MAC under this host's key."""
        want = await self._key.mac_many([_mac_input(str(rec.get("hash"))) for rec in records])
        return [
            isinstance(rec.get("mac"), str) and hmac.compare_digest(str(rec["mac"]), mac)
            for rec, mac in zip(records, want, strict=True)
        ]

    async def _signed_anchor(
        self, seq: int, hash_: str, since: int, foreign_from: int | None
    ) -> AuditAnchor:
        draft = AuditAnchor(
            seq=seq, hash=hash_, since=since, foreign_from=foreign_from, mac=GENESIS
        )
        return draft.model_copy(update={"mac": await self._key.mac(draft.checkpoint())})

    async def _read_anchor(self) -> tuple[AuditAnchor | None, AnchorProblem | None]:
        """The stored anchor if it opens and carries this host's MAC, else why not."""
        try:
            raw = await self._state.load(ANCHOR_NAME)
        except Refused:
            return None, "unreadable"
        if raw is None:
            return None, "missing"
        try:
            anchor = AuditAnchor.model_validate_json(raw)
        except ValueError:
            return None, "unreadable"
        if not hmac.compare_digest(anchor.mac, await self._key.mac(anchor.checkpoint())):
            return None, "invalid"
        return anchor, None

    async def _store_anchor(self, anchor: AuditAnchor) -> None:
        """Write ``anchor``; a failure is counted, never raised (the anchor stays behind)."""
        try:
            await self._state.store(ANCHOR_NAME, anchor.model_dump_json().encode())
        except Exception:  # any storage failure: the records are durable anyway
            self.anchor_failures += 1
            return
        self._anchor = anchor

    async def _first_foreign(self, anchor: AuditAnchor, top: int) -> int | None:
        """The first record in ``anchor.seq + 1 .. top`` that does not continue the anchored
        chain with a valid MAC, or None when they all do (the host's own, written before a
        crash stopped the anchor following them)."""
        expected = anchor.hash
        for start in range(anchor.seq + 1, top + 1, 500):
            end = min(start + 499, top)
            rows = {r.seq: r.record for r in await self._sink.range(start, end)}
            present = [rows[seq] for seq in range(start, end + 1) if seq in rows]
            holds = iter(await self._macs_hold(present))
            for seq in range(start, end + 1):
                rec = rows.get(seq)
                if rec is None or _check_record(seq, rec, expected) is not None:
                    return seq
                if not next(holds):
                    return seq
                expected = str(rec["hash"])
        return None

    async def _load_head(self) -> tuple[int, str]:
        """The head to append after: the larger of the store's and the anchor's.

        With no usable anchor (first run over an audit from before the anchor, a fresh
        profile, or an anchor lost), one is written at once for the store's head, MACs
        beginning with the next record — before any MAC'd record can be committed.
        """
        if self._head is not None:
            return self._head
        await self._anchor_caught_up()
        anchor, _ = await self._read_anchor()  # first: the anchor is never ahead of the store
        last = await self._sink.last()
        store = (0, GENESIS) if last is None else (last.seq, str(last.record["hash"]))
        if anchor is None:
            anchor = await self._signed_anchor(store[0], store[1], store[0] + 1, None)
            await self._store_anchor(anchor)
            self._anchor = anchor
            self._head = store
        elif store[0] > anchor.seq:
            if anchor.foreign_from is None:
                foreign = await self._first_foreign(anchor, store[0])
                if foreign is not None:
                    anchor = await self._signed_anchor(
                        anchor.seq, anchor.hash, anchor.since, foreign
                    )
                    await self._store_anchor(anchor)
            self._anchor = anchor
            self._head = store
        else:  # the store is at or behind the anchor: never hand out a number twice
            self._anchor = anchor
            self._head = (anchor.seq, anchor.hash)
        self._durable_seq = self._anchored_seq = self._head[0]
        return self._head

    async def _anchor_after(
        self, seq: int, hash_: str, signed: AuditAnchor | None = None, *, urgent: bool = True
    ) -> None:
        """The records up to ``seq`` are durable: anchor them, now or in the background.
        ``signed`` is that anchor already MAC'd (with its batch), when it was; ``urgent`` is
        False when the batch held only grouped (read) records — in the background its anchor
        write then waits for the read interval (module docstring, "The anchor's pace")."""
        self._durable_seq = max(self._durable_seq, seq)
        self._anchor_due = (seq, hash_, signed)
        if urgent:
            self._hurry_anchor()
        if not self._background:
            await self._drain_anchor()
        elif self._anchoring is None:
            self._anchoring = asyncio.ensure_future(self._drain_anchor())

    async def _drain_anchor(self) -> None:
        """Write anchors until none is due, always for the newest durable record (one write
        covers every batch that became durable while the one before it was in flight)."""
        try:
            while self._anchor_due is not None:
                if self._background:
                    await self._pause_for_reads()
                    self._anchor_started = asyncio.get_running_loop().time()
                seq, hash_, signed = self._anchor_due
                self._anchor_due = None
                self._anchor_urgent = False
                await self._advance_anchor(seq, hash_, signed)
                self._anchored_seq = max(self._anchored_seq, seq)
                self._wake_anchor_waiters()
        finally:
            if self._background:
                self._anchoring = None
            self._wake_anchor_waiters()

    def _hurry_anchor(self) -> None:
        """The anchor due must not wait for the read interval: a record someone waited for
        is durable, or someone waits for the anchor (:meth:`_anchor_caught_up`)."""
        self._anchor_urgent = True
        pause = self._anchor_pause
        if pause is not None and not pause.done():
            pause.set_result(None)

    async def _pause_for_reads(self) -> None:
        """Before a background anchor write that only grouped (read) records made due: wait
        until :data:`ANCHOR_READS_INTERVAL_MS` has passed since the last anchor write began,
        or until :meth:`_hurry_anchor`."""
        if self._anchor_urgent:
            return
        loop = asyncio.get_running_loop()
        wait = self._anchor_started + self._reads_interval - loop.time()
        if wait <= 0:
            return
        pause: asyncio.Future[None] = loop.create_future()
        self._anchor_pause = pause
        timer = loop.call_later(wait, _resolve, pause)
        try:
            await pause
        finally:
            timer.cancel()
            self._anchor_pause = None

    def _wake_anchor_waiters(self) -> None:
        waiters, self._anchor_waiters = self._anchor_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _anchor_caught_up(self) -> None:
        """Wait until the anchor write for every record durable now has been made (at once
        without a background anchor task)."""
        target = self._durable_seq
        if self._anchoring is not None and self._anchored_seq < target:
            self._hurry_anchor()
        while self._anchoring is not None and self._anchored_seq < target:
            waiter = asyncio.get_running_loop().create_future()
            self._anchor_waiters.append(waiter)
            await waiter

    async def _advance_anchor(self, seq: int, hash_: str, signed: AuditAnchor | None) -> None:
        """Anchor the durable record ``seq``: with ``signed`` when it is that very anchor
        (MAC'd with its batch, and ``since``/``foreign_from`` unchanged since), else MAC'd
        now."""
        anchor = self._anchor
        if anchor is None:  # never: the head (and so the anchor) is loaded before a record
            return
        if signed is not None and (
            signed.seq,
            signed.hash,
            signed.since,
            signed.foreign_from,
        ) == (seq, hash_, anchor.since, anchor.foreign_from):
            await self._store_anchor(signed)
            return
        try:
            moved = await self._signed_anchor(seq, hash_, anchor.since, anchor.foreign_from)
        except Exception:  # the key failed: the anchor stays behind
            self.anchor_failures += 1
            return
        await self._store_anchor(moved)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
