"""The mission tray's operations (seed 004 §3, §1h, F2.5d; SPEC §9).

==========================  =======  ======  ================================================
operation                   audited  human   what it does
==========================  =======  ======  ================================================
``tray.read``               no       no      one card per mission head, counts, what is hidden
``tray.dismiss``            yes      yes     hide (or show again) a failed or stagnant head
``tray.layout``             no       no      remember whether the tray is expanded
``tray.next_letter``        no       no      draft the landed/archived letter over merge_wait
``tray.archive_preview``    no       no      fresh two-boundary snapshot before archiving
``tray.provenance``         no       no      a mission's chain: packet → runner → gate → receipt
==========================  =======  ======  ================================================

The tray is read-only over letters: none of these writes a letter, a receipt or a block. The
tray's writes are the protocol's own (``receipt.import``, ``mission.post``), sent by the page
for a person's click. Presentation state (dismissals, expanded or not) is kept in HOST_DIR's
``ui-state.json`` (:mod:`core.missions.ui_state`); it is not project data, so SAFE mode does not
refuse it (a person may still tidy the tray of a read-only host), and it travels with no export.
Rules: :mod:`core.missions.tray`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from core.host.mailbox_ops import MissionHeadView
from core.host.operations import Call, Outcome
from core.missions.blocks import load_store
from core.missions.chain import ChainEntry
from core.missions.letters import MissionId, sha12
from core.missions.mailbox import Mailbox
from core.missions.tray import (
    archive_preview,
    dismiss_reason,
    is_hidden,
    is_stagnant,
    next_letter,
    phase_counts,
)
from core.missions.ui_state import Dismissal, load_ui_state, save_ui_state
from core.model import Contract
from core.projects.project import PROJECT_ID_PATTERN
from core.refusals import Code, Refused
from core.time import instant_iso

__all__ = ["TrayCard", "TrayView"]

_PROJECT = Field(pattern=PROJECT_ID_PATTERN)
MAX_CARDS = 500


def _head(mailbox: Mailbox, mission_id: str) -> ChainEntry:
    head = mailbox.head(mission_id)
    if head is None:
        raise Refused(
            Code.ARGS_INVALID, "This project has no mission with that id.", field="mission_id"
        )
    return head


# ----------------------------------------------------------------------------- tray.read


class TrayArgs(Contract):
    """Arguments naming one project."""

    project: str = _PROJECT


class TrayCard(MissionHeadView):
    """One mission head as the tray shows it: the head as ``mailbox.read kind=mission`` gives
    it, plus the rest below.

    ``letter`` is the head letter (wire form); ``block_name``/``block_color`` come from the
    store now (``anchor`` says whether ``block_id`` is a block, the skeleton id, or unknown);
    ``pinned`` (failed), ``stagnant``, ``dismissible`` (the reason, or null) and ``hidden`` (a
    person dismissed exactly this head) are the tray's presentation rules
    (:mod:`core.missions.tray`).
    """

    anchor: Literal["block", "skeleton", "unknown"]
    block_name: str | None
    block_color: str | None
    pinned: bool
    stagnant: bool
    dismissible: Literal["failed", "stagnant"] | None
    hidden: bool


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
    opened, mailbox = await call.ctx.open_mailbox(call.args.project)
    store = await load_store(opened.files)
    ui = await load_ui_state(call.ctx.state)
    dismissed = ui.for_project(project)
    now_ms = call.ctx.clock.now_ms()
    states = mailbox.missions()
    cards: list[TrayCard] = []
    for s in states[:MAX_CARDS]:
        head, letter = s.head, s.head.letter
        block = None if store is None else store.block(letter.block_id)
        if block is not None:
            anchor: Literal["block", "skeleton", "unknown"] = "block"
        elif store is not None and letter.block_id == store.skeleton_id:
            anchor = "skeleton"
        else:
            anchor = "unknown"
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
            )
        )
    cards.sort(key=lambda c: not c.pinned)  # stable: failures first, each group by recency
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
        tray_open=ui.tray_open,
    )
    return Outcome(view, project=project)


# ----------------------------------------------------------------------------- tray.dismiss


class DismissArgs(Contract):
    """``tray.dismiss``: hide the head ``letter_id`` of ``mission_id`` (the one the person saw),
    or with ``hide: false`` show the mission again."""

    project: str = _PROJECT
    mission_id: MissionId
    letter_id: str = Field(pattern=r"^[0-9a-f]{64}$")
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
    _, mailbox = await call.ctx.open_mailbox(call.args.project)
    head = _head(mailbox, args.mission_id)
    now_ms = call.ctx.clock.now_ms()
    reason = dismiss_reason(head.letter, now_ms)
    if args.hide:
        if head.letter_id != args.letter_id:
            raise Refused(
                Code.STALE_HEAD,
                "The mission moved since the tray showed it; it stays in view.",
                field="letter_id",
                details={
                    "mission_id": args.mission_id,
                    "head_sha12": sha12(head.letter_id),
                    "head_phase": head.letter.phase,
                },
                show_details=True,
            )
        if reason is None:
            raise Refused(
                Code.ARGS_INVALID,
                "Only a failed mission, or a judging or executing one unchanged for over "
                "24 hours, can be hidden from the tray.",
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
        # dismissals of heads that moved on no longer hide anything: drop them
        live = {
            m: d
            for m, d in entries.items()
            if (h := mailbox.head(m)) is not None and is_hidden(h.letter_id, d)
        }
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
    """``tray.layout``: whether the tray is expanded."""

    open: bool


class LayoutAnswer(Contract):
    """The stored layout."""

    tray_open: bool


async def tray_layout(call: Call[LayoutArgs]) -> Outcome:
    """Never refuses (beyond malformed arguments)."""
    async with call.ctx.state_lock:
        ui = await load_ui_state(call.ctx.state)
        if ui.tray_open != call.args.open:
            await save_ui_state(call.ctx.state, ui.model_copy(update={"tray_open": call.args.open}))
    return Outcome(LayoutAnswer(tray_open=call.args.open))


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

    letter: dict[str, Any]
    head_letter_id: str


async def tray_next_letter(call: Call[NextLetterArgs]) -> Outcome:
    """Refuses ``invalid_transition`` (the head is not ``merge_wait``), ``args-invalid`` (no
    such mission; a landing without a store version). Posting it is ``mission.post``'s job,
    which checks every rule again (the landed law, the human gate of ``archived``)."""
    args: NextLetterArgs = call.args
    _, mailbox = await call.ctx.open_mailbox(call.args.project)
    head = _head(mailbox, args.mission_id)
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


class PreviewAnswer(Contract):
    """A fresh snapshot for the archive confirm: the candidate's boundary and the block's now,
    whether the receipt would still import (and if not, the refusal it would get), and the
    ``archived`` letter the gesture would post."""

    mission_id: str
    head_letter_id: str
    block_id: str
    block_name: str | None
    proved_boundary: int | None
    block_boundary: int | None
    store_version: int | None
    would_import: bool
    import_code: str | None
    import_message: str | None
    letter: dict[str, Any]


async def tray_archive_preview(call: Call[PreviewArgs]) -> Outcome:
    """Refuses ``invalid_transition`` (not ``merge_wait``), ``args-invalid`` (no such mission).
    Reads the store and the mailbox afresh; writes nothing."""
    args: PreviewArgs = call.args
    opened, mailbox = await call.ctx.open_mailbox(call.args.project)
    head = _head(mailbox, args.mission_id)
    now_ms = call.ctx.clock.now_ms()
    preview = archive_preview(
        head.letter, await load_store(opened.files), now_ms=now_ms, mission_id=args.mission_id
    )
    letter = next_letter(head.letter, head.letter_id, phase="archived", now_ms=now_ms)
    return Outcome(
        PreviewAnswer(
            mission_id=args.mission_id,
            head_letter_id=head.letter_id,
            block_id=preview.block_id,
            block_name=preview.block_name,
            proved_boundary=preview.proved_boundary,
            block_boundary=preview.block_boundary,
            store_version=preview.store_version,
            would_import=preview.would_import,
            import_code=preview.import_code,
            import_message=preview.import_message,
            letter=letter,
        )
    )


# ----------------------------------------------------------------------------- provenance


class ProvenanceStep(Contract):
    """One letter of the chain, oldest first."""

    seq: int
    phase: str
    sha12: str
    agent_id: str
    posted_at: str


class ProvenanceReceipt(Contract):
    """The imported receipt a landed letter names, as the store recorded it."""

    store_version: int
    candidate_id: str
    artifact_hash: str | None
    imported_at: str
    block_id: str


class ProvenanceAnswer(Contract):
    """What extended what, run by whom, proven by which receipt (§3f): the packet that opened
    the mission, the runner (id, capability, seat), the gate's artifact hash, and the receipt
    the landing names (null until landed, or when the store no longer has it)."""

    mission_id: str
    packet_ref: str | None
    runner_id: str | None
    capability: str
    seat: str
    gate_command: str | None
    gate_artifact_hash: str | None
    receipt: ProvenanceReceipt | None
    chain: list[ProvenanceStep]


async def tray_provenance(call: Call[PreviewArgs]) -> Outcome:
    """Refuses ``args-invalid`` (no such mission). Walks the head's chain back through the
    mailbox (a plain read); letters off the chain are not part of it."""
    args: PreviewArgs = call.args
    opened, mailbox = await call.ctx.open_mailbox(call.args.project)
    head = _head(mailbox, args.mission_id)
    by_sha: dict[str, tuple[str, Any]] = {}
    cursor: str | None = None
    for _ in range(10_000):
        page = await mailbox.read_page(cursor=cursor, limit=1000, kind="mission")
        for line in page.lines:
            if line.mission is not None and line.mission.mission_id == args.mission_id:
                by_sha.setdefault(sha12(line.id), (line.from_, line))
        cursor = page.next_cursor
        if cursor is None:
            break
    steps: list[ProvenanceStep] = []
    letters = []
    current: str | None = sha12(head.letter_id)
    while current is not None and current in by_sha and len(steps) <= head.letter.mission_seq:
        agent, line = by_sha[current]
        letter = line.mission
        letters.append(letter)
        steps.append(
            ProvenanceStep(
                seq=letter.mission_seq,
                phase=letter.phase,
                sha12=current,
                agent_id=agent,
                posted_at=line.at,
            )
        )
        current = letter.prev_letter_id
    steps.reverse()
    packet = next((x.packet_ref for x in letters if x.packet_ref), None)
    gated = next((x for x in letters if x.gate is not None), None)
    receipt = None
    top = head.letter
    if top.receipt is not None and top.receipt.imported and top.receipt.store_version:
        store = await load_store(opened.files)
        found = None if store is None else store.receipt_at(top.receipt.store_version)
        if found is not None:
            evidence = found.candidate.get("evidence")
            receipt = ProvenanceReceipt(
                store_version=found.store_version,
                candidate_id=found.candidate_id,
                artifact_hash=evidence.get("artifact_hash") if isinstance(evidence, dict) else None,
                imported_at=found.imported_at,
                block_id=found.block_id,
            )
    return Outcome(
        ProvenanceAnswer(
            mission_id=args.mission_id,
            packet_ref=packet,
            runner_id=top.runner_id,
            capability=top.capability,
            seat=top.seat,
            gate_command=None if gated is None or gated.gate is None else gated.gate.command,
            gate_artifact_hash=None
            if gated is None or gated.gate is None
            else gated.gate.artifact_hash,
            receipt=receipt,
            chain=steps,
        )
    )
