"""Compose: the packet a person hands an agent, and the modes it can travel by (seed 004 §4).

``compose.packet`` renders the packet for a block and a target agent (:mod:`core.missions.packet`),
and drafts the seq-1 ``judging`` letter that opens the mission with ``packet_ref`` = sha256 of that
exact text. It writes nothing: ``clipboard`` mode is the page copying the text; ``direct`` mode
is the page sending the packet and the letter to ``mission.deliver``, which checks every rule
again and puts the packet in the agent's inbox (delivery is not execution). ``spawn`` is listed
as unavailable, with its reason (no runner daemon in this placement, SPEC §12).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.custody.held_secrets import refuse_held_in_packet
from core.host.operations import Call, Outcome
from core.missions.blocks import load_store
from core.missions.draft import draft_mission, skeleton_brief
from core.missions.letters import BlockRef, Capability, LetterJson, Seat
from core.missions.mailbox import AgentId
from core.missions.packet import (
    MAX_NOTE_CHARS,
    ModeOption,
    PacketBlock,
    compose_modes,
)
from core.model import Contract
from core.refusals import Code, Refused
from core.time import instant_iso
from core.vocabulary import ProjectId

__all__ = ["ComposeAnswer", "ComposeArgs"]

RunnerId = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$", title="Runner id")


class ComposeArgs(Contract):
    """``compose.packet``: the block (or the store's skeleton id, for a whole-skeleton
    mission), the agent it is for (``to``), its seat and capability, an optional pinned runner
    id, the operator's note, and the mode the packet will travel by. Each field's ``title`` is
    the label the compose form shows beside it: a refusal says the field by it (issue 34)."""

    project: ProjectId
    block_id: BlockRef = Field(title="Block")
    to: AgentId = Field(title="Agent id")
    seat: Seat = Field(default="hand", title="Seat")
    capability: Capability = Field(default="build-runner", title="Capability")
    runner_id: str | None = RunnerId
    note: str = Field(default="", max_length=MAX_NOTE_CHARS, title="What you ask of the agent")
    mode: Literal["clipboard", "direct"] = Field(default="direct", title="Mode")


class ComposeAnswer(Contract):
    """The packet text, its ``packet_ref``, the mission id it opens, the seq-1 ``judging``
    letter (JSON data) that ``direct`` would post, and every mode with its availability."""

    mission_id: str
    packet: str
    packet_ref: str
    letter: LetterJson
    modes: list[ModeOption]
    read_only: bool


async def compose_packet(call: Call[ComposeArgs]) -> Outcome:
    """Refuses ``project-not-found`` and ``unknown_block`` (the project has no store, or the
    block is not in it). Writes nothing."""
    args: ComposeArgs = call.args
    opened = await call.ctx.catalog.open(args.project)
    store = await load_store(opened.files)
    block = None if store is None else store.block(args.block_id)
    if store is not None and block is None and args.block_id == store.skeleton_id:
        brief = skeleton_brief(store.skeleton_id)
    elif block is not None:
        brief = PacketBlock(
            id=block.id,
            name=block.name,
            purpose=block.purpose,
            boundary_version=block.boundary_version,
        )
    else:
        raise Refused(
            Code.UNKNOWN_BLOCK,
            "Compose needs a block of this project's store; add one on the Blocks surface.",
            field="block_id",
        )
    draft = draft_mission(
        mission_id="msn_" + call.ctx.random.token_bytes(6).hex(),
        issued_at=instant_iso(call.ctx.clock.now_ms()),
        brain_ref=opened.manifest.name,
        block=brief,
        store_version=None if store is None else store.store_version,
        to=args.to,
        seat=args.seat,
        capability=args.capability,
        runner_id=args.runner_id,
        note=args.note,
        mode=args.mode,
    )
    await refuse_held_in_packet(call.ctx.secrets, call.ctx.state, draft.packet)
    read_only = call.ctx.policy.read_only
    return Outcome(
        ComposeAnswer(
            mission_id=draft.mission_id,
            packet=draft.packet,
            packet_ref=draft.packet_ref,
            letter=draft.letter,
            modes=compose_modes(read_only=read_only),
            read_only=read_only,
        ),
        project=args.project,
    )
