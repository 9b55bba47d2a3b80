"""The tray and Compose for a project of a remote environment (issue 30: "the tray follows the
project being viewed wherever it lives", "compose → spawn"; seed 004 §3, §4b).

==================  =======  ==========================================================
operation           gesture  what
==================  =======  ==========================================================
``remote.tray``     no       the remote project's mission heads as tray cards
``remote.compose``  no       the packet a spawn would send, and the modes Compose offers
==================  =======  ==========================================================

Both read the environment with the bearer this host holds
(:meth:`core.custody.peer_admin.PeerAdmin.mission_route`, the ``board`` route; the answer is
checked by :func:`core.missions.remote_runs.parse_board`). The rules are core's, one place each:
a card's pinned failure, stagnation, status line and actions are
:func:`core.missions.tray.remote_card` (the local tray's rules, with the actions a remote card
offers: open its mission view, review it, cancel it while it moves); how often the page reads
again is :func:`core.missions.remote_runs.follow_ms`; whether spawn is offered, and why not, is
:func:`core.missions.remote_runs.spawn_option`. Spawning itself stays ``remote.spawn``, a
person's gesture. Nothing here writes; no answer carries a bearer or a path.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from core.host.env_ops import services
from core.host.operations import Call, Outcome
from core.host.remote_draft import draft_from_board
from core.missions.letters import BlockRef, Capability, LetterJson, Seat, parse_letter, sha12
from core.missions.mailbox import AgentId
from core.missions.packet import MAX_NOTE_CHARS, ModeOption
from core.missions.remote_runs import (
    FOLLOW_LOG_MS,
    MOVING,
    NOT_PAIRED_REASON,
    BoardBlock,
    RemoteBoard,
    parse_board,
    parse_runners,
    phase_words,
    remote_compose_modes,
    spawn_option,
)
from core.missions.remote_runs import follow_ms as next_read_ms
from core.missions.tray import Anchor, RemoteAction, phase_counts, remote_card, tray_order
from core.model import Contract
from core.time import instant_iso
from core.vocabulary import ProjectId

__all__ = [
    "RemoteComposeAnswer",
    "RemoteComposeArgs",
    "RemoteTrayArgs",
    "RemoteTrayCard",
    "RemoteTrayView",
    "remote_compose",
    "remote_tray",
]

_ENV = Field(alias="envKey", max_length=64)


class RemoteTrayArgs(Contract):
    """``remote.tray``: a project of a remote environment."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = _ENV
    project: ProjectId


class RemoteTrayCard(Contract):
    """One mission head of a remote project as the tray shows it: the head (``mission_id``,
    ``letter_id`` and its ``sha12``, ``posted_at``, the ``letter`` in wire form), the phase in
    words, the block it is about as the remote store names it now (``anchor``: a block, the
    store's skeleton, or unknown; ``block_name`` for a block), and the tray's rules
    (:func:`core.missions.tray.remote_card`): ``pinned``, ``stagnant``, ``status``, ``reason``
    (a failure's gist) and ``actions``; ``receipt``: a landed head's receipt in words,
    ``receipt ✓ store vN`` (:func:`core.missions.remote_runs.landed_receipt`, the mission
    view's words too), else null."""

    mission_id: str
    letter_id: str
    sha12: str
    posted_at: str
    letter: LetterJson
    words: str
    anchor: Anchor
    block_name: str | None
    pinned: bool
    stagnant: bool
    status: str
    reason: str | None
    actions: list[RemoteAction]
    receipt: str | None = None


class RemoteTrayView(Contract):
    """The tray of a remote project: host time ``now``, per-phase ``counts``, ``cards``
    (pinned failures first, then most recently moved; the server lists at most 50),
    ``missions`` listed, ``moving`` (one waits for or is under its runner), ``follow_ms`` (when
    the page reads again) and ``log_ms`` (how often an open mission's log is read), whether
    this host holds a pairing (``paired``; without one the tray is empty and ``note`` says
    why) and the remote store's version."""

    env_key: str
    project: str
    brain_ref: str
    now: str
    counts: dict[str, int]
    cards: list[RemoteTrayCard]
    missions: int
    moving: bool
    follow_ms: int
    log_ms: int
    paired: bool
    note: str | None
    store_version: int | None


async def _board(call: Call[Contract], env_key: str, project: str) -> tuple[bool, RemoteBoard]:
    admin = services(call).admin
    if await admin.standing(env_key) != "paired":
        return False, RemoteBoard(brain_ref="-", git=False)
    return True, parse_board(await admin.mission_route(env_key, "board", {"project": project}))


def _anchor(block_id: str, names: dict[str, str], skeleton_id: str | None) -> Anchor:
    if block_id in names:
        return "block"
    return "skeleton" if block_id == skeleton_id else "unknown"


async def remote_tray(call: Call[RemoteTrayArgs]) -> Outcome:
    """Read the remote project's board and answer its heads as tray cards
    (:class:`RemoteTrayView`). Without a pairing (never paired, or revoked) the tray is empty
    and ``note`` says so. Refuses ``unknown-environment`` (not a remote),
    ``environment-unreachable``, ``peer-answer-invalid``, and what the server refuses
    (``pairing-revoked`` the first time it is seen, ``project-not-found``). Writes nothing."""
    a = call.args
    paired, board = await _board(call, a.env_key, a.project)
    now_ms = call.ctx.clock.now_ms()
    names = {b.id: b.name for b in board.blocks}
    cards: list[RemoteTrayCard] = []
    for head in board.heads:
        letter = parse_letter(head.letter)  # checked once by parse_board already
        rules = remote_card(letter, now_ms)
        cards.append(
            RemoteTrayCard(
                mission_id=head.mission_id,
                letter_id=head.letter_id,
                sha12=sha12(head.letter_id),
                posted_at=head.posted_at,
                letter=head.letter,
                words=phase_words(letter.phase),
                anchor=_anchor(letter.block_id, names, board.skeleton_id),
                block_name=names.get(letter.block_id),
                pinned=rules.pinned,
                stagnant=rules.stagnant,
                status=rules.status,
                reason=rules.reason,
                actions=list(rules.actions),
                receipt=rules.receipt,
            )
        )
    cards = [cards[i] for i in tray_order([c.pinned for c in cards])]
    phases = [str(h.letter.get("phase")) for h in board.heads]
    view = RemoteTrayView(
        env_key=a.env_key,
        project=a.project,
        brain_ref=board.brain_ref,
        now=instant_iso(now_ms),
        counts=phase_counts(phases),
        cards=cards,
        missions=len(cards),
        moving=any(p in MOVING for p in phases),
        follow_ms=next_read_ms(phases),
        log_ms=FOLLOW_LOG_MS,
        paired=paired,
        note=None if paired else NOT_PAIRED_REASON,
        store_version=board.store_version,
    )
    return Outcome(view)


class RemoteComposeArgs(Contract):
    """``remote.compose``: the remote project, the block (or its store's skeleton id; omitted:
    the first block), the agent it is for (``to``), seat, capability, an optional pinned runner
    id and the person's note — what ``remote.spawn`` takes."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = _ENV
    project: ProjectId
    block_id: BlockRef | None = None
    to: AgentId = "hand-1"
    seat: Seat = "hand"
    capability: Capability = "build-runner"
    runner_id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    note: str = Field(default="", max_length=MAX_NOTE_CHARS)


class RemoteComposeAnswer(Contract):
    """What Compose shows for a remote project: its ``blocks`` and ``skeleton_id`` (the
    choices), the ``block_id`` drafted for, the packet text and its ``packet_ref`` with the
    mission id and seq-1 letter of this preview (``remote.spawn`` renders it again from the
    environment's store when sent, under a mission id of its own), the ``modes`` (clipboard;
    direct never; spawn available or the reason why not) and whether this host is read-only.
    When nothing can be drafted (no pairing, or no block in the store) the packet fields are
    ``None`` and ``note`` says why."""

    blocks: list[BoardBlock]
    skeleton_id: str | None
    block_id: str | None
    mission_id: str | None
    packet: str | None
    packet_ref: str | None
    letter: LetterJson | None
    modes: list[ModeOption]
    read_only: bool
    note: str | None = None


NO_BLOCKS = "This project has no blocks yet: a mission is always about a block."


async def remote_compose(call: Call[RemoteComposeArgs]) -> Outcome:
    """Render the packet a spawn would send for the block as the remote store states it now,
    and decide the modes (:func:`~core.missions.remote_runs.remote_compose_modes` over
    :func:`~core.missions.remote_runs.spawn_option`: no environment, SAFE mode, no runner
    pinned, runner not live, not a git repository). Without a pairing, or without a block,
    nothing is drafted and ``note`` says why. Refuses ``unknown_block`` (no such block),
    ``unknown-environment``, ``environment-unreachable``, ``peer-answer-invalid`` and what the
    server refuses. Writes nothing."""
    a = call.args
    admin = services(call).admin
    paired, board = await _board(call, a.env_key, a.project)
    runners = parse_runners(await admin.identity_text(a.env_key))
    read_only = call.ctx.policy.read_only
    modes = remote_compose_modes(
        spawn_option(
            paired=paired,
            runners=runners,
            capability=a.capability,
            git=board.git,
            read_only=read_only,
        )
    )
    if not paired or not board.blocks:
        return Outcome(
            RemoteComposeAnswer(
                blocks=board.blocks,
                skeleton_id=board.skeleton_id,
                block_id=None,
                mission_id=None,
                packet=None,
                packet_ref=None,
                letter=None,
                modes=modes,
                read_only=read_only,
                note=NOT_PAIRED_REASON if not paired else NO_BLOCKS,
            )
        )
    chosen = a.block_id or board.blocks[0].id
    draft = await draft_from_board(call.ctx, board, chosen, a)
    return Outcome(
        RemoteComposeAnswer(
            blocks=board.blocks,
            skeleton_id=board.skeleton_id,
            block_id=chosen,
            mission_id=draft.mission_id,
            packet=draft.packet,
            packet_ref=draft.packet_ref,
            letter=draft.letter,
            modes=modes,
            read_only=read_only,
        )
    )
