"""Posting a mission letter: the rules that need the project (seed 004 §1d–§1h, §2c, §4a, §8).

:func:`post_mission_letter` is ``mission_post {agent_id, letter}``. Checks, in this order; the
first that fails refuses and **nothing is appended**:

1. the letter's own contract (:func:`core.missions.letters.parse_letter`) — ``letter_invalid``;
2. ``brain_ref`` is this project's display name, compared exactly (case-sensitive, no
   normalisation; SPEC §9) — ``brain_mismatch``;
3. the block: when the project has a system-block store, ``block_id`` is one of its blocks or
   its skeleton id (the anchor of a whole-skeleton mission); ``synthetic: true`` skips this
   check, openly; a project with no store accepts any block — ``unknown_block``;
4. the landed law: a ``landed`` letter's ``receipt.store_version`` names an import recorded in
   the store, for this letter's block, from this mission (when the import named one), of this
   letter's candidate (when it carries one) — ``letter_invalid``;
5. an identical replay (same content id already in the mailbox) is answered as a duplicate:
   success, nothing appended;
6. the head CAS: with no head the letter must be seq 1; otherwise ``prev_letter_id`` must be the
   head's sha12 and ``mission_seq`` the head's seq + 1 — ``stale_head``, whose answer carries the
   actual head (``head_letter_id``, ``head_seq``, ``head_phase``);
7. transitions: ``archived`` may only extend a ``merge_wait`` head, and nothing extends an
   ``archived`` head (the terminal phase) — ``invalid_transition``;
8. append one line, atomically.

A letter never touches the block store (§1c): nothing here writes it. Before any of this the
host's pipeline asks what the ``mission.post`` operation declares: SAFE mode
(``read-only-mode``) and, for an ``archived`` letter or any post naming ``archived_via``, the
person's gesture (``human_gesture_required``, :mod:`core.gestures`; seed 004 §1h, §8).

:func:`deliver_direct` is compose's ``direct`` mode (§4a): the seq-1 ``judging`` letter whose
``packet_ref`` is the packet's sha256, and the packet itself as a note to the agent's inbox,
appended together in one write. Delivery is not execution.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from core.missions.blocks import SkeletonStore
from core.missions.chain import ChainEntry
from core.missions.letters import (
    MissionLetter,
    ReceiptCandidate,
    candidate_id,
    letter_id,
    parse_letter,
    sha12,
)
from core.missions.mailbox import Mailbox, mission_line, note_line
from core.refusals import Code, Refused
from core.time import instant_iso

__all__ = [
    "DELIVERY_NOTICE",
    "Delivered",
    "Posted",
    "check_block",
    "check_brain",
    "check_head",
    "check_landing",
    "deliver_direct",
    "packet_ref",
    "packet_subject",
    "post_mission_letter",
]


def packet_subject(mission_id: str) -> str:
    """The subject of the note that carries a mission's packet to the agent's inbox."""
    return f"Mission packet {mission_id}"


DELIVERY_NOTICE = (
    "Posted to the agent's inbox. Delivery is not execution: nothing runs until the agent acts."
)


@dataclass(frozen=True, slots=True)
class Posted:
    """A letter the mailbox now holds: the letter, its content id, whether it was already
    there (``duplicate``: nothing appended), and its log position when it was appended now."""

    letter: MissionLetter
    letter_id: str
    duplicate: bool
    position: int | None


@dataclass(frozen=True, slots=True)
class Delivered:
    """A ``direct`` delivery: the posted seq-1 letter and the packet note's content id."""

    posted: Posted
    note_id: str


def packet_ref(packet: str) -> str:
    """``sha256:`` + hex sha256 of the packet's UTF-8 bytes (what ``packet_ref`` names)."""
    return "sha256:" + hashlib.sha256(packet.encode("utf-8")).hexdigest()


def check_brain(letter: MissionLetter, brain: str) -> None:
    """Refuse ``brain_mismatch`` unless ``letter.brain_ref`` is exactly ``brain``."""
    if letter.brain_ref != brain:
        raise Refused(
            Code.BRAIN_MISMATCH,
            "The letter's brain_ref is not this project's display name.",
            field="letter.brain_ref",
        )


def check_block(letter: MissionLetter, store: SkeletonStore | None) -> None:
    """Refuse ``unknown_block`` unless the block is real here (rule 4 of the module docstring)."""
    if letter.synthetic or store is None or store.is_anchor(letter.block_id):
        return
    raise Refused(
        Code.UNKNOWN_BLOCK,
        "The letter's block_id is neither a block of this project's store nor its skeleton id; "
        "a smoke test says synthetic: true.",
        field="letter.block_id",
        details={"skeleton_id": store.skeleton_id},
    )


def _normalised_candidate_id(candidate: dict[str, Any]) -> str:
    return candidate_id(ReceiptCandidate.model_validate(candidate).model_dump(mode="json"))


def check_landing(letter: MissionLetter, store: SkeletonStore | None) -> None:
    """Refuse ``letter_invalid`` for a ``landed`` letter whose receipt is not real (rule 5)."""
    if letter.phase != "landed":
        return
    assert letter.receipt is not None
    assert letter.receipt.store_version is not None
    version = letter.receipt.store_version
    receipt = None if store is None else store.receipt_at(version)
    field = "letter.receipt.store_version"
    if receipt is None:
        raise Refused(
            Code.LETTER_INVALID,
            f"store_version {version} names no receipt import in this project's store; "
            "a landed letter follows a person's import.",
            field=field,
        )
    if receipt.block_id != letter.block_id:
        raise Refused(Code.LETTER_INVALID, "That import was for another block.", field=field)
    if receipt.mission_id is not None and receipt.mission_id != letter.mission_id:
        raise Refused(Code.LETTER_INVALID, "That import was for another mission.", field=field)
    if letter.receipt_candidate is not None and _normalised_candidate_id(
        letter.receipt_candidate.model_dump(mode="json")
    ) != _normalised_candidate_id(receipt.candidate):
        raise Refused(
            Code.LETTER_INVALID,
            "That import was of another candidate.",
            field="letter.receipt_candidate",
        )


def _head_details(mission_id: str, head: ChainEntry | None) -> dict[str, Any]:
    return {
        "mission_id": mission_id,
        "head_letter_id": None if head is None else head.letter_id,
        "head_sha12": None if head is None else sha12(head.letter_id),
        "head_seq": None if head is None else head.seq,
        "head_phase": None if head is None else head.letter.phase,
    }


def check_head(letter: MissionLetter, head: ChainEntry | None) -> None:
    """The head CAS and the transition rules (rules 7–8 of the module docstring)."""
    details = _head_details(letter.mission_id, head)
    if head is None:
        cas_ok = letter.mission_seq == 1
        where = "This mission has no letter yet; its first letter is seq 1."
    else:
        cas_ok = letter.mission_seq == head.seq + 1 and letter.prev_letter_id == sha12(
            head.letter_id
        )
        where = (
            f"The mission's head is seq {head.seq} ({sha12(head.letter_id)}); the next letter "
            f"is seq {head.seq + 1} naming it."
        )
    if not cas_ok:
        raise Refused(
            Code.STALE_HEAD,
            where,
            field="letter.prev_letter_id",
            details=details,
            show_details=True,
        )
    head_phase = None if head is None else head.letter.phase
    if head_phase == "archived":
        raise Refused(
            Code.INVALID_TRANSITION,
            "The mission is archived; nothing follows an archived letter.",
            field="letter.phase",
            details=details,
            show_details=True,
        )
    if letter.phase == "archived" and head_phase != "merge_wait":
        shown = "no letter yet" if head_phase is None else f"a {head_phase} head"
        raise Refused(
            Code.INVALID_TRANSITION,
            f"archived may only follow a merge_wait head; this mission has {shown}.",
            field="letter.phase",
            details=details,
            show_details=True,
        )


def _checked(raw_letter: object, *, brain: str, store: SkeletonStore | None) -> MissionLetter:
    letter = parse_letter(raw_letter)
    check_brain(letter, brain)
    check_block(letter, store)
    check_landing(letter, store)
    return letter


async def post_mission_letter(
    mailbox: Mailbox,
    raw_letter: object,
    *,
    agent_id: str,
    brain: str,
    store: SkeletonStore | None,
    now_ms: int,
) -> Posted:
    """Post ``raw_letter`` (JSON data) for ``agent_id`` into ``mailbox`` (rules in the module
    docstring). ``brain`` is the project's display name, ``store`` its block store or ``None``,
    ``now_ms`` host time in ms. The human gate of an ``archived`` letter is the operation's
    (the caller's pipeline asks it first).

    Refuses ``letter_invalid``, ``brain_mismatch``, ``unknown_block``, ``stale_head``,
    ``invalid_transition``; storage codes propagate. On any refusal nothing is appended.
    """
    letter = _checked(raw_letter, brain=brain, store=store)
    content_id = letter_id(letter)
    if await mailbox.contains(content_id):
        return Posted(letter, content_id, True, None)
    check_head(letter, await mailbox.head(letter.mission_id))
    (position,) = await mailbox.append([mission_line(letter, agent_id, instant_iso(now_ms))])
    return Posted(letter, content_id, False, position)


async def deliver_direct(
    mailbox: Mailbox,
    raw_letter: object,
    *,
    packet: str,
    to: str,
    agent_id: str,
    brain: str,
    store: SkeletonStore | None,
    now_ms: int,
) -> Delivered:
    """Compose's ``direct`` mode: post the seq-1 ``judging`` letter and deliver ``packet`` to
    the inbox ``to`` (module docstring). The letter's ``packet_ref`` must be
    :func:`packet_ref` of ``packet``.

    Refuses as :func:`post_mission_letter`, plus ``letter_invalid`` when the letter is not a
    seq-1 ``judging`` letter or its ``packet_ref`` does not match. A replay is a duplicate and
    appends nothing.
    """
    letter = _checked(raw_letter, brain=brain, store=store)
    if letter.mission_seq != 1 or letter.phase != "judging":
        raise Refused(
            Code.LETTER_INVALID,
            "A direct delivery opens a mission: a seq-1 judging letter.",
            field="letter.phase",
        )
    if letter.packet_ref != packet_ref(packet):
        raise Refused(
            Code.LETTER_INVALID,
            "letter.packet_ref must be the sha256 of the delivered packet.",
            field="letter.packet_ref",
        )
    at = instant_iso(now_ms)
    note = note_line(agent_id, to, packet_subject(letter.mission_id), packet, at)
    content_id = letter_id(letter)
    if await mailbox.contains(content_id):
        return Delivered(Posted(letter, content_id, True, None), note.id)
    check_head(letter, await mailbox.head(letter.mission_id))
    lines = [mission_line(letter, agent_id, at)]
    if not await mailbox.contains(note.id):
        lines.append(note)
    positions = await mailbox.append(lines)
    return Delivered(Posted(letter, content_id, False, positions[0]), note.id)
