"""Mission, mailbox, block and receipt operations behind the host protocol (seed 004; SPEC §9).

==========================  =====  ======  =========================================
operation                   write  human   what it does
==========================  =====  ======  =========================================
``mission.post``            yes    [1]_    post a mission letter (:mod:`core.missions.posting`)
``mission.deliver``         yes    no      compose ``direct``: seq-1 letter + packet note
``mailbox.send``            yes    no      a plain letter to an agent's inbox
``mailbox.read``            no     no      plain letters, or ``kind=mission`` heads
``blocks.get``              no     no      the system-block store (or none)
``blocks.candidate_edit``   yes    [2]_    a batch of block edits, all or nothing
``blocks.ratify``           yes    yes     a person accepts the store at a version
``receipt.import``          yes    yes     a person imports a receipt candidate
==========================  =====  ======  =========================================

.. [1] only an ``archived`` letter (``archived_via: "human-ui"``).
.. [2] only the ``owner`` seat; the ``runner`` seat is sanitized instead.

**The human gate.** The dispatcher builds a handler's ``Call.origin`` from the envelope of a
message the page itself sent (:class:`core.host.pipeline.Host.handle`); nothing else sets it.
Peer channels, plugins and the tool sandbox never reach these handlers through the page's
envelope, so their calls carry no origin, and a ``"human-ui"`` they put in an argument
(``ratified_via``, ``imported_via``, ``archived_via``) is refused by
:func:`core.gestures.require_human_gesture` — ``human_gesture_required``, nothing touched.

**Audit.** The dispatcher audits every decision; these handlers add non-secret details:
``mission_id``, ``seq``, ``phase``, ``letter_id`` (sha12), ``duplicate``, ``block_id``,
``store_version``, ``seat``.

**Mailbox cache.** Open mailboxes are kept per host (keyed weakly by the host's
:class:`~core.ports.ProjectRoots`) and per project, and checked cheaply before every use
(:class:`core.missions.mailbox.MailboxCache`), which is what makes a post O(1) in the mailbox's
length.
"""

from __future__ import annotations

import weakref
from typing import Any, Literal

from pydantic import Field

from core.gestures import is_human, require_human_gesture
from core.host.context import HostContext
from core.host.operations import Call, Outcome, operation
from core.missions.blocks import (
    EditOp,
    apply_candidate_edit,
    check_store_version,
    load_store,
    ratify,
    save_store,
)
from core.missions.letters import MissionId, sha12
from core.missions.mailbox import MAX_NOTE_CHARS, AgentId, Mailbox, MailboxCache, note_line
from core.missions.posting import DELIVERY_NOTICE, Posted, deliver_direct, post_mission_letter
from core.missions.receipt_import import import_receipt
from core.missions.receipt_window import instant_iso
from core.model import Contract
from core.projects.catalog import OpenProject
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import Code, Refused

__all__ = [
    "BlocksAnswer",
    "EditAnswer",
    "ImportAnswer",
    "MailboxAnswer",
    "PostAnswer",
    "RatifyAnswer",
]

ProjectId = str
_PROJECT = Field(pattern=PROJECT_ID_PATTERN)
_CACHES: weakref.WeakKeyDictionary[Any, MailboxCache] = weakref.WeakKeyDictionary()


def _cache(ctx: HostContext) -> MailboxCache:
    try:
        return _CACHES.setdefault(ctx.roots, MailboxCache())
    except TypeError:  # a roots adapter that cannot be weakly referenced: no cache, still right
        return MailboxCache()


async def _open(call: Call) -> tuple[OpenProject, Mailbox]:
    opened = await call.ctx.catalog.open(call.args.project)
    mailbox = await _cache(call.ctx).get(opened.manifest.id, opened.files)
    return opened, mailbox


# ----------------------------------------------------------------------------- mission.post


class MissionPostArgs(Contract):
    """``mission.post``: who posts (``agent_id``), the letter, and — only for an ``archived``
    letter, only from the page's gesture — ``archived_via: "human-ui"``."""

    project: ProjectId = _PROJECT
    agent_id: AgentId
    letter: dict[str, Any]
    archived_via: str | None = Field(default=None, max_length=64)


class PostAnswer(Contract):
    """A posted (or already present) letter: its mission, content id and sha12, seq, phase.

    ``duplicate`` is true when the identical letter was already in the mailbox (nothing was
    appended)."""

    mission_id: str
    letter_id: str
    sha12: str
    mission_seq: int
    phase: str
    duplicate: bool


def _post_answer(posted: Posted) -> PostAnswer:
    return PostAnswer(
        mission_id=posted.letter.mission_id,
        letter_id=posted.letter_id,
        sha12=sha12(posted.letter_id),
        mission_seq=posted.letter.mission_seq,
        phase=posted.letter.phase,
        duplicate=posted.duplicate,
    )


def _post_details(posted: Posted, agent_id: str) -> dict[str, str | int | bool | None]:
    return {
        "mission_id": posted.letter.mission_id,
        "seq": posted.letter.mission_seq,
        "phase": posted.letter.phase,
        "letter_id": sha12(posted.letter_id),
        "block_id": posted.letter.block_id,
        "agent_id": agent_id,
        "duplicate": posted.duplicate,
    }


@operation(
    "mission.post",
    args=MissionPostArgs,
    result=PostAnswer,
    writes=True,
    summary="Post a mission letter (schema, phase gates, head CAS, block, brain, human gate).",
)
async def mission_post(call: Call) -> Outcome:
    """Refuses ``letter_invalid``, ``human_gesture_required``, ``brain_mismatch``,
    ``unknown_block``, ``stale_head`` (with the actual head), ``invalid_transition``,
    ``read-only-mode``, ``project-not-found``; nothing is appended on refusal."""
    args: MissionPostArgs = call.args
    opened, mailbox = await _open(call)
    store = await load_store(opened.files)
    posted = await post_mission_letter(
        mailbox,
        args.letter,
        agent_id=args.agent_id,
        brain=opened.manifest.name,
        store=store,
        origin=call.origin,
        archived_via=args.archived_via,
        now_ms=call.ctx.clock.now_ms(),
    )
    rule = "mission-letter-duplicate" if posted.duplicate else "mission-letter-posted"
    return Outcome(
        _post_answer(posted),
        project=args.project,
        rule=rule,
        details=_post_details(posted, args.agent_id),
    )


# ----------------------------------------------------------------------------- mission.deliver


class DeliverArgs(Contract):
    """``mission.deliver`` (compose ``direct``): the seq-1 ``judging`` letter, the packet
    markdown it names by ``packet_ref``, and the inbox ``to`` that receives the packet."""

    project: ProjectId = _PROJECT
    agent_id: AgentId
    to: AgentId
    letter: dict[str, Any]
    packet: str = Field(min_length=1, max_length=MAX_NOTE_CHARS)


class DeliverAnswer(Contract):
    """The posted letter, the packet note's content id, and the honest notice."""

    posted: PostAnswer
    note_id: str
    notice: str


@operation(
    "mission.deliver",
    args=DeliverArgs,
    result=DeliverAnswer,
    writes=True,
    summary="Open a mission directly: post its seq-1 letter and put the packet in an inbox.",
)
async def mission_deliver(call: Call) -> Outcome:
    """Refuses as ``mission.post``, plus ``letter_invalid`` for a letter that is not seq-1
    ``judging`` or whose ``packet_ref`` is not the packet's sha256."""
    args: DeliverArgs = call.args
    opened, mailbox = await _open(call)
    delivered = await deliver_direct(
        mailbox,
        args.letter,
        packet=args.packet,
        to=args.to,
        agent_id=args.agent_id,
        brain=opened.manifest.name,
        store=await load_store(opened.files),
        now_ms=call.ctx.clock.now_ms(),
    )
    details = _post_details(delivered.posted, args.agent_id)
    details["to"] = args.to
    return Outcome(
        DeliverAnswer(
            posted=_post_answer(delivered.posted), note_id=delivered.note_id, notice=DELIVERY_NOTICE
        ),
        project=args.project,
        rule="mission-delivered",
        details=details,
    )


# ----------------------------------------------------------------------------- mailbox.send


class SendArgs(Contract):
    """``mailbox.send``: a plain letter from ``agent_id`` to the inbox ``to``; ``text`` is
    stored as the letter's ``body`` (the protocol's ``body`` is the binary payload)."""

    project: ProjectId = _PROJECT
    agent_id: AgentId
    to: AgentId
    subject: str | None = Field(default=None, max_length=300)
    text: str = Field(max_length=MAX_NOTE_CHARS)


class SendAnswer(Contract):
    """The letter's content id; ``duplicate`` when the identical letter was already there."""

    id: str
    duplicate: bool


@operation(
    "mailbox.send",
    args=SendArgs,
    result=SendAnswer,
    writes=True,
    summary="Put a plain letter in an agent's inbox.",
)
async def mailbox_send(call: Call) -> Outcome:
    """Refuses ``args-invalid`` (a subject with a control character), ``read-only-mode``,
    ``project-not-found``."""
    args: SendArgs = call.args
    _, mailbox = await _open(call)
    try:
        line = note_line(
            args.agent_id, args.to, args.subject, args.text, instant_iso(call.ctx.clock.now_ms())
        )
    except ValueError:
        raise Refused(
            Code.ARGS_INVALID, "The subject must be one line of text.", field="subject"
        ) from None
    duplicate = mailbox.contains(line.id)
    if not duplicate:
        await mailbox.append([line])
    return Outcome(
        SendAnswer(id=line.id, duplicate=duplicate),
        project=args.project,
        details={"to": args.to, "agent_id": args.agent_id, "duplicate": duplicate},
    )


# ----------------------------------------------------------------------------- mailbox.read


class MailboxReadArgs(Contract):
    """``mailbox.read``: without ``kind``, plain letters in log order (``to`` filters an inbox;
    ``cursor`` continues); ``kind="note"`` only notes; ``kind="mission"`` one head per mission,
    most recently moved first."""

    project: ProjectId = _PROJECT
    kind: Literal["note", "mission"] | None = None
    to: AgentId | None = None
    cursor: str | None = Field(default=None, max_length=32)
    limit: int = Field(default=100, ge=1, le=1000)


class MissionHeadView(Contract):
    """One mission's head with the honest counts (:mod:`core.missions.chain`)."""

    mission_id: str
    letter_id: str
    sha12: str
    agent_id: str
    posted_at: str
    superseded_count: int
    off_chain_count: int
    letter: dict[str, Any]


class MailboxAnswer(Contract):
    """Plain ``letters`` (each a mailbox line) or mission ``heads``; ``next_cursor`` continues
    a plain read; ``skipped`` counts unparseable lines (in this page, or in the whole mailbox for
    heads); ``missions`` is the number of missions with a head."""

    letters: list[dict[str, Any]] = Field(default_factory=list)
    heads: list[MissionHeadView] = Field(default_factory=list)
    next_cursor: str | None = None
    skipped: int = 0
    missions: int | None = None


@operation(
    "mailbox.read",
    args=MailboxReadArgs,
    result=MailboxAnswer,
    audited=False,
    summary="Read the mailbox: plain letters, or the head of every mission.",
)
async def mailbox_read(call: Call) -> Outcome:
    """Refuses ``project-not-found`` and ``args-invalid`` (a cursor this mailbox did not give).
    Unparseable lines are skipped and counted, never fatal."""
    args: MailboxReadArgs = call.args
    _, mailbox = await _open(call)
    if args.kind == "mission":
        states = mailbox.missions()
        heads = [
            MissionHeadView(
                mission_id=s.head.letter.mission_id,
                letter_id=s.head.letter_id,
                sha12=sha12(s.head.letter_id),
                agent_id=s.head.agent_id,
                posted_at=s.head.at,
                superseded_count=s.superseded_count,
                off_chain_count=s.off_chain_count,
                letter=s.head.letter.wire(),
            )
            for s in states[: args.limit]
        ]
        answer = MailboxAnswer(heads=heads, skipped=mailbox.skipped, missions=len(states))
        return Outcome(answer, project=args.project)
    page = await mailbox.read_page(cursor=args.cursor, limit=args.limit, kind=args.kind, to=args.to)
    answer = MailboxAnswer(
        letters=[line.wire() for line in page.lines],
        next_cursor=page.next_cursor,
        skipped=page.skipped,
    )
    return Outcome(answer, project=args.project)


# ----------------------------------------------------------------------------- blocks.get


class ProjectArgs(Contract):
    """Arguments naming one project."""

    project: ProjectId = _PROJECT


class BlocksAnswer(Contract):
    """The project's system-block store (``null`` when it has none) and whether its present
    version is the ratified one."""

    store: dict[str, Any] | None
    ratified_current: bool


@operation(
    "blocks.get",
    args=ProjectArgs,
    result=BlocksAnswer,
    audited=False,
    summary="Read the project's system-block store.",
)
async def blocks_get(call: Call) -> Outcome:
    """Refuses ``project-not-found``, ``storage-failed`` (an unreadable store)."""
    opened = await call.ctx.catalog.open(call.args.project)
    store = await load_store(opened.files)
    return Outcome(
        BlocksAnswer(
            store=None if store is None else store.model_dump(mode="json", by_alias=True),
            ratified_current=store is not None and store.ratified_current,
        ),
        project=call.args.project,
    )


# ----------------------------------------------------------------------------- candidate_edit


class EditArgs(Contract):
    """``blocks.candidate_edit``: a batch of 1–200 ops, the seat, and optionally the store
    version the batch was written against. The seat defaults to ``owner`` for a person's gesture
    and ``runner`` otherwise; ``owner`` is only ever a person's gesture."""

    project: ProjectId = _PROJECT
    ops: list[EditOp] = Field(min_length=1, max_length=200)
    seat: Literal["owner", "runner"] | None = None
    if_store_version: int | None = Field(default=None, ge=0)


class EditAnswer(Contract):
    """The store after the batch: its skeleton id, version, and the ids of added blocks."""

    skeleton_id: str
    store_version: int
    added: list[str]


def _new_id(call: Call, prefix: str) -> str:
    return prefix + call.ctx.random.token_bytes(6).hex()


@operation(
    "blocks.candidate_edit",
    args=EditArgs,
    result=EditAnswer,
    writes=True,
    summary="Edit the system blocks: the whole batch applies, or none of it.",
)
async def blocks_candidate_edit(call: Call) -> Outcome:
    """Refuses ``human_gesture_required`` (owner seat without a gesture),
    ``store-version-conflict``, ``sanitizer_refused`` (runner seat, naming field and class),
    ``unknown_block``, ``name-invalid``; nothing is written on refusal."""
    args: EditArgs = call.args
    seat = args.seat or ("owner" if is_human(call.origin) else "runner")
    if seat == "owner" and not is_human(call.origin):
        raise Refused(
            Code.HUMAN_GESTURE_REQUIRED,
            "The owner seat is the person at the page; agents edit from the runner seat.",
            field="seat",
        )
    opened = await call.ctx.catalog.open(args.project)
    store = await load_store(opened.files)
    check_store_version(store, args.if_store_version)
    outcome = apply_candidate_edit(
        store,
        args.ops,
        seat=seat,
        new_block_id=lambda: _new_id(call, "sb_"),
        new_skeleton_id=lambda: _new_id(call, "sk_"),
    )
    await save_store(opened.files, outcome.store)
    return Outcome(
        EditAnswer(
            skeleton_id=outcome.store.skeleton_id,
            store_version=outcome.store.store_version,
            added=outcome.added,
        ),
        project=args.project,
        details={"seat": seat, "ops": len(args.ops), "store_version": outcome.store.store_version},
    )


# ----------------------------------------------------------------------------- blocks.ratify


class RatifyArgs(Contract):
    """``blocks.ratify``: the store version the person saw, and ``ratified_via: "human-ui"``."""

    project: ProjectId = _PROJECT
    store_version: int = Field(ge=1)
    ratified_via: str | None = Field(default=None, max_length=64)


class RatifyAnswer(Contract):
    """The ratified version and when."""

    store_version: int
    ratified_at: str


@operation(
    "blocks.ratify",
    args=RatifyArgs,
    result=RatifyAnswer,
    writes=True,
    summary="Ratify the system-block store (a person's gesture only).",
)
async def blocks_ratify(call: Call) -> Outcome:
    """Refuses ``human_gesture_required`` (before anything is read), ``file-not-found`` (no
    store), ``store-version-conflict``."""
    args: RatifyArgs = call.args
    require_human_gesture(
        origin=call.origin, via=args.ratified_via, field="ratified_via", act="Ratifying"
    )
    opened = await call.ctx.catalog.open(args.project)
    store = ratify(
        await load_store(opened.files),
        store_version=args.store_version,
        at=instant_iso(call.ctx.clock.now_ms()),
    )
    await save_store(opened.files, store)
    assert store.ratified is not None
    return Outcome(
        RatifyAnswer(
            store_version=store.ratified.store_version, ratified_at=store.ratified.ratified_at
        ),
        project=args.project,
        details={"store_version": args.store_version},
    )


# ----------------------------------------------------------------------------- receipt.import


class ImportArgs(Contract):
    """``receipt.import``: the candidate exactly as the ``merge_wait`` letter carries it, the
    mission it came from (optional), the store version the person saw (optional), and
    ``imported_via: "human-ui"``."""

    project: ProjectId = _PROJECT
    candidate: dict[str, Any]
    mission_id: MissionId | None = None
    if_store_version: int | None = Field(default=None, ge=0)
    imported_via: str | None = Field(default=None, max_length=64)


class ImportAnswer(Contract):
    """The store version the import made (the one a ``landed`` letter names), the block and its
    colour before and after, the candidate's id, and whether it was already imported."""

    store_version: int
    block_id: str
    color_before: str
    color_after: str
    candidate_id: str
    imported_at: str
    duplicate: bool


@operation(
    "receipt.import",
    args=ImportArgs,
    result=ImportAnswer,
    writes=True,
    summary="Import a receipt candidate into the block store (a person's gesture only).",
)
async def receipt_import(call: Call) -> Outcome:
    """Refuses ``human_gesture_required`` (before anything is read), ``args-invalid``,
    ``receipt-window-invalid``, ``unknown_block``, ``store-version-conflict``,
    ``receipt-scope-invalid``; nothing is written on refusal or on a duplicate."""
    args: ImportArgs = call.args
    require_human_gesture(
        origin=call.origin, via=args.imported_via, field="imported_via", act="Importing a receipt"
    )
    opened = await call.ctx.catalog.open(args.project)
    outcome = import_receipt(
        await load_store(opened.files),
        args.candidate,
        now_ms=call.ctx.clock.now_ms(),
        mission_id=args.mission_id,
        if_store_version=args.if_store_version,
    )
    if not outcome.duplicate:
        await save_store(opened.files, outcome.store)
    receipt = outcome.receipt
    return Outcome(
        ImportAnswer(
            store_version=receipt.store_version,
            block_id=receipt.block_id,
            color_before=outcome.color_before,
            color_after=outcome.color_after,
            candidate_id=receipt.candidate_id,
            imported_at=receipt.imported_at,
            duplicate=outcome.duplicate,
        ),
        project=args.project,
        details={
            "store_version": receipt.store_version,
            "block_id": receipt.block_id,
            "mission_id": receipt.mission_id,
            "color": outcome.color_after,
            "duplicate": outcome.duplicate,
        },
    )
