"""Mission operations: posting a letter and opening a mission directly (seed 004 §1, §4a;
SPEC §9).

==========================  =====  ======  =========================================
operation                   write  human   what it does
==========================  =====  ======  =========================================
``mission.post``            yes    [1]_    post a mission letter (:mod:`core.missions.posting`)
``mission.deliver``         yes    no      compose ``direct``: seq-1 letter + packet note
==========================  =====  ======  =========================================

.. [1] only an ``archived`` letter, or any post that names ``archived_via``
   (:func:`archives`): the pipeline's human gate (:data:`core.host.registry.OPERATIONS`).

**Audit.** The pipeline audits every decision; these handlers add non-secret details:
``mission_id``, ``seq``, ``phase``, ``letter_id`` (sha12), ``block_id``, ``agent_id``,
``duplicate``.

**Mailbox cache.** Open mailboxes are kept by the host (:meth:`core.host.context.HostContext.
open_mailbox`) and checked cheaply before every use (:class:`core.missions.mailbox.
MailboxCache`), which is what makes a post O(1) in the mailbox's length.
"""

from __future__ import annotations

from pydantic import Field

from core.host.operations import Call, Outcome
from core.missions.blocks import load_store
from core.missions.letters import LetterJson, sha12
from core.missions.mailbox import MAX_NOTE_CHARS, AgentId
from core.missions.posting import DELIVERY_NOTICE, Posted, deliver_direct, post_mission_letter
from core.model import Contract
from core.projects.project import PROJECT_ID_PATTERN

__all__ = [
    "DeliverAnswer",
    "DeliverArgs",
    "MissionPostArgs",
    "PostAnswer",
    "archives",
    "mission_deliver",
    "mission_post",
]

_PROJECT = Field(pattern=PROJECT_ID_PATTERN)


class MissionPostArgs(Contract):
    """``mission.post``: who posts (``agent_id``), the letter, and — only for an ``archived``
    letter, only from the page's gesture — ``archived_via`` naming the gesture token."""

    project: str = _PROJECT
    agent_id: AgentId
    letter: LetterJson
    archived_via: str | None = Field(default=None, max_length=64)


def archives(args: MissionPostArgs) -> bool:
    """True for a post that is a person's archive gesture: an ``archived`` letter, or any post
    that names ``archived_via`` at all (seed 004 §1h, §8)."""
    return args.archived_via is not None or args.letter.get("phase") == "archived"


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


async def mission_post(call: Call[MissionPostArgs]) -> Outcome:
    """Refuses ``letter_invalid``, ``brain_mismatch``, ``unknown_block``, ``stale_head`` (with
    the actual head), ``invalid_transition``, ``project-not-found``; nothing is appended on
    refusal."""
    args = call.args
    opened, mailbox = await call.ctx.open_mailbox(args.project)
    posted = await post_mission_letter(
        mailbox,
        args.letter,
        agent_id=args.agent_id,
        brain=opened.manifest.name,
        store=await load_store(opened.files),
        now_ms=call.ctx.clock.now_ms(),
    )
    rule = "mission-letter-duplicate" if posted.duplicate else "mission-letter-posted"
    return Outcome(
        _post_answer(posted),
        project=args.project,
        rule=rule,
        details=_post_details(posted, args.agent_id),
    )


class DeliverArgs(Contract):
    """``mission.deliver`` (compose ``direct``): the seq-1 ``judging`` letter, the packet
    markdown it names by ``packet_ref``, and the inbox ``to`` that receives the packet."""

    project: str = _PROJECT
    agent_id: AgentId
    to: AgentId = Field(title="Agent id")
    letter: LetterJson
    packet: str = Field(min_length=1, max_length=MAX_NOTE_CHARS)


class DeliverAnswer(Contract):
    """The posted letter, the packet note's content id, and the honest notice."""

    posted: PostAnswer
    note_id: str
    notice: str


async def mission_deliver(call: Call[DeliverArgs]) -> Outcome:
    """Refuses as ``mission.post``, plus ``letter_invalid`` for a letter that is not seq-1
    ``judging`` or whose ``packet_ref`` is not the packet's sha256."""
    args = call.args
    opened, mailbox = await call.ctx.open_mailbox(args.project)
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
