"""The mission packet and the compose modes (seed 004 §4; SPEC §9).

A *packet* is the markdown an agent receives when a person points it at a block: which block,
its purpose and boundary, what the operator asks, and how to report back in mission letters.
:func:`render_packet` renders it from the jinja2 template ``core/missions/templates/packet.md.j2``
(shipped inside the ``core`` package, so it is in the wheel). It is a pure function of
:class:`PacketInputs`: the same inputs always give the same text, byte for byte, and therefore
the same ``packet_ref`` (:func:`core.missions.posting.packet_ref`).

Text a person or an agent wrote (the block's purpose, the operator's note) is quoted line by
line (``> ``), so it reads as quoted material and can never pose as one of the packet's own
headings or rules. Nothing is escaped or rewritten: the packet is plain text, never HTML.

:func:`compose_modes` says which delivery modes compose offers, and why any is unavailable
(§4d): ``clipboard`` always; ``direct`` unless the host is read-only (SAFE), because it posts a
letter; ``spawn`` only with a registered runner daemon, which this placement does not have
(SPEC §12).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Literal

import jinja2
from pydantic import Field

from core.missions.blocks import CONTRACT_VERSION
from core.missions.letters import BlockRef, Capability, MissionId, Seat
from core.model import Contract

__all__ = [
    "MAX_NOTE_CHARS",
    "ModeName",
    "ModeOption",
    "PacketBlock",
    "PacketInputs",
    "compose_modes",
    "render_packet",
]

MAX_NOTE_CHARS = 8000
TEMPLATE = "packet.md.j2"
ModeName = Literal["clipboard", "direct", "spawn"]

READ_ONLY_REASON = (
    "This host is in read-only (SAFE) mode: direct delivery posts a mission letter, which is a "
    "write. Copy the packet to the clipboard instead, or turn SAFE mode off in Settings."
)
NO_RUNNER_REASON = (
    "This project lives in this browser, where nothing runs an agent: spawn needs the project "
    "on a paired environment server with a live runner (Environments → its project → "
    "Missions…)."
)


class PacketBlock(Contract):
    """The block a packet is about, as the store states it now."""

    id: BlockRef
    name: str = Field(min_length=1, max_length=200)
    purpose: str = Field(default="", max_length=2000)
    boundary_version: int = Field(ge=1)


class PacketInputs(Contract):
    """Everything a packet says. ``issued_at`` is an ISO-8601 instant; ``note`` is the
    operator's instruction text (may be empty); ``mode`` is how it travels — ``direct`` (the
    first letter is posted for the agent) or ``clipboard`` (the agent opens the mission)."""

    mission_id: MissionId
    brain_ref: str = Field(min_length=1, max_length=200)
    block: PacketBlock
    store_version: int | None = Field(default=None, ge=1)
    to: str = Field(min_length=1, max_length=64)
    seat: Seat
    capability: Capability
    runner_id: str | None = Field(default=None, max_length=64)
    note: str = Field(default="", max_length=MAX_NOTE_CHARS)
    issued_at: str = Field(min_length=1, max_length=64)
    mode: Literal["clipboard", "direct"] = "direct"


class ModeOption(Contract):
    """One compose mode: whether it is offered and, when not, the reason in one sentence."""

    mode: ModeName
    available: bool
    reason: str | None = None


def _quoted(text: str, empty: str) -> str:
    """``text`` as a markdown block quote, one ``> `` per line; ``empty`` (in italics) if blank."""
    if not text.strip():
        return f"_{empty}_"
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        autoescape=False,  # markdown for an agent, never HTML; the page shows it as text
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["quoted"] = _quoted
    source = (
        resources.files("core.missions").joinpath("templates", TEMPLATE).read_text(encoding="utf-8")
    )
    return env.from_string(source)


def render_packet(inputs: PacketInputs) -> str:
    """The packet markdown for ``inputs`` (pure: same inputs, same text)."""
    return _template().render(
        **inputs.model_dump(mode="json"),
        contract_version=CONTRACT_VERSION,
    )


def compose_modes(*, read_only: bool, runner_registered: bool = False) -> list[ModeOption]:
    """The modes compose offers, in display order, each with its reason when unavailable."""
    return [
        ModeOption(mode="clipboard", available=True),
        ModeOption(
            mode="direct",
            available=not read_only,
            reason=READ_ONLY_REASON if read_only else None,
        ),
        ModeOption(
            mode="spawn",
            available=runner_registered and not read_only,
            reason=None
            if runner_registered and not read_only
            else (NO_RUNNER_REASON if not runner_registered else READ_ONLY_REASON),
        ),
    ]
