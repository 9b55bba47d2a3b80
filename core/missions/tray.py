"""What the mission tray shows and what its gestures may do (seed 004 §3, §1h, F2.5d).

The tray is read-only over letters (§3e). This module holds its presentation rules, as pure
functions over mission heads, the block store and the clock, so the page asks instead of
deciding:

- **Pinned failure** (§3c): a ``failed`` head is pinned above every other card until a person
  dismisses it.
- **Stagnant** (§3c-ext): a ``judging`` or ``executing`` head whose ``updated_at`` is more than
  :data:`STAGNANT_AFTER_MS` (24 h) behind the host clock.
- **Dismissible**: a failed head, or a stagnant one — nothing else. A dismissal hides exactly
  the head it names (:class:`core.missions.ui_state.Dismissal`); when the mission moves on, the new
  head is shown again, so a dismissal never buries a head that became actionable (``merge_wait``,
  ``landed``).
- **Counts**: per phase, over every head, hidden or not (the strip counts what is true, not
  what is shown).
- **Follow-up letters** (:func:`next_letter`): the two letters the tray itself posts, both
  extending a ``merge_wait`` head — ``landed`` after a person imported its receipt (F2.5d), and
  ``archived``, the person's archive gesture (§1h). The host still checks every rule when the
  letter is posted (:mod:`core.missions.posting`).
- **Archive preview** (:func:`archive_preview`): the fresh two-boundary comparison the archive
  confirm states ("proved at boundary v1 — the block is at v3"), and whether the receipt would
  still import right now (a dry run of :func:`core.missions.receipt_import.import_receipt`;
  nothing is written).
- **Anchor** (:func:`anchor_of`): a card names its block as the store has it now — a block of
  the store, the store's skeleton (a whole-skeleton mission), or unknown.
- **Order** (:func:`tray_order`): pinned failures first, then most recently moved.
- **Actions** (:data:`PHASE_ACTIONS`, :func:`card_actions`): which gestures a card offers, by
  phase — ``import`` (a ``merge_wait`` head carrying a receipt candidate: import it and land the
  mission, one host operation), ``archive`` (a ``merge_wait`` head), ``provenance`` (a
  ``landed`` head), ``dismiss`` (a dismissible head). The page shows what this says.
- **Dismissals that no longer hide anything** are dropped when a person dismisses or restores
  (:func:`kept_dismissals`).
- **Provenance** (:func:`provenance`): the head's chain walked back through the mailbox — the
  packet that opened it, the runner, the gate's artifact, the receipt the landing names.

The tray posts as :data:`OPERATOR`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from core.missions.blocks import Block, SkeletonStore
from core.missions.chain import ChainEntry
from core.missions.letters import (
    PHASE_MEANINGS,
    PHASES,
    MissionLetter,
    Phase,
    parse_letter,
    sha12,
)
from core.missions.mailbox import Mailbox
from core.missions.posting import packet_subject
from core.missions.receipt_import import import_receipt
from core.missions.ui_state import Dismissal, DismissReason
from core.model import Contract
from core.refusals import Code, Refused
from core.time import instant_iso, instant_us

__all__ = [
    "ACTION_MEANINGS",
    "DELIVERED",
    "OPERATOR",
    "PHASE_ACTIONS",
    "REMOTE_ACTION_MEANINGS",
    "REMOTE_QUEUED",
    "STAGNANT_AFTER_MS",
    "STAGNANT_PHASES",
    "Anchor",
    "ArchivePreview",
    "FollowUp",
    "ProvenanceAnswer",
    "ProvenanceReceipt",
    "ProvenanceStep",
    "RemoteAction",
    "RemoteCardRules",
    "TrayAction",
    "anchor_of",
    "archive_preview",
    "candidate_to_land",
    "card_actions",
    "card_status",
    "check_seen",
    "delivered_inboxes",
    "dismiss_reason",
    "is_hidden",
    "is_stagnant",
    "kept_dismissals",
    "mission_head",
    "next_letter",
    "phase_counts",
    "provenance",
    "remote_card",
    "remote_card_actions",
    "tray_order",
]

STAGNANT_AFTER_MS = 24 * 3600 * 1000
"""A head in :data:`STAGNANT_PHASES` unchanged for longer than this (ms) may be hidden
(§3c-ext)."""
STAGNANT_PHASES: tuple[Phase, ...] = ("judging", "executing")
"""The phases in which a head can stall (a mission not yet past its agent); the page names
them from here in its confirm text (page/contract.gen.mjs), the refusal in
:func:`core.host.tray_ops.tray_dismiss` too."""

FollowUp = Literal["landed", "archived"]

OPERATOR = "operator"
"""The agent id the tray's letters are posted as (a person's gestures at the page)."""

Anchor = Literal["block", "skeleton", "unknown"]
"""What a head's ``block_id`` names in the store now."""

TrayAction = Literal["import", "archive", "provenance", "dismiss"]
"""A gesture a tray card may offer."""

ACTION_MEANINGS: dict[TrayAction, str] = {
    "import": "import the receipt the gate produced, then post the landed letter",
    "archive": "set the mission aside with an archived letter (a person's gesture)",
    "provenance": "show the chain: packet, runner, gate artifact, imported receipt",
    "dismiss": "hide the card from the tray (presentation only; it shows again if it moves)",
}
"""What each action does, in the order a card offers them."""

DELIVERED = "delivered to {agent}'s inbox — waiting for the agent"
"""What a card says of a mission opened by a direct delivery that no agent has moved yet
(issue 17 item 7): where the packet is, and that nothing happens until the agent acts."""

MAX_DELIVERY_PAGES = 4
"""Pages of notes :func:`delivered_inboxes` reads at most (bounded work per tray read)."""


def card_status(letter: MissionLetter, delivered_to: str | None) -> str:
    """The line a card says of its head: :data:`DELIVERED` for a seq-1 ``judging`` head whose
    packet sits in ``delivered_to``'s inbox, else what the phase means
    (:data:`~core.missions.letters.PHASE_MEANINGS`)."""
    if letter.phase == "judging" and letter.mission_seq == 1 and delivered_to is not None:
        return DELIVERED.format(agent=delivered_to)
    return PHASE_MEANINGS[letter.phase]


async def delivered_inboxes(mailbox: Mailbox, mission_ids: set[str]) -> dict[str, str]:
    """Mission id → the inbox its packet note went to, for the ``mission_ids`` whose packet a
    direct delivery put in the mailbox (the note ``packet_subject`` from :data:`OPERATOR`).
    Reads at most :data:`MAX_DELIVERY_PAGES` pages of notes, and nothing when ``mission_ids``
    is empty; a packet not found within them is left out."""
    wanted = {packet_subject(m): m for m in mission_ids}
    found: dict[str, str] = {}
    cursor: str | None = None
    for _ in range(MAX_DELIVERY_PAGES if wanted else 0):
        page = await mailbox.read_page(cursor=cursor, limit=1000, kind="note")
        for line in page.lines:
            mission = wanted.get(line.subject or "")
            if mission is not None and line.from_ == OPERATOR and line.to is not None:
                found[mission] = line.to
        cursor = page.next_cursor
        if cursor is None or len(found) == len(wanted):
            break
    return found


PHASE_ACTIONS: dict[Phase, tuple[TrayAction, ...]] = {
    "judging": ("dismiss",),
    "executing": ("dismiss",),
    "gate": (),
    "review": (),
    "merge_wait": ("import", "archive"),
    "landed": ("provenance",),
    "failed": ("dismiss",),
    "archived": (),
}
"""The actions a head in each phase may offer; :func:`card_actions` says which one does now
(``import`` needs a receipt candidate, ``dismiss`` a failed or stagnant head)."""


def is_stagnant(letter: MissionLetter, now_ms: int) -> bool:
    """True for a ``judging``/``executing`` head whose ``updated_at`` is over 24 h old."""
    if letter.phase not in STAGNANT_PHASES:
        return False
    return now_ms * 1000 - instant_us(letter.updated_at) > STAGNANT_AFTER_MS * 1000


def dismiss_reason(letter: MissionLetter, now_ms: int) -> DismissReason | None:
    """Why this head may be hidden (``failed`` / ``stagnant``), or ``None`` when it may not."""
    if letter.phase == "failed":
        return "failed"
    if is_stagnant(letter, now_ms):
        return "stagnant"
    return None


def is_hidden(head_letter_id: str, dismissal: Dismissal | None) -> bool:
    """True when ``dismissal`` hid exactly this head (a moved mission shows again)."""
    return dismissal is not None and dismissal.letter_id == head_letter_id


async def mission_head(mailbox: Mailbox, mission_id: str) -> ChainEntry:
    """The head of ``mission_id`` in ``mailbox``; refuses ``args-invalid`` (field
    ``mission_id``) when the project has no such mission."""
    head = await mailbox.head(mission_id)
    if head is None:
        raise Refused(
            Code.ARGS_INVALID, "This project has no mission with that id.", field="mission_id"
        )
    return head


def check_seen(head: ChainEntry, letter_id: str, *, then: str) -> None:
    """Refuse ``stale_head`` (field ``letter_id``, with the actual head) unless ``head`` is the
    head the person saw — ``letter_id`` — when they made the gesture; ``then`` says what
    happens instead, for the sentence."""
    if head.letter_id != letter_id:
        raise Refused(
            Code.STALE_HEAD,
            f"The mission moved since the tray showed it; {then}.",
            field="letter_id",
            details={
                "mission_id": head.letter.mission_id,
                "head_sha12": sha12(head.letter_id),
                "head_phase": head.letter.phase,
            },
            show_details=True,
        )


def candidate_to_land(head: MissionLetter) -> dict[str, Any]:
    """The receipt candidate a landing imports: the ``merge_wait`` head's, exactly as the letter
    carries it (JSON data). Refuses ``invalid_transition`` unless the head is ``merge_wait`` and
    ``args-invalid`` when it carries no candidate."""
    if head.phase != "merge_wait":
        raise Refused(
            Code.INVALID_TRANSITION,
            f"Only a merge_wait mission can become landed; this one is {head.phase}.",
            field="phase",
        )
    candidate = head.wire().get("receipt_candidate")
    if not isinstance(candidate, dict):
        raise Refused(
            Code.ARGS_INVALID,
            "The letter carries no receipt candidate to import.",
            field="mission_id",
        )
    return candidate


def card_actions(letter: MissionLetter, now_ms: int) -> tuple[TrayAction, ...]:
    """The actions the card of head ``letter`` offers at host time ``now_ms``, in
    :data:`ACTION_MEANINGS` order (see :data:`PHASE_ACTIONS`)."""
    offered: list[TrayAction] = []
    for action in PHASE_ACTIONS[letter.phase]:
        if action == "import" and letter.receipt_candidate is None:
            continue
        if action == "dismiss" and dismiss_reason(letter, now_ms) is None:
            continue
        offered.append(action)
    return tuple(offered)


def anchor_of(letter: MissionLetter, store: SkeletonStore | None) -> tuple[Anchor, Block | None]:
    """What the head's ``block_id`` names in ``store`` now, and the block when it is one."""
    block = None if store is None else store.block(letter.block_id)
    if block is not None:
        return "block", block
    if store is not None and letter.block_id == store.skeleton_id:
        return "skeleton", None
    return "unknown", None


def tray_order(pinned: list[bool]) -> list[int]:
    """The order of cards given most recently moved first, with whether each is ``pinned``:
    pinned failures first, each group keeping its order (indices into the input)."""
    return sorted(range(len(pinned)), key=lambda i: not pinned[i])


def kept_dismissals(
    dismissed: Mapping[str, Dismissal], head_of: Callable[[str], ChainEntry | None]
) -> dict[str, Dismissal]:
    """The dismissals that still hide their mission's head (``head_of(mission_id)``): a
    dismissal of a head that moved on hides nothing and is dropped."""
    return {
        mission: d
        for mission, d in dismissed.items()
        if (head := head_of(mission)) is not None and is_hidden(head.letter_id, d)
    }


def phase_counts(phases: list[str]) -> dict[str, int]:
    """How many heads are in each of the eight phases, in the seed's order."""
    return {phase: phases.count(phase) for phase in PHASES}


def _later(now_ms: int, head: MissionLetter) -> str:
    now = instant_iso(now_ms)
    return now if instant_us(now) >= instant_us(head.updated_at) else head.updated_at


def next_letter(
    head: MissionLetter,
    head_letter_id: str,
    *,
    phase: FollowUp,
    now_ms: int,
    store_version: int | None = None,
) -> dict[str, Any]:
    """The letter that extends the ``merge_wait`` head ``head`` into ``phase`` (JSON data).

    ``landed`` names the ``store_version`` the person's import made and keeps the candidate it
    imported; ``archived`` sets the receipt aside (no receipt, no candidate). Both keep the
    head's block, brain, seat, runner, capability, gate, verdict and ``packet_ref``, and move
    ``updated_at`` to the host clock. Refuses ``invalid_transition`` unless the head is
    ``merge_wait``, and ``args-invalid`` for a landing without a store version.
    """
    if head.phase != "merge_wait":
        raise Refused(
            Code.INVALID_TRANSITION,
            f"Only a merge_wait mission can become {phase}; this one is {head.phase}.",
            field="phase",
        )
    body = head.wire()
    body.update(
        mission_seq=head.mission_seq + 1,
        prev_letter_id=sha12(head_letter_id),
        phase=phase,
        updated_at=_later(now_ms, head),
    )
    if phase == "landed":
        if store_version is None:
            raise Refused(
                Code.ARGS_INVALID,
                "A landing names the store version the receipt import made.",
                field="store_version",
            )
        body["receipt"] = {"imported": True, "store_version": store_version}
    else:
        body["receipt"] = None
        body["receipt_candidate"] = None
    parse_letter(body)  # the letter's own contract holds (raises letter_invalid otherwise)
    return body


class ArchivePreview(Contract):
    """A fresh look at a ``merge_wait`` head before archiving it (the one shape of it: the
    answer of ``tray.archive_preview`` extends it, issue 35).

    ``proved_boundary`` is the candidate's ``scope.boundary_version`` (``None`` without a
    candidate); ``block_boundary`` the block's boundary now (``None`` when the block is gone);
    ``would_import`` whether importing the candidate would succeed right now, and if not, the
    refusal it would get (``import_code``, ``import_message``).
    """

    block_id: str
    block_name: str | None
    proved_boundary: int | None
    block_boundary: int | None
    store_version: int | None
    would_import: bool
    import_code: str | None
    import_message: str | None


def archive_preview(
    head: MissionLetter, store: SkeletonStore | None, *, now_ms: int, mission_id: str
) -> ArchivePreview:
    """The two boundaries and the would-it-still-import answer for ``head`` (nothing written).

    Refuses ``invalid_transition`` unless the head is ``merge_wait`` (only such a head can be
    archived, §1h(b)).
    """
    if head.phase != "merge_wait":
        raise Refused(
            Code.INVALID_TRANSITION,
            f"Only a merge_wait mission can be archived; this one is {head.phase}.",
            field="mission_id",
        )
    candidate = head.receipt_candidate
    block_ref = candidate.block_id if candidate is not None else head.block_id
    block = None if store is None else store.block(block_ref)
    code: str | None = None
    message: str | None = None
    if candidate is None:
        code, message = "args-invalid", "The letter carries no receipt candidate to import."
    else:
        try:
            outcome = import_receipt(
                store,
                head.wire()["receipt_candidate"],
                now_ms=now_ms,
                mission_id=mission_id,
            )
            if outcome.duplicate:
                code, message = None, "This receipt was already imported."
        except Refused as refusal:
            code, message = str(refusal.code), refusal.message
    return ArchivePreview(
        block_id=block_ref,
        block_name=None if block is None else block.name,
        proved_boundary=None if candidate is None else candidate.scope.boundary_version,
        block_boundary=None if block is None else block.boundary_version,
        store_version=None if store is None else store.store_version,
        would_import=candidate is not None and code is None,
        import_code=code,
        import_message=message,
    )


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


_MAX_PAGES = 10_000


async def provenance(
    mailbox: Mailbox, head: ChainEntry, store: SkeletonStore | None
) -> ProvenanceAnswer:
    """The provenance of the mission whose head is ``head``: its chain walked back through the
    mailbox from the head by ``prev_letter_id`` (letters off the chain are not part of it),
    and the receipt the head's landing names in ``store``. A plain read; writes nothing."""
    mission_id = head.letter.mission_id
    by_sha: dict[str, tuple[str, str, MissionLetter]] = {}
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await mailbox.read_page(cursor=cursor, limit=1000, kind="mission")
        for line in page.lines:
            if line.mission is not None and line.mission.mission_id == mission_id:
                by_sha.setdefault(sha12(line.id), (line.from_, line.at, line.mission))
        cursor = page.next_cursor
        if cursor is None:
            break
    steps: list[ProvenanceStep] = []
    letters: list[MissionLetter] = []
    current: str | None = sha12(head.letter_id)
    while current is not None and current in by_sha and len(steps) <= head.letter.mission_seq:
        agent, at, letter = by_sha[current]
        letters.append(letter)
        steps.append(
            ProvenanceStep(
                seq=letter.mission_seq,
                phase=letter.phase,
                sha12=current,
                agent_id=agent,
                posted_at=at,
            )
        )
        current = letter.prev_letter_id
    steps.reverse()
    top = head.letter
    gated = next((x.gate for x in letters if x.gate is not None), None)
    receipt = None
    if top.receipt is not None and top.receipt.imported and top.receipt.store_version:
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
    return ProvenanceAnswer(
        mission_id=mission_id,
        packet_ref=next((x.packet_ref for x in letters if x.packet_ref), None),
        runner_id=top.runner_id,
        capability=top.capability,
        seat=top.seat,
        gate_command=None if gated is None else gated.command,
        gate_artifact_hash=None if gated is None else gated.artifact_hash,
        receipt=receipt,
        chain=steps,
    )


# ----------------------------------------------------------------------------- remote projects
# (issue 30: the tray follows the project being viewed wherever it lives)

RemoteAction = Literal["open", "review", "cancel"]
"""A gesture a remote project's card offers. Landing, archiving and dismissing a remote
mission are not the tray's: its mission view (the Missions panel) holds them."""

REMOTE_ACTION_MEANINGS: dict[RemoteAction, str] = {
    "open": "open the mission view: its timeline and the run's log, live",
    "review": "open the mission view at its review: the branch's change, evidence, Merge",
    "cancel": "a person cancels it: its runner stops the run and posts failed",
}
"""What each remote action does, in the order a card offers them."""

REMOTE_QUEUED = "queued for its runner on the environment — waiting for it to start"
"""What a remote card says of a seq-1 ``judging`` head: spawned, not started yet."""


def remote_card_actions(phase: str) -> tuple[RemoteAction, ...]:
    """The actions a remote project's card offers for a head in ``phase``: ``review`` when its
    branch may be reviewed and merged (:data:`core.missions.remote_runs.MERGEABLE`), else
    ``open``; then ``cancel`` while it waits for or is under its runner
    (:data:`core.missions.remote_runs.MOVING`: queued, executing, gate)."""
    from core.missions.remote_runs import MERGEABLE, MOVING

    first: RemoteAction = "review" if phase in MERGEABLE else "open"
    return (first, "cancel") if phase in MOVING else (first,)


@dataclass(frozen=True, slots=True)
class RemoteCardRules:
    """What the tray's rules say of one remote head: ``pinned`` (failed), ``stagnant``,
    ``status`` (the line the card says), ``reason`` (a verdict's gist: "cancelled by a
    person"), ``actions`` and ``receipt`` (a landed head's ``receipt ✓ store vN``, as a local
    card and the mission view say it; else ``None``)."""

    pinned: bool
    stagnant: bool
    status: str
    reason: str | None
    actions: tuple[RemoteAction, ...]
    receipt: str | None = None


def remote_card(letter: MissionLetter, now_ms: int) -> RemoteCardRules:
    """The tray's rules for the head ``letter`` of a remote project at host time ``now_ms``:
    the same pinned failure and stagnation as a local head, the status line
    (:data:`REMOTE_QUEUED` for a spawned mission not started, else what the phase means) and
    :func:`remote_card_actions`; a landed head's receipt in the words of
    :func:`core.missions.remote_runs.landed_receipt` (issue 30: "see ``landed`` with ``receipt ✓
    store vN``" on the card as in the view)."""
    from core.missions.remote_runs import landed_receipt

    queued = letter.phase == "judging" and letter.mission_seq == 1
    return RemoteCardRules(
        pinned=letter.phase == "failed",
        stagnant=is_stagnant(letter, now_ms),
        status=REMOTE_QUEUED if queued else PHASE_MEANINGS[letter.phase],
        reason=None if letter.verdict is None else letter.verdict.gist,
        actions=remote_card_actions(letter.phase),
        receipt=landed_receipt(letter.wire()),
    )
