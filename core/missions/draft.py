"""A mission's first letter and its packet, drafted together (seed 004 §4b; SPEC §9, §12).

Compose (a packet for an agent a person points at a block) and spawn (a mission queued for a
runner on an environment server) open a mission the same way: the packet rendered from the
block as its store states it now (:func:`core.missions.packet.render_packet`) and the seq-1
``judging`` letter that names it by ``packet_ref`` (its sha256). :func:`draft_mission` drafts
both, so the two paths can never disagree about what a first letter says; it posts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.missions.letters import SCHEMA, LetterJson
from core.missions.packet import PacketBlock, PacketInputs, render_packet
from core.missions.posting import packet_ref

__all__ = ["Draft", "draft_mission", "skeleton_brief"]


def skeleton_brief(skeleton_id: str) -> PacketBlock:
    """The brief of a whole-skeleton mission: every block of the store, taken together (the
    skeleton-id anchor of seed 004 §1c)."""
    return PacketBlock(
        id=skeleton_id,
        name="the whole skeleton",
        purpose="Every block of this project's system-block store, taken together.",
        boundary_version=1,
    )


@dataclass(frozen=True)
class Draft:
    """A drafted mission: its id, the packet text, the packet's sha256 ``packet_ref`` and the
    seq-1 ``judging`` letter (JSON data, schema ``m1nd-mission-letter-v0``)."""

    mission_id: str
    packet: str
    packet_ref: str
    letter: LetterJson


def draft_mission(
    *,
    mission_id: str,
    issued_at: str,
    brain_ref: str,
    block: PacketBlock,
    store_version: int | None,
    to: str,
    seat: str,
    capability: str,
    runner_id: str | None,
    note: str,
    mode: Literal["clipboard", "direct"] = "direct",
) -> Draft:
    """Render the packet of ``block`` and draft the letter that opens ``mission_id``.
    ``issued_at`` is an ISO-8601 instant (the letter's ``started_at`` and ``updated_at``).
    Raises pydantic's ``ValidationError`` for inputs :class:`PacketInputs` refuses."""
    packet = render_packet(
        PacketInputs(
            mission_id=mission_id,
            brain_ref=brain_ref,
            block=block,
            store_version=store_version,
            to=to,
            seat=seat,  # type: ignore[arg-type]  # a str, refused by the model unless a Seat
            capability=capability,  # type: ignore[arg-type]  # likewise, unless a Capability
            runner_id=runner_id,
            note=note,
            issued_at=issued_at,
            mode=mode,
        )
    )
    ref = packet_ref(packet)
    letter = {
        "schema": SCHEMA,
        "mission_id": mission_id,
        "mission_seq": 1,
        "prev_letter_id": None,
        "block_id": block.id,
        "brain_ref": brain_ref,
        "seat": seat,
        "runner_id": runner_id,
        "capability": capability,
        "phase": "judging",
        "packet_ref": ref,
        "started_at": issued_at,
        "updated_at": issued_at,
    }
    return Draft(mission_id=mission_id, packet=packet, packet_ref=ref, letter=letter)
