"""The audit's group commit: one writer, batches MAC'd and stored together, and grouped
read records committed within a window (SPEC §5; issues 9 and 18).

**Group commit.** Records are chained (sequence number, ``prev``, ``hash``) the moment
``append`` is called, in call order, and written by one writer: while a write is in flight,
later appends queue, and the next write takes the whole queue (at most :data:`MAX_BATCH`
records), MACs it in one :meth:`~core.ports.AuditKey.mac_many` call and stores it in one
durable transaction when the sink offers :class:`BatchAuditSink`. Calls that arrive together
(concurrent host calls) thus share one commit instead of paying one each; a lone call still
waits only for its own. A batch is written only after every earlier one is durable, and each
``append`` returns only once its own record is. The anchor is moved to a batch's last record
only after the batch is durable (so a crash leaves the anchor behind the store, never ahead of
it) — before the batch's appends return, or, with ``background_anchor``, in a task of its own
beside the appends that follow (:class:`AuditLog`). A failed anchor write does not fail an
append whose record is durable: the anchor stays behind (records past it are still checked, by
link and MAC) and the next batch moves it. If a record write fails, that record and every
record chained after it fail (their callers get the error and no ``logged``), and the head is
read again — the chain on disk never has a gap.

**Grouped reads** (issue 18). :meth:`AuditLog.append` with ``grouped=True`` — only for a call
that changed nothing (an operation declared ``read_only``) — chains the record at once and
returns its sequence number *before* it is durable; the record is written with the next batch,
at the latest :data:`GROUP_WINDOW_MS` later (a flush task), or sooner when a strict append
comes (batches are written in chain order, so a strict record is durable only after every
grouped record before it). The caller reports the number as pending, never as durable. A
killed tab therefore loses at most the grouped read records of the last window; never a
mutating call's, whose append still returns only once its own record is durable. Without a
running event loop (no flush task can be scheduled) a grouped append is strict.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

from core.audit.anchor import _AnchorKeeper
from core.audit.record import GENESIS, AuditAnchor, _mac_input
from core.ports import AuditSink
from core.refusals import Code, Refused

MAX_BATCH = 256
"""At most this many records go to the sink in one write."""

GROUP_WINDOW_MS = 50
"""A grouped (read) record's commit starts at the latest this many ms after its append (or
when the write in flight then is done)."""

CHAIN_STEP = 8
"""A commit chains at most this many grouped records between two turns of the event loop."""


@runtime_checkable
class BatchAuditSink(AuditSink, Protocol):
    """An :class:`~core.ports.AuditSink` that can also store several records in one durable,
    all-or-nothing write (IndexedDB: one ``strict`` transaction)."""

    async def append_many(self, records: list[tuple[int, dict[str, object]]]) -> None:
        """Store every ``(seq, record)`` or none; raise ``storage-failed`` if any ``seq`` is
        taken."""
        ...


class _Queued:
    """One numbered record waiting to be written, and how its ``append`` learns the outcome:
    ``turn`` (only when it had to wait) resolves True to make it the writer, or False once
    another writer settled it. ``hash`` is None while a grouped record is numbered but not
    yet chained (:meth:`AuditLog._chain`); ``due`` is when, by the event loop's clock, a
    grouped record's commit must start at the latest."""

    __slots__ = ("data", "due", "error", "grouped", "hash", "seq", "settled", "turn")

    def __init__(
        self,
        seq: int,
        hash_: str | None,
        data: dict[str, object],
        *,
        grouped: bool = False,
        due: float = 0.0,
    ) -> None:
        self.grouped = grouped  # no caller waits for it (module docstring, "Grouped reads")
        self.seq = seq
        self.hash = hash_
        self.data = data
        self.due = due
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


class _GroupCommit(_AnchorKeeper):
    """The part of :class:`core.audit.AuditLog` that writes its records (module docstring):
    the queue, the writer's turn, the flush of grouped records. The state below is set by
    ``AuditLog.__init__``; the chaining of grouped records is ``AuditLog``'s
    (:meth:`_chain_in_steps`)."""

    _lock: asyncio.Lock
    _unchained: list[_Queued]
    _queue: list[_Queued]
    _writing: bool
    _flush: asyncio.Task[None] | None
    _grouped_lock: asyncio.Lock

    async def _chain_in_steps(self) -> None:
        """Give the queued grouped records their ``prev`` and ``hash`` (AuditLog's)."""
        raise NotImplementedError

    async def _flush_grouped(self) -> None:
        """Commit the grouped records: each batch's commit starts at the latest when the
        :data:`GROUP_WINDOW_MS` of its oldest record ends (it sleeps until then), and takes
        every grouped record waiting at that moment (as the writer, or after the writer in
        turn). Records appended while a batch is written wait for their own window rather
        than a commit right behind it, so commits — each an IndexedDB transaction and an
        anchor write on the worker's one thread — come about once a window, not back to back
        (issue 18, round four). A failure is the records' own (no caller waits for them:
        module docstring)."""
        loop = asyncio.get_running_loop()
        while True:
            waiting = self._grouped_waiting()
            if not waiting:
                return
            delay = waiting[0].due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
                continue  # a strict append or settled() may have written them meanwhile
            async with self._grouped_lock:
                await self._write_grouped_locked(once=True)

    def _grouped_waiting(self) -> list[_Queued]:
        return [q for q in self._queue if q.grouped and not q.settled]

    async def _write_grouped(self) -> None:
        """Write every grouped record queued now, as the writer or after it in turn."""
        async with self._grouped_lock:
            await self._write_grouped_locked()

    async def _write_grouped_locked(self, *, once: bool = False) -> None:
        """Write the grouped records waiting now; unless ``once``, again until none waits
        (more may come while one batch is written)."""
        while True:
            async with self._lock:
                waiting = self._grouped_waiting()
                if not waiting:
                    return
                mine = waiting[-1]
                if self._writing:
                    mine.turn = asyncio.get_running_loop().create_future()
                else:
                    self._writing = True
            if mine.turn is not None and not await mine.turn:
                if once:
                    return
                continue  # another writer wrote it
            try:
                await self._write_until(mine)
            finally:
                self._hand_over()
            if once:
                return

    async def settled(self) -> None:
        """Write every grouped record appended so far now (or see it fail), without waiting
        for the window: what reading the audit does first, so a page or a verification
        shows every record chained before it."""
        if any(q.grouped for q in self._queue):
            await self._write_grouped()

    async def _write_until(self, mine: _Queued) -> None:
        """As the writer: MAC and write queued batches, in order, until ``mine`` is settled;
        after each batch is durable, anchor its last record (:meth:`_anchor_after`), then
        settle it. The anchor that will follow a batch is MAC'd in the batch's own
        :meth:`~core.ports.AuditKey.mac_many` call (one crossing into the key per commit, not
        two: issue 18, round five); it is written only once the batch is durable, as before."""
        while not mine.settled:
            await self._chain_in_steps()  # the batch's grouped records get prev and hash
            batch = self._queue[:MAX_BATCH]
            del self._queue[:MAX_BATCH]
            written = 0
            error: Exception | None = None
            signed: AuditAnchor | None = None
            try:
                draft = self._draft_anchor(batch[-1])
                inputs = [_mac_input(str(q.hash)) for q in batch]
                if draft is not None:
                    inputs.append(draft.checkpoint())
                macs = await self._key.mac_many(inputs)
                if draft is not None:
                    signed = draft.model_copy(update={"mac": macs.pop()})
                for q, mac in zip(batch, macs, strict=True):
                    q.data["mac"] = mac
                if len(batch) > 1 and isinstance(self._sink, BatchAuditSink):
                    await self._sink.append_many([(q.seq, q.data) for q in batch])
                    written = len(batch)
                else:
                    for q in batch:
                        await self._sink.append(q.seq, q.data)
                        written += 1
            except Exception as exc:
                error = exc
            except BaseException:  # cancelled mid-write: the outcome is unknown
                self._fail(batch, written, Refused(Code.STORAGE_FAILED))
                raise
            try:
                if written:
                    last = batch[written - 1]
                    await self._anchor_after(
                        last.seq,
                        str(last.hash),
                        signed if written == len(batch) else None,
                        urgent=not all(q.grouped for q in batch[:written]),
                    )
            except BaseException:  # cancelled while anchoring: what was written is durable
                self._fail(batch, written, error or Refused(Code.STORAGE_FAILED))
                raise
            if error is not None:
                self._fail(batch, written, error)
                continue
            for q in batch:
                q.settle()

    def _draft_anchor(self, last: _Queued) -> AuditAnchor | None:
        """The anchor to write once ``last`` (a batch's last record) is durable, its MAC not
        made yet (GENESIS stands in); None before the anchor is loaded."""
        anchor = self._anchor
        if anchor is None:
            return None
        return AuditAnchor(
            seq=last.seq,
            hash=str(last.hash),
            since=anchor.since,
            foreign_from=anchor.foreign_from,
            mac=GENESIS,
        )

    def _fail(self, batch: list[_Queued], written: int, error: Exception) -> None:
        """``batch[:written]`` is durable; the rest, and everything queued after it, failed
        with ``error``; the head is read again on the next append."""
        for q in batch[:written]:
            q.settle()
        failed = batch[written:] + self._queue
        self._queue = []
        self._unchained = []
        self._head = None
        for q in failed:
            q.settle(error)

    def _hand_over(self) -> None:
        """Pass the writer's role to the oldest queued append still waiting for its turn."""
        self._writing = False
        while self._queue:
            head = next((q for q in self._queue if not q.grouped or q.turn is not None), None)
            if head is None:
                return  # only grouped records wait: the flush task writes them
            if head.turn is not None and not head.turn.done():
                self._writing = True
                head.turn.set_result(True)
                return
            # its caller stopped waiting; the record is chained all the same: fail it and
            # everything after it, and read the head again
            failed, self._queue = self._queue, []
            self._unchained = []
            self._head = None
            for q in failed:
                q.settle(Refused(Code.STORAGE_FAILED, "The audit record was abandoned."))
