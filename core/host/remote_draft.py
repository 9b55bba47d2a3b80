"""The packet and seq-1 ``judging`` letter of a mission in a project of a remote environment,
drafted from the block as the remote store states it now (issue 30: "compose → spawn"; seed
004 §4b; SPEC §9). ``remote.compose`` previews it and ``remote.spawn`` sends it: one drafting
for both, so the preview is the packet a spawn sends (but for the mission id and the instant).
"""

from __future__ import annotations

from typing import Protocol

from core.custody.held_secrets import refuse_held_in_packet
from core.host.context import HostContext
from core.missions.draft import Draft, draft_mission, skeleton_brief
from core.missions.packet import PacketBlock
from core.missions.remote_runs import RemoteBoard
from core.refusals import Code, Refused
from core.time import instant_iso

__all__ = ["Addressed", "board_brief", "draft_from_board"]


class Addressed(Protocol):
    """What a remote draft is for, as ``remote.compose`` and ``remote.spawn`` both take it:
    the agent (``to``), its seat and capability, an optional pinned runner and the note."""

    @property
    def to(self) -> str: ...
    @property
    def seat(self) -> str: ...
    @property
    def capability(self) -> str: ...
    @property
    def runner_id(self) -> str | None: ...
    @property
    def note(self) -> str: ...


def board_brief(board: RemoteBoard, block_id: str) -> PacketBlock:
    """The packet's view of block ``block_id`` of ``board`` — or of its store's skeleton when
    ``block_id`` is the skeleton id. Refuses ``unknown_block`` (field ``block_id``) for an id
    the remote store does not have (it may have changed since the page read it)."""
    found = next((b for b in board.blocks if b.id == block_id), None)
    if found is not None:
        return PacketBlock(
            id=found.id,
            name=found.name,
            purpose=found.purpose,
            boundary_version=found.boundary_version,
        )
    if board.skeleton_id is not None and block_id == board.skeleton_id:
        return skeleton_brief(board.skeleton_id)
    raise Refused(
        Code.UNKNOWN_BLOCK,
        "That block is not in the remote project's store (it may have changed: reload).",
        field="block_id",
    )


async def draft_from_board(
    ctx: HostContext, board: RemoteBoard, block_id: str, addressed: Addressed
) -> Draft:
    """Draft a new mission (a fresh ``msn_`` id, issued now) for block ``block_id`` of
    ``board`` as ``addressed`` says. Refuses ``unknown_block`` (:func:`board_brief`) and
    ``sanitizer_refused`` when the packet would carry a value this host holds as a secret
    (:func:`~core.custody.held_secrets.refuse_held_in_packet`)."""
    draft = draft_mission(
        mission_id="msn_" + ctx.random.token_bytes(6).hex(),
        issued_at=instant_iso(ctx.clock.now_ms()),
        brain_ref=board.brain_ref,
        block=board_brief(board, block_id),
        store_version=board.store_version,
        to=addressed.to,
        seat=addressed.seat,
        capability=addressed.capability,
        runner_id=addressed.runner_id,
        note=addressed.note,
    )
    await refuse_held_in_packet(ctx.secrets, ctx.state, draft.packet)
    return draft
