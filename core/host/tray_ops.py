"""The mission tray's operations (seed 004 §3, §1h, F2.5d; SPEC §9).

==========================  =======  ======  ================================================
operation                   audited  human   what it does
==========================  =======  ======  ================================================
``tray.read``               no       no      one card per mission head, counts, what is hidden
``tray.dismiss``            yes      yes     hide (or show again) a failed or stagnant head
``tray.layout``             no       no      remember whether the tray is expanded
``tray.land``               yes      yes     import a head's receipt, then post its landing
``tray.next_letter``        no       no      draft the landed/archived letter over merge_wait
``tray.archive_preview``    no       no      fresh two-boundary snapshot before archiving
``tray.provenance``         no       no      a mission's chain: packet → runner → gate → receipt
==========================  =======  ======  ================================================

Every rule is :mod:`core.missions.tray`'s (what a card shows and offers, which dismissals still
hide something, the follow-up letters, the provenance walk); these handlers read the state, ask
it and answer. The tray writes no letter, receipt or block itself: ``tray.land`` runs the
protocol's own ``receipt.import`` and ``mission.post`` through the pipeline, each with its own
gates and audit, under the one write lock of the landing; the archive gesture is the page's
``mission.post``. Presentation state (dismissals, expanded or not) is kept in HOST_DIR's
``ui-state.json`` (:mod:`core.missions.ui_state`); it is not project data, so SAFE mode does not
refuse it (a person may still tidy the tray of a read-only host), and it travels with no export.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.host.blocks_ops import ImportAnswer, ImportArgs
from core.host.mailbox_ops import MissionHeadView
from core.host.mission_ops import MissionPostArgs, PostAnswer
from core.host.operations import Call, Outcome
from core.missions.blocks import load_store
from core.missions.letters import PHASE_LABELS, LetterJson, MissionId, sha12
from core.missions.tray import (
    OPERATOR,
    STAGNANT_PHASES,
    Anchor,
    ArchivePreview,
    ProvenanceAnswer,
    TrayAction,
    anchor_of,
    archive_preview,
    candidate_to_land,
    card_actions,
    card_status,
    check_seen,
    delivered_inboxes,
    dismiss_reason,
    is_hidden,
    is_stagnant,
    kept_dismissals,
    mission_head,
    next_letter,
    phase_counts,
    provenance,
    tray_order,
)
from core.missions.ui_state import Dismissal, load_ui_state, save_ui_state
from core.model import Contract
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import Code, Refused
from core.time import instant_iso
from core.vocabulary import ProjectId, Sha256Hex

__all__ = ["LandAnswer", "LandArgs", "ProvenanceAnswer", "TrayCard", "TrayView"]

_PROJECT = Field(pattern=PROJECT_ID_PATTERN)
MAX_CARDS = 500


# ----------------------------------------------------------------------------- tray.read


class TrayArgs(Contract):
    """Arguments naming one project."""

    project: str = _PROJECT


class TrayCard(MissionHeadView):
    """One mission head as the tray shows it: the head as ``mailbox.read kind=mission`` gives
    it, plus the rest below.

    ``letter`` is the head letter (wire form); ``block_name``/``block_color`` come from the
    store now (``anchor`` says whether ``block_id`` is a block, the skeleton id, or unknown);
    ``pinned`` (failed), ``stagnant``, ``dismissible`` (the reason, or null), ``hidden`` (a
    person dismissed exactly this head) and ``actions`` (the gestures the card offers, in
    order) are the tray's presentation rules (:mod:`core.missions.tray`).
    """

    anchor: Anchor
    block_name: str | None
    block_color: str | None
    pinned: bool
    stagnant: bool
    dismissible: Literal["failed", "stagnant"] | None
    hidden: bool
    actions: list[TrayAction]
    status: str = Field(
        description="What the card says of its head: what the phase means, or for a mission "
        "a direct delivery opened, whose inbox holds its packet (core.missions.tray.card_status)."
    )


class TrayView(Contract):
    """The tray of one project: host time ``now``, per-phase ``counts`` over every head,
    ``cards`` (pinned failures first, then most recently moved), how many are ``hidden``, the
    store version (null without a store), unreadable mailbox lines ``skipped``, ``missions``
    in total, and whether the tray is expanded."""

    project: str
    brain_ref: str
    now: str
    counts: dict[str, int]
    cards: list[TrayCard]
    hidden: int
    store_version: int | None
    skipped: int
    missions: int
    tray_open: bool


async def tray_read(call: Call[TrayArgs]) -> Outcome:
    """Refuses ``project-not-found``; unreadable mailbox lines are skipped and counted."""
    project = call.args.project
    opened, mailbox = await call.ctx.open_mailbox(project)
    store = await load_store(opened.files)
    ui = await load_ui_state(call.ctx.state)
    dismissed = ui.for_project(project)
    now_ms = call.ctx.clock.now_ms()
    states = await mailbox.missions()
    opened_only = {
        s.head.letter.mission_id
        for s in states[:MAX_CARDS]
        if s.head.letter.phase == "judging" and s.head.letter.mission_seq == 1
    }
    inboxes = await delivered_inboxes(mailbox, opened_only)
    cards: list[TrayCard] = []
    for s in states[:MAX_CARDS]:
        head, letter = s.head, s.head.letter
        anchor, block = anchor_of(letter, store)
        cards.append(
            TrayCard(
                mission_id=letter.mission_id,
                letter_id=head.letter_id,
                sha12=sha12(head.letter_id),
                agent_id=head.agent_id,
                posted_at=head.at,
                superseded_count=s.superseded_count,
                off_chain_count=s.off_chain_count,
                letter=letter.wire(),
                anchor=anchor,
                block_name=None if block is None else block.name,
                block_color=None if block is None else block.color,
                pinned=letter.phase == "failed",
                stagnant=is_stagnant(letter, now_ms),
                dismissible=dismiss_reason(letter, now_ms),
                hidden=is_hidden(head.letter_id, dismissed.get(letter.mission_id)),
                actions=list(card_actions(letter, now_ms)),
                status=card_status(letter, inboxes.get(letter.mission_id)),
            )
        )
    cards = [cards[i] for i in tray_order([c.pinned for c in cards])]
    view = TrayView(
        project=project,
        brain_ref=opened.manifest.name,
        now=instant_iso(now_ms),
        counts=phase_counts([s.head.letter.phase for s in states]),
        cards=cards,
        hidden=sum(c.hidden for c in cards),
        store_version=None if store is None else store.store_version,
        skipped=mailbox.skipped,
        missions=len(states),
        tray_open=ui.tray_open_for(project),
    )
    return Outcome(view, project=project)


# ----------------------------------------------------------------------------- tray.dismiss


class DismissArgs(Contract):
    """``tray.dismiss``: hide the head ``letter_id`` of ``mission_id`` (the one the person saw),
    or with ``hide: false`` show the mission again."""

    project: str = _PROJECT
    mission_id: MissionId
    letter_id: Sha256Hex
    hide: bool = True


class DismissAnswer(Contract):
    """Whether the mission is now hidden, and why it could be."""

    mission_id: str
    hidden: bool
    reason: Literal["failed", "stagnant"] | None


async def tray_dismiss(call: Call[DismissArgs]) -> Outcome:
    """A person's gesture only (the pipeline's gate: an agent must not hide its own work).
    Refuses ``stale_head`` when the mission moved since the person looked (it is then
    shown again anyway) and ``args-invalid`` for a head that is neither failed nor stagnant, or
    an unknown mission. Letters, blocks and receipts are never touched."""
    args: DismissArgs = call.args
    _, mailbox = await call.ctx.open_mailbox(args.project)
    head = await mission_head(mailbox, args.mission_id)
    now_ms = call.ctx.clock.now_ms()
    reason = dismiss_reason(head.letter, now_ms)
    if args.hide:
        check_seen(head, args.letter_id, then="it stays in view")
        if reason is None:
            raise Refused(
                Code.ARGS_INVALID,
                "Only a failed mission, or one still "
                + " or ".join(PHASE_LABELS[p] for p in STAGNANT_PHASES)
                + " and unchanged for over 24 hours, can be hidden from the tray.",
                field="mission_id",
            )
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        entries = ui.for_project(args.project)
        if args.hide:
            assert reason is not None
            entries[args.mission_id] = Dismissal(
                letter_id=head.letter_id,
                phase=head.letter.phase,
                reason=reason,
                at=instant_iso(now_ms),
            )
        else:
            entries.pop(args.mission_id, None)
        heads = {mission: await mailbox.head(mission) for mission in entries}
        live = kept_dismissals(entries, heads.get)
        await save_ui_state(call.ctx.state, ui.with_project(args.project, live))
    return Outcome(
        DismissAnswer(mission_id=args.mission_id, hidden=args.hide, reason=reason),
        project=args.project,
        rule="tray-dismissed" if args.hide else "tray-restored",
        details={
            "mission_id": args.mission_id,
            "letter_id": sha12(head.letter_id),
            "phase": head.letter.phase,
            "reason": reason,
        },
    )


# ----------------------------------------------------------------------------- tray.layout


class LayoutArgs(Contract):
    """``tray.layout``: whether the tray is expanded — in ``project`` when given (each project
    remembers its own), else the default for projects that never chose."""

    open: bool
    project: ProjectId | None = None


class LayoutAnswer(Contract):
    """The stored layout."""

    tray_open: bool


async def tray_layout(call: Call[LayoutArgs]) -> Outcome:
    """Never refuses (beyond malformed arguments); the project need not be open."""
    project, open_ = call.args.project, call.args.open
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        if project is not None and ui.tray_open_by.get(project) != open_:
            await save_ui_state(call.ctx.state, ui.with_tray_open(project, open_))
        elif project is None and ui.tray_open != open_:
            await save_ui_state(call.ctx.state, ui.model_copy(update={"tray_open": open_}))
    return Outcome(LayoutAnswer(tray_open=open_))


# ----------------------------------------------------------------------------- tray.land


class LandArgs(Contract):
    """``tray.land``: import the receipt candidate of the ``merge_wait`` head ``letter_id`` of
    ``mission_id`` (the head the person saw), optionally against the store version they saw,
    then post the ``landed`` letter naming the store version the import made. ``imported_via``
    names the gesture token, as for ``receipt.import``."""

    project: str = _PROJECT
    mission_id: MissionId
    letter_id: Sha256Hex
    if_store_version: int | None = Field(default=None, ge=0)
    imported_via: str | None = Field(default=None, max_length=64)


class LandAnswer(Contract):
    """What the landing did: the receipt import (``imported``: the store version it made, the
    block and its colours, whether it was already imported) and the landed letter
    (``posted``)."""

    mission_id: str
    imported: ImportAnswer
    posted: PostAnswer


async def tray_land(call: Call[LandArgs]) -> Outcome:
    """Import a head's receipt and land the mission, as one gesture (seed 004 F2.5d).

    Refuses ``stale_head`` when the mission moved since the person looked, ``invalid_transition``
    when the head is not ``merge_wait``, ``args-invalid`` when it carries no receipt candidate
    (or the mission is unknown), and whatever ``receipt.import`` or ``mission.post`` refuses —
    both run through the pipeline as part of this call, with their own gates and audit. An
    import that was already made is answered as a duplicate, so landing again after a failed
    post finishes the job; nothing else is written on a refusal.
    """
    args = call.args
    _, mailbox = await call.ctx.open_mailbox(args.project)
    head = await mission_head(mailbox, args.mission_id)
    check_seen(head, args.letter_id, then="nothing was imported")
    importing = ImportArgs(
        project=args.project,
        candidate=candidate_to_land(head.letter),
        mission_id=args.mission_id,
        if_store_version=args.if_store_version,
        imported_via=args.imported_via,
    )
    imported = (await call.run("receipt.import", importing)).result
    assert isinstance(imported, ImportAnswer)
    landed = next_letter(
        head.letter,
        head.letter_id,
        phase="landed",
        now_ms=call.ctx.clock.now_ms(),
        store_version=imported.store_version,
    )
    posting = MissionPostArgs(project=args.project, agent_id=OPERATOR, letter=landed)
    posted = (await call.run("mission.post", posting)).result
    assert isinstance(posted, PostAnswer)
    return Outcome(
        LandAnswer(mission_id=args.mission_id, imported=imported, posted=posted),
        project=args.project,
        rule="mission-landed",
        details={
            "mission_id": args.mission_id,
            "store_version": imported.store_version,
            "letter_id": posted.sha12,
            "duplicate_import": imported.duplicate,
        },
    )


# ----------------------------------------------------------------------------- next_letter


class NextLetterArgs(Contract):
    """``tray.next_letter``: draft the ``landed`` (naming ``store_version``) or ``archived``
    letter that extends a mission's ``merge_wait`` head."""

    project: str = _PROJECT
    mission_id: MissionId
    phase: Literal["landed", "archived"]
    store_version: int | None = Field(default=None, ge=1)


class NextLetterAnswer(Contract):
    """The draft letter (JSON data) and the head it extends."""

    letter: LetterJson
    head_letter_id: str


async def tray_next_letter(call: Call[NextLetterArgs]) -> Outcome:
    """Refuses ``invalid_transition`` (the head is not ``merge_wait``), ``args-invalid`` (no
    such mission; a landing without a store version). Posting it is ``mission.post``'s job,
    which checks every rule again (the landed law, the human gate of ``archived``)."""
    args: NextLetterArgs = call.args
    _, mailbox = await call.ctx.open_mailbox(args.project)
    head = await mission_head(mailbox, args.mission_id)
    letter = next_letter(
        head.letter,
        head.letter_id,
        phase=args.phase,
        now_ms=call.ctx.clock.now_ms(),
        store_version=args.store_version,
    )
    return Outcome(NextLetterAnswer(letter=letter, head_letter_id=head.letter_id))


# ----------------------------------------------------------------------------- archive_preview


class PreviewArgs(Contract):
    """``tray.archive_preview``: the mission about to be archived."""

    project: str = _PROJECT
    mission_id: MissionId


class PreviewAnswer(ArchivePreview):
    """A fresh snapshot for the archive confirm: the mission's :class:`ArchivePreview` (the
    candidate's boundary and the block's now, whether the receipt would still import and if
    not the refusal it would get), the head it was taken of, and the ``archived`` letter the
    gesture would post."""

    mission_id: str
    head_letter_id: str
    letter: LetterJson


async def tray_archive_preview(call: Call[PreviewArgs]) -> Outcome:
    """Refuses ``invalid_transition`` (not ``merge_wait``), ``args-invalid`` (no such mission).
    Reads the store and the mailbox afresh; writes nothing."""
    args: PreviewArgs = call.args
    opened, mailbox = await call.ctx.open_mailbox(args.project)
    head = await mission_head(mailbox, args.mission_id)
    now_ms = call.ctx.clock.now_ms()
    preview = archive_preview(
        head.letter, await load_store(opened.files), now_ms=now_ms, mission_id=args.mission_id
    )
    letter = next_letter(head.letter, head.letter_id, phase="archived", now_ms=now_ms)
    return Outcome(
        PreviewAnswer(
            **preview.model_dump(),
            mission_id=args.mission_id,
            head_letter_id=head.letter_id,
            letter=letter,
        )
    )


# ----------------------------------------------------------------------------- provenance


async def tray_provenance(call: Call[PreviewArgs]) -> Outcome:
    """Refuses ``args-invalid`` (no such mission). Walks the head's chain back through the
    mailbox (a plain read); letters off the chain are not part of it."""
    args = call.args
    opened, mailbox = await call.ctx.open_mailbox(args.project)
    head = await mission_head(mailbox, args.mission_id)
    return Outcome(await provenance(mailbox, head, await load_store(opened.files)))
