"""The audit: an append-only, hash-chained, keyed and anchored record of every host decision
(SPEC §5; issue 13).

A record names the environment, the actor (seat), the operation, the decision
(``admitted``/``refused``/``recorded``), the rule or refusal code, the project, and non-secret
details. Each record carries ``prev``, the hash of the record before it, ``hash``, the sha256
of its own canonical JSON without ``hash`` and ``mac``, and ``mac``, an HMAC-SHA256 of that
hash under the host's :class:`~core.ports.AuditKey` — so editing or deleting any record breaks
the chain at that record, and a record (or a whole re-hashed chain) made by anyone without the
key carries no valid MAC.

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

One :class:`AuditLog` writes at a time (the host holds the storage lock, SPEC §3). Each
``append`` is durable before it returns, so the sequence number it returns can be reported as
``logged`` (seed 002 §3).

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
import hashlib
import hmac
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import Field, StringConstraints, ValidationError

from core.gestures import HUMAN_UI
from core.model import Contract, canonical_json
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

GENESIS = "0" * 64
"""The ``prev`` of the first record."""

MAX_BATCH = 256
"""At most this many records go to the sink in one write."""

GROUP_WINDOW_MS = 50
"""A grouped (read) record's commit starts at the latest this many ms after its append (or
when the write in flight then is done)."""

CHAIN_STEP = 8
"""A commit chains at most this many grouped records between two turns of the event loop."""

ANCHOR_READS_INTERVAL_MS = 250
"""With ``background_anchor``, a batch holding only grouped (read) records moves the anchor at
most once in this many ms (measured from the start of the anchor write before); a batch
holding any other record moves it at once (module docstring, "The anchor's pace")."""

ANCHOR_NAME = "audit-anchor.json"
"""The HOST_DIR document holding the audit's anchor (:class:`AuditAnchor`)."""

RECORD_MAC_LABEL = b"voicebox-audit-record-v1\n"
ANCHOR_ORIGIN = "voicebox-audit-anchor-v1"

Decision = Literal["admitted", "refused", "recorded"]
DetailValue = Annotated[str, StringConstraints(max_length=1000)] | int | bool | None
MAX_DETAILS = 32
Hex64 = Annotated[str, StringConstraints(pattern="^[0-9a-f]{64}$")]

Finding = Literal[
    "gap",
    "malformed",
    "renumbered",
    "edited",
    "unlinked",
    "rewritten",
    "forged",
    "truncated",
    "wiped",
    "anchor-lost",
]
"""What :meth:`AuditLog.verify` found, machine-readable:

- ``gap``: a record is missing inside the chain (a record, or the newest ones before a later
  append, were deleted);
- ``malformed`` / ``renumbered`` / ``edited`` / ``unlinked``: a record does not parse, sits
  under another sequence number, does not match its own hash, or does not link to the one
  before it;
- ``rewritten``: a record the anchor vouched for is no longer the one the host wrote — its MAC
  is missing or wrong, or it is not the head the anchor names (a chain re-hashed after an edit);
- ``forged``: a record past the anchored head (or past where the host first found records it
  did not write) carries no valid MAC — the host did not write it;
- ``truncated``: the anchor says the audit reached a record the store no longer has (its
  newest records were deleted);
- ``wiped``: the store is empty but the anchor says records were written;
- ``anchor-lost``: records carry the host's MAC but the anchor is missing, does not open,
  does not carry the host's MAC, or begins after them (it was lost or replaced).
"""


class AuditRecord(Contract):
    """One audit record. Stored in the sink as its JSON object; hashed canonically."""

    seq: int = Field(ge=1)
    at: str = Field(
        description="When: RFC 3339 UTC with milliseconds and Z (records before issue 14 say "
        "+00:00; they verify as stored).",
        max_length=40,
    )
    env: str = Field(description="The environment the host acted for ('local' or an envKey).")
    actor: str = Field(max_length=200, description=f"Seat or origin: 'page', '{HUMAN_UI}', ...")
    op: str = Field(max_length=200)
    decision: Decision
    rule: str = Field(max_length=200, description="The refusal code, or the rule that admitted.")
    project: str | None = Field(default=None, max_length=200)
    details: dict[Annotated[str, StringConstraints(max_length=64)], DetailValue] = Field(
        default_factory=dict, max_length=MAX_DETAILS
    )
    prev: str = Field(pattern="^[0-9a-f]{64}$")
    hash: str = Field(pattern="^[0-9a-f]{64}$")
    mac: Hex64 | None = Field(
        default=None,
        description="HMAC-SHA256 of the record's hash under the host's audit key (absent on "
        "records written before the anchor existed).",
    )


class AuditAnchor(Contract):
    """The head the host last wrote, kept in HOST_DIR as :data:`ANCHOR_NAME` (module docstring).

    ``mac`` is the host key's HMAC of :meth:`checkpoint`. ``since`` is the first sequence
    number the host MACs under this anchor (records before it are from before the anchor);
    ``foreign_from``, once set, is the first record the host found past its anchor that it
    had not written — kept so that record is still named ``forged`` after the host writes on.
    """

    v: Literal[1] = 1
    seq: int = Field(ge=0, description="The newest durable record's sequence number (0: none).")
    hash: Hex64 = Field(description="That record's hash (GENESIS when seq is 0).")
    since: int = Field(ge=1)
    foreign_from: int | None = Field(default=None, ge=1)
    mac: Hex64

    def checkpoint(self) -> bytes:
        """The text the MAC covers, a C2SP-style checkpoint body: origin, size, head hash,
        then this anchor's two extension lines."""
        foreign = "-" if self.foreign_from is None else str(self.foreign_from)
        return (
            f"{ANCHOR_ORIGIN}\n{self.seq}\n{self.hash}\nsince {self.since}\nforeign {foreign}\n"
        ).encode()


AnchorProblem = Literal["missing", "unreadable", "invalid"]


class Verification(Contract):
    """The outcome of :meth:`AuditLog.verify`.

    ``ok`` is true when every record's hash, link and MAC hold and the store reaches the
    anchored head; otherwise ``finding`` names what was found (:data:`Finding`),
    ``broken_seq`` the first sequence number concerned and ``reason`` says it in words.
    ``checked`` counts records examined. ``unanchored_until`` is the last of the records
    from before the anchor existed (they carry no MAC and are checked by hash chain only),
    or null; ``anchor_seq`` the head the anchor vouches for, or null when there is none.
    """

    ok: bool
    checked: int = Field(description="Records examined.")
    broken_seq: int | None = Field(
        default=None, description="The first sequence number concerned by the finding."
    )
    reason: str | None = Field(default=None, description="The finding in words.")
    finding: Finding | None = Field(
        default=None,
        description="What was found: gap, malformed, renumbered, edited, unlinked, rewritten, "
        "forged, truncated, wiped or anchor-lost (null when ok).",
    )
    unanchored_until: int | None = Field(
        default=None,
        description="The last record from before the anchor existed (no MAC; checked by hash "
        "chain only), or null.",
    )
    anchor_seq: int | None = Field(
        default=None, description="The head the anchor vouches for, or null when there is none."
    )


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


def record_hash(fields: dict[str, object]) -> str:
    """sha256 hex of the canonical JSON of ``fields`` without its ``hash`` and ``mac`` keys."""
    body = {k: v for k, v in fields.items() if k not in ("hash", "mac")}
    return hashlib.sha256(canonical_json(body)).hexdigest()


class AuditLog:
    """Appends hash-chained, MAC'd records to an :class:`~core.ports.AuditSink`, keeps their
    anchor in ``state`` (HOST_DIR) and verifies both (module docstring).

    ``key`` MACs records and the anchor that follows them (one
    :meth:`~core.ports.AuditKey.mac_many` per written batch); ``env`` is the environment this
    host acts for (``"local"`` until the host knows its envKey; settable); ``clock`` stamps
    records. ``background_anchor`` is fixed when the host is composed: False (the default)
    makes each append wait until its batch's anchor write is done; True — for a host running
    an event loop (the E1 worker, an ASGI server) — moves the anchor in a task of its own,
    beside the appends that follow, so an append costs one durable commit and not an anchor
    write too (figures: docs/operations.md), and the anchor trails the store by at most the
    write in flight — or, for read records only, by at most ``anchor_reads_interval_ms``
    (default :data:`ANCHOR_READS_INTERVAL_MS`) and one write (module docstring, "The
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

    # --- keys and the anchor -------------------------------------------------------------

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
        changed nothing, module docstring "Grouped reads"): returns at once when an event
        loop runs, the record committed within :data:`GROUP_WINDOW_MS` (:meth:`is_durable`
        tells which). ``details`` must be non-secret scalars (at most 32 keys).
        Raises ``storage-failed`` when the sink refuses (e.g. another writer took the
        sequence number) or the key cannot MAC; the in-memory head is then read again.
        Concurrent appends share writes (module docstring); an uncontended strict append
        needs no running event loop.
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


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _mac_input(record_hash_hex: str) -> bytes:
    """What a record's MAC covers: a label (so no other MAC of the key can stand for it) and
    the record's hash (which covers every other field and, through ``prev``, the chain)."""
    return RECORD_MAC_LABEL + record_hash_hex.encode()


_LOST: dict[str, str] = {
    "missing": "record carries this host's MAC, but the audit's anchor is missing: deleted "
    "newest records would go unseen",
    "unreadable": "record carries this host's MAC, but the audit's anchor does not open: "
    "deleted newest records would go unseen",
    "invalid": "record carries this host's MAC, but the audit's anchor does not: it was "
    "replaced, and deleted newest records would go unseen",
}


class _Walk:
    """What :meth:`AuditLog.verify` has learnt so far, and how it words a finding."""

    def __init__(self, anchor: AuditAnchor | None, problem: AnchorProblem | None) -> None:
        self.anchor = anchor
        self.problem = problem
        self.checked = 0
        self.seen_mac = False
        self.first_mac: int | None = None
        self.unanchored_until: int | None = None

    def keyed(
        self, seq: int, rec: dict[str, object], mac_holds: bool
    ) -> tuple[Finding, str] | None:
        """Check ``rec``'s MAC and its place against the anchor (hash and link already hold)."""
        anchor = self.anchor
        has_mac = rec.get("mac") is not None
        required = self.seen_mac or (anchor is not None and seq >= anchor.since)
        if has_mac or required:
            if not mac_holds:
                what = "does not carry this host's MAC" if has_mac else "carries no MAC"
                if self._vouched(seq):
                    return (
                        "rewritten",
                        f"record {what}, though the anchor vouched for it: it was rewritten",
                    )
                return "forged", f"record {what}: the host did not write it (a forged record)"
            if anchor is not None and seq < anchor.since:
                return (
                    "anchor-lost",
                    f"record carries this host's MAC, but the audit's anchor begins at record "
                    f"{anchor.since}: it was lost or replaced, and deleted newest records before "
                    f"it would go unseen",
                )
            self.seen_mac = True
            self.first_mac = self.first_mac or seq
        else:
            self.unanchored_until = seq
        if anchor is not None and seq == anchor.seq and rec["hash"] != anchor.hash:
            return (
                "rewritten",
                "record is not the one the anchor vouched for: the chain was rewritten",
            )
        return None

    def _vouched(self, seq: int) -> bool:
        anchor = self.anchor
        if anchor is None or seq > anchor.seq:
            return False
        return anchor.foreign_from is None or seq < anchor.foreign_from

    def _anchor_seq(self) -> int | None:
        return None if self.anchor is None else self.anchor.seq

    def broken(self, finding: Finding, seq: int, reason: str) -> Verification:
        return Verification(
            ok=False,
            checked=self.checked,
            broken_seq=seq,
            reason=reason,
            finding=finding,
            unanchored_until=self.unanchored_until,
            anchor_seq=self._anchor_seq(),
        )

    def intact(self) -> Verification:
        return Verification(
            ok=True,
            checked=self.checked,
            unanchored_until=self.unanchored_until,
            anchor_seq=self._anchor_seq(),
        )


def _check_record(
    seq: int, rec: dict[str, object], expected_prev: str
) -> tuple[Finding, str] | None:
    try:
        parsed = AuditRecord.model_validate(rec)
    except ValidationError:
        return "malformed", "record does not parse"
    if parsed.seq != seq:
        return "renumbered", "sequence number changed"
    if record_hash(rec) != parsed.hash:
        return "edited", "record content does not match its hash"
    if parsed.prev != expected_prev:
        return "unlinked", "record does not link to the previous record"
    return None
