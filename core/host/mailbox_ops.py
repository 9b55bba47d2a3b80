"""The mailbox's plain letters and its mission heads (seed 004 §2; SPEC §9).

==========================  =====  =========================================
operation                   write  what it does
==========================  =====  =========================================
``mailbox.send``            yes    a plain letter to an agent's inbox
``mailbox.read``            no     plain letters, or ``kind=mission`` heads
==========================  =====  =========================================

**Warm-up** (issue 18). :func:`warm_mailboxes` opens the mailboxes of the host's projects once
the host is ready, in the background, so that the first post into a long mailbox finds its
persisted index open (:class:`core.missions.mailbox.MailboxCache`) instead of opening it then.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from core.custody.held_secrets import HELD_IN_LETTER, refuse_held_in_text
from core.host.context import HostContext
from core.host.operations import Call, Outcome
from core.missions.blocks import load_store
from core.missions.letters import LetterJson, sha12
from core.missions.mailbox import MAX_NOTE_CHARS, AgentId, MailboxLine, note_line
from core.model import Contract, JsonOf
from core.refusals import Code, Refused
from core.time import instant_iso
from core.vocabulary import ProjectId

__all__ = [
    "MailboxAnswer",
    "MailboxReadArgs",
    "MissionHeadView",
    "SendAnswer",
    "SendArgs",
    "mailbox_read",
    "mailbox_send",
    "warm_mailboxes",
]


WARM_PROJECTS = 16
"""At most this many projects' mailboxes are opened ahead of use (:func:`warm_mailboxes`)."""


class SendArgs(Contract):
    """``mailbox.send``: a plain letter from ``agent_id`` to the inbox ``to``; ``text`` is
    stored as the letter's ``body`` (the protocol's ``body`` is the binary payload)."""

    project: ProjectId
    agent_id: AgentId
    to: AgentId
    subject: str | None = Field(default=None, max_length=300)
    text: str = Field(max_length=MAX_NOTE_CHARS)


class SendAnswer(Contract):
    """The letter's content id; ``duplicate`` when the identical letter was already there."""

    id: str
    duplicate: bool


async def mailbox_send(call: Call[SendArgs]) -> Outcome:
    """Refuses ``args-invalid`` (a subject with a control character), ``project-not-found``,
    ``sanitizer_refused`` (a subject or text holding the value of a secret this host keeps:
    :func:`~core.custody.held_secrets.refuse_held_in_text`)."""
    args = call.args
    await refuse_held_in_text(
        call.ctx.secrets,
        call.ctx.state,
        {"subject": args.subject, "text": args.text},
        HELD_IN_LETTER,
    )
    _, mailbox = await call.ctx.open_mailbox(args.project)
    try:
        line = note_line(
            args.agent_id, args.to, args.subject, args.text, instant_iso(call.ctx.clock.now_ms())
        )
    except ValueError:
        raise Refused(
            Code.ARGS_INVALID, "The subject must be one line of text.", field="subject"
        ) from None
    duplicate = await mailbox.contains(line.id)
    if not duplicate:
        await mailbox.append([line])
    return Outcome(
        SendAnswer(id=line.id, duplicate=duplicate),
        project=args.project,
        details={"to": args.to, "agent_id": args.agent_id, "duplicate": duplicate},
    )


class MailboxReadArgs(Contract):
    """``mailbox.read``: without ``kind``, plain letters in log order (``to`` filters an inbox;
    ``cursor`` continues); ``kind="note"`` only notes; ``kind="mission"`` one head per mission,
    most recently moved first."""

    project: ProjectId
    kind: Literal["note", "mission"] | None = None
    to: AgentId | None = None
    cursor: str | None = Field(default=None, max_length=32)
    limit: int = Field(default=100, ge=1, le=1000)


class MissionHeadView(Contract):
    """One mission's head with the honest counts (:mod:`core.missions.chain`)."""

    mission_id: str
    letter_id: str
    sha12: str
    agent_id: str
    posted_at: str
    superseded_count: int
    off_chain_count: int
    letter: LetterJson


class MailboxAnswer(Contract):
    """Plain ``letters`` (each a mailbox line) or mission ``heads``; ``next_cursor`` continues
    a plain read; ``skipped`` counts unparseable lines (in this page, or in the whole mailbox for
    heads); ``missions`` is the number of missions with a head."""

    letters: list[Annotated[dict[str, Any], JsonOf(MailboxLine)]] = Field(default_factory=list)
    heads: list[MissionHeadView] = Field(default_factory=list)
    next_cursor: str | None = None
    skipped: int = 0
    missions: int | None = None


async def mailbox_read(call: Call[MailboxReadArgs]) -> Outcome:
    """Refuses ``project-not-found`` and ``args-invalid`` (a cursor this mailbox did not give).
    Unparseable lines are skipped and counted, never fatal."""
    args = call.args
    _, mailbox = await call.ctx.open_mailbox(args.project)
    if args.kind == "mission":
        states = await mailbox.missions()
        heads = [
            MissionHeadView(
                mission_id=s.head.letter.mission_id,
                letter_id=s.head.letter_id,
                sha12=sha12(s.head.letter_id),
                agent_id=s.head.agent_id,
                posted_at=s.head.at,
                superseded_count=s.superseded_count,
                off_chain_count=s.off_chain_count,
                letter=s.head.letter.wire(),
            )
            for s in states[: args.limit]
        ]
        answer = MailboxAnswer(heads=heads, skipped=mailbox.skipped, missions=len(states))
        return Outcome(answer, project=args.project)
    page = await mailbox.read_page(cursor=args.cursor, limit=args.limit, kind=args.kind, to=args.to)
    answer = MailboxAnswer(
        letters=[line.wire() for line in page.lines],
        next_cursor=page.next_cursor,
        skipped=page.skipped,
    )
    return Outcome(answer, project=args.project)


async def warm_mailboxes(ctx: HostContext, limit: int = WARM_PROJECTS) -> list[str]:
    """Open ahead of use the mailboxes of the ``limit`` most recently updated projects in the
    host's own storage (picked folders are left alone: opening one may need a permission),
    one project after another; return the ids whose mailbox this opened.

    Meant to run in the background once the host is ready (issue 18: the first post of a fresh
    host then finds the persisted index open). It changes no answer: every use of a mailbox
    checks storage first, and a call that needs a mailbox this is opening waits for that one
    open (:meth:`core.missions.mailbox.MailboxCache.warm`). An open it makes is the one the
    first call would have made — including the one rebuild of an old mailbox with no index,
    which writes the index. A mailbox another call is opening when the warm-up reaches it is
    waited for, not passed by (:meth:`core.missions.mailbox.MailboxCache.warm`), so when this
    returns every picked mailbox is open or its open has ended — the worker's ``settled``
    comes after this (issue 34). Every picked project whose mailbox is open has its block store
    read too, whoever opened the mailbox (what a post reads beside the mailbox: the storage's
    first open of that file is made here, not in the post; issue 34). A project that cannot be
    opened (refused) is skipped; its first call refuses as it would have. Never refuses."""
    try:
        projects = [m for m in await ctx.catalog.list() if m.kind != "directory"]
    except Refused:
        return []
    projects.sort(key=lambda m: (-m.updated_at, m.id))
    opened: list[str] = []
    for manifest in projects[:limit]:
        try:
            project = await ctx.catalog.open(manifest.id)
            if await ctx.mailboxes.warm(manifest.id, project.files):
                opened.append(manifest.id)
            if ctx.mailboxes.is_open(manifest.id):
                await load_store(project.files)
        except Refused:
            continue
    return opened
