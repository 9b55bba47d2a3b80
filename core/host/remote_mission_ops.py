"""Missions in a project of a remote environment, from the page (issue 30, the browser side;
seed 004 §4b, §5; SPEC §9, §12).

The runner daemon runs on the environment server; this host holds the bearer and gives a
person's gestures. Every operation here asks the server's mission routes with that bearer
(:meth:`core.custody.peer_admin.PeerAdmin.mission_route`); the rules of what is shown and when
spawn is offered are :mod:`core.missions.remote_runs`.

==================  =======  ==========================================================
operation           gesture  what
==================  =======  ==========================================================
``remote.board``    no       blocks, missions' heads, runners, whether spawn is offered
``remote.spawn``    yes      render the packet, draft the seq-1 ``judging`` letter, spawn
``remote.log``      no       the run's log, last ≤ 10,000 lines, escape codes stripped
``remote.cancel``   yes      a person cancels: the runner posts ``failed``
``remote.evidence`` no       a candidate's hash: checked by the environment, or a claim
``remote.diff``     no       the mission branch's change: files, +/- counts, unified diffs
``remote.merge``    yes      a person merges the mission branch into the checked-out branch
``remote.land``     yes      a person imports the candidate's receipt; ``landed`` posts
==================  =======  ==========================================================

No answer carries a bearer, a runner secret or a worktree path: the server's answers hold
none, and each is read into a closed shape before it reaches the page.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ConfigDict, Field

from core.custody.provider_keys import fingerprint, keys_for_run, load_keys
from core.host.env_ops import services
from core.host.operations import Call, Outcome
from core.host.remote_draft import draft_from_board
from core.missions.harness import harness_keys, load_harness
from core.missions.letters import BlockRef, Capability, LetterJson, Seat
from core.missions.mailbox import AgentId
from core.missions.packet import (
    MAX_NOTE_CHARS,
    ModeOption,
)
from core.missions.remote_runs import (
    HOLDS_SECRET_WORDS,
    MERGEABLE,
    MOVING,
    BoardBlock,
    BoardHead,
    DiffView,
    EvidenceView,
    Landed,
    LogView,
    Merged,
    RemoteBoard,
    RunnerLive,
    Step,
    candidate_hash,
    evidence_view,
    landed_receipt,
    merge_refusal,
    parse_board,
    parse_diff,
    parse_landed,
    parse_log,
    parse_merged,
    parse_runners,
    phase_words,
    spawn_option,
    timeline,
)
from core.model import Contract
from core.refusals import Code, Refused
from core.vocabulary import MissionId, ProjectId

__all__ = [
    "BoardAnswer",
    "BoardArgs",
    "Cancelled",
    "DiffView",
    "EvidenceView",
    "KeyNeed",
    "Landed",
    "LogArgs",
    "LogView",
    "Merged",
    "MissionRef",
    "RemoteLandArgs",
    "SpawnArgs",
    "Spawned",
]

_ENV = Field(alias="envKey", max_length=64)
_MISSION = Field(alias="missionId")


class BoardArgs(Contract):
    """``remote.board``: a project of a remote environment and the capability a spawn would
    ask for (which runner must be live)."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = _ENV
    project: ProjectId
    capability: Capability = "build-runner"


class HeadView(Contract):
    """One mission's head for the page: its id, phase, the phase in words, its seq, when it
    moved, its runner, its reason (the verdict's gist: a ``failed`` head's "cancelled by a person"),
    its timeline (:func:`~core.missions.remote_runs.timeline`), whether a person may cancel it
    (:data:`~core.missions.remote_runs.MOVING`), whether its branch may be reviewed and merged
    (:data:`~core.missions.remote_runs.MERGEABLE`) and the whole head letter."""

    mission_id: str
    phase: str
    words: str
    seq: int
    updated_at: str
    runner_id: str | None
    reason: str | None
    timeline: list[Step]
    cancellable: bool
    mergeable: bool = False
    letter: LetterJson
    receipt: str | None = Field(
        default=None,
        description="A landed head's receipt in words: 'receipt ✓ store vN' (issue 30, Review; "
        "core.missions.remote_runs.landed_receipt), else null.",
    )


class KeyNeed(Contract):
    """A provider key a listed runner's harness needs (issue 31): its ``variable``, the
    ``fingerprint`` of the key this host holds for it (``None``: not set) and whether it is
    ``granted`` to this environment. Never a value."""

    variable: str
    fingerprint: str | None
    granted: bool


class BoardAnswer(Contract):
    """The remote project's board (:class:`~core.missions.remote_runs.RemoteBoard`) with the
    runners its server lists, the ``spawn`` option (available, or the reason why not),
    ``moving``: a mission is waiting for or under its runner (the page follows faster), and
    ``keys``: each variable a runner of ``capability`` needs, whether it is granted here."""

    env_key: str
    project: str
    brain_ref: str
    skeleton_id: str | None
    blocks: list[BoardBlock]
    git: bool
    heads: list[HeadView]
    moving: bool
    runners: list[RunnerLive]
    spawn: ModeOption
    keys: list[KeyNeed] = Field(default_factory=list)


async def _key_needs(call: Call[BoardArgs], runners: list[RunnerLive]) -> list[KeyNeed]:
    label = (await load_harness(call.ctx.state)).active(call.args.env_key, call.args.capability)
    needed: set[str] = set()
    for runner in runners:
        if runner.capability != call.args.capability:
            continue
        if label is None:  # no choice: each runner's first template
            needed |= set(runner.keys)
        else:  # the active template (Settings → Harness)
            needed |= {v for t in runner.templates if t.label == label for v in t.keys}
    wanted = sorted(needed)
    if not wanted:
        return []
    held = await load_keys(call.ctx.state)
    needs = []
    for variable in wanted:
        key = held.find(variable)
        needs.append(
            KeyNeed(
                variable=variable,
                fingerprint=None if key is None else fingerprint(key.value),
                granted=key is not None and call.args.env_key in key.granted,
            )
        )
    return needs


def _head_view(head: BoardHead) -> HeadView:
    letter = head.letter
    phase = str(letter.get("phase", ""))
    verdict = letter.get("verdict")
    reason = verdict.get("gist") if isinstance(verdict, dict) else None
    return HeadView(
        mission_id=head.mission_id,
        phase=phase,
        words=phase_words(phase),
        seq=int(letter.get("mission_seq", 0)),
        updated_at=str(letter.get("updated_at", head.posted_at)),
        runner_id=letter.get("runner_id"),
        reason=reason if isinstance(reason, str) else None,
        timeline=timeline(phase),
        cancellable=phase in MOVING,
        mergeable=phase in MERGEABLE,
        letter=letter,
        receipt=landed_receipt(letter),
    )


async def remote_board(call: Call[BoardArgs]) -> Outcome:
    """Read the board and the server's identity; decide ``spawn``
    (:func:`~core.missions.remote_runs.spawn_option`). Without a pairing (never paired, or
    revoked) the board is empty and ``spawn`` says "No environment". Refuses
    ``unknown-environment`` (not a remote), ``environment-unreachable``,
    ``peer-answer-invalid``, and what the server refuses (``pairing-revoked`` the first time
    it is seen, ``project-not-found``…). Writes
    nothing."""
    a = call.args
    admin = services(call).admin
    paired = await admin.standing(a.env_key) == "paired"
    runners = parse_runners(await admin.identity_text(a.env_key))
    if paired:
        board = parse_board(await admin.mission_route(a.env_key, "board", {"project": a.project}))
    else:  # unpaired or revoked: nothing to read there, and the reason says so
        board = RemoteBoard(brain_ref="-", git=False)
    option = spawn_option(
        paired=paired,
        runners=runners,
        capability=a.capability,
        git=board.git,
        read_only=call.ctx.policy.read_only,
    )
    answer = BoardAnswer(
        env_key=a.env_key,
        project=a.project,
        brain_ref=board.brain_ref,
        skeleton_id=board.skeleton_id,
        blocks=board.blocks,
        git=board.git,
        heads=[_head_view(h) for h in board.heads],
        moving=any(str(h.letter.get("phase")) in MOVING for h in board.heads),
        runners=runners,
        spawn=option,
        keys=await _key_needs(call, runners),
    )
    return Outcome(answer)


class SpawnArgs(Contract):
    """``remote.spawn`` (a person's gesture): the remote project, the block (or the store's
    skeleton id), the agent it is for (``to``, the inbox name), seat, capability, an optional
    runner id, and what the person asks (``note``)."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = _ENV
    project: ProjectId
    block_id: BlockRef = Field(title="Block")
    to: AgentId = Field(default="hand-1", title="Agent id")
    seat: Seat = Field(default="hand", title="Seat")
    capability: Capability = Field(default="build-runner", title="Capability")
    runner_id: str | None = Field(
        default=None, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$", title="Runner id"
    )
    note: str = Field(default="", max_length=MAX_NOTE_CHARS, title="What you ask of the agent")


class Spawned(Contract):
    """What a spawn did: the mission it opened, the runner it is queued for, its
    ``packet_ref``. No path, no secret."""

    mission_id: str
    runner_id: str
    queued: bool
    packet_ref: str


class _SpawnAnswer(Contract):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    mission_id: MissionId = Field(alias="missionId")
    runner_id: str = Field(alias="runnerId", pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    queued: bool


async def remote_spawn(call: Call[SpawnArgs]) -> Outcome:
    """Render the packet for the block as the remote store states it now, draft the seq-1
    ``judging`` letter (``packet_ref`` its sha256) and send both to the server's spawn route,
    which checks every rule again and queues the mission for a live pinned runner. Refuses
    ``unknown_block`` (no such block there), ``tool-disabled`` / ``permission-denied`` /
    ``args-invalid`` as the server does (not live, not pinned, not a git repository), and
    what :func:`remote_board` refuses.

    Provider keys (issue 31): the variables the active agent template declares — the person's
    choice in Settings → Harness (:mod:`core.missions.harness`), named to the server by label
    beside the letter, never in it; the runner's first template when none is chosen —
    (:func:`~core.missions.harness.harness_keys` over the identity answer; ``args-invalid``
    when no runner is named and the live ones need different keys, ``permission-denied`` when
    the chosen template is not pinned there) are asked of the key
    custody (:func:`~core.custody.provider_keys.keys_for_run`: ``key-not-granted`` naming the
    variable, before anything is sent) and sent in the spawn body over the bearer channel, for
    that run only. Audited: envKey, project, mission, runner, and ``keys`` (variable →
    fingerprint; never a value)."""
    a = call.args
    admin = services(call).admin
    runners = parse_runners(await admin.identity_text(a.env_key))
    template = (await load_harness(call.ctx.state)).active(a.env_key, a.capability)
    variables = harness_keys(runners, a.capability, a.runner_id, template)
    keys = await keys_for_run(call.ctx.state, a.env_key, variables)
    board = parse_board(await admin.mission_route(a.env_key, "board", {"project": a.project}))
    draft = await draft_from_board(call.ctx, board, a.block_id, a)
    body = {"project": a.project, "packet": draft.packet, "letter": draft.letter}
    body["keys"] = {name: value.reveal() for name, value in keys.items()}
    if template is not None:  # the person's harness choice, by label; never in the letter
        body["template"] = template
    data = await admin.mission_route(a.env_key, "spawn", body)
    del body
    try:
        answer = _SpawnAnswer.model_validate(data)
    except ValueError:
        from core.custody.peer_answers import invalid_answer

        raise invalid_answer(mutating=True) from None
    spawned = Spawned(
        mission_id=answer.mission_id,
        runner_id=answer.runner_id,
        queued=answer.queued,
        packet_ref=draft.packet_ref,
    )
    return Outcome(
        spawned,
        rule="mission-spawned",
        details={
            "envKey": a.env_key,
            "project": a.project,
            "mission": answer.mission_id,
            "runner": answer.runner_id,
            # the audit keeps a detail's text (pipeline._scalar_details): the mapping as text
            "keys": str({name: fingerprint(value) for name, value in keys.items()}),
        },
    )


class LogArgs(Contract):
    """``remote.log``: a mission of a remote project and how many of its last lines
    (1 … 10,000)."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = _ENV
    project: ProjectId
    mission_id: MissionId = _MISSION
    lines: int = Field(default=10_000, ge=1, le=10_000)


def no_such_mission(mission_id: str, which: str = "") -> Callable[[Refused, str], Refused]:
    """The ``refine`` of :meth:`core.custody.peer_admin.PeerAdmin.mission_route` for a route
    that names one mission (``log``, ``diff``, ``cancel``): the server refuses ``args-invalid``
    there only for a mission it does not have (``which``: ``"queued or running "`` for a
    cancel) — the host's own models validated every argument it sent — so that refusal says
    so, naming the id the person gave (ours, pattern-checked: never the server's words);
    every other refusal passes unchanged. Stop 45's tryout: it read "The arguments do not
    match the operation's schema." (a code's meaning, not what went wrong)."""

    def refine(refused: Refused, _text: str) -> Refused:
        if refused.code is not Code.ARGS_INVALID:
            return refused
        return Refused(
            Code.ARGS_INVALID,
            f"The environment has no {which}mission {mission_id} in this project.",
            field="missionId",
        )

    return refine


async def remote_log(call: Call[LogArgs]) -> Outcome:
    """The run's log as text (:func:`~core.missions.remote_runs.parse_log`: escape codes
    stripped). Refuses ``args-invalid`` (no such mission there: :func:`no_such_mission`) and what
    the route refuses.
    Writes nothing."""
    a = call.args
    data = await services(call).admin.mission_route(
        a.env_key,
        "log",
        {"project": a.project, "missionId": a.mission_id, "lines": a.lines},
        refine=no_such_mission(a.mission_id),
    )
    view: LogView = parse_log(data)
    return Outcome(view)


class MissionRef(Contract):
    """``remote.cancel`` (a person's gesture): a mission of a remote project."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: str = _ENV
    project: ProjectId
    mission_id: MissionId = _MISSION


class Cancelled(Contract):
    """What a cancel did: ``running`` (its runner stops the process tree and posts
    ``failed`` "cancelled by a person"), ``queued`` (it left the queue; ``failed`` posted) or
    ``unheld`` (no live runner held it — its runner died or the server restarted — so the
    server posted ``failed`` "cancelled by a person" itself)."""

    mission_id: str
    cancelled: str


class _CancelAnswer(Contract):
    model_config = ConfigDict(extra="ignore")

    cancelled: str = Field(pattern=r"^(running|queued|unheld)$")


async def remote_cancel(call: Call[MissionRef]) -> Outcome:
    """Cancel a queued or running mission (the runner posts ``failed``). Refuses
    ``args-invalid`` (no queued or running mission by that id) and what the route refuses.
    Audited: envKey, project, mission."""
    a = call.args
    data = await services(call).admin.mission_route(
        a.env_key,
        "cancel",
        {"project": a.project, "missionId": a.mission_id},
        refine=no_such_mission(a.mission_id, "queued or running "),
    )
    try:
        answer = _CancelAnswer.model_validate(data)
    except ValueError:
        from core.custody.peer_answers import invalid_answer

        raise invalid_answer(mutating=True) from None
    return Outcome(
        Cancelled(mission_id=a.mission_id, cancelled=answer.cancelled),
        rule="mission-cancelled",
        details={"envKey": a.env_key, "project": a.project, "mission": a.mission_id},
    )


async def remote_evidence(call: Call[MissionRef]) -> Outcome:
    """Whether the ``merge_wait`` head's receipt candidate is backed by a log the environment's
    runner kept (its artifact hash is that log's sha256: "checked by the environment") or is
    only its poster's claim (issue 30, review). Refuses ``invalid_transition`` when the head is
    not a ``merge_wait`` with a candidate, and what the routes refuse. Writes nothing."""
    a = call.args
    admin = services(call).admin
    board = parse_board(await admin.mission_route(a.env_key, "board", {"project": a.project}))
    head = next((h for h in board.heads if h.mission_id == a.mission_id), None)
    claimed = None if head is None else candidate_hash(head.letter)
    if claimed is None:
        raise Refused(
            Code.INVALID_TRANSITION,
            "Only a merge_wait mission carrying a receipt candidate has evidence to check.",
            field="missionId",
        )
    data = await admin.mission_route(
        a.env_key,
        "evidence",
        {"project": a.project, "missionId": a.mission_id, "artifactHash": claimed},
    )
    view: EvidenceView = evidence_view(claimed, data)
    return Outcome(view)


async def remote_diff(call: Call[MissionRef]) -> Outcome:
    """The mission branch's change against its base, as the environment computed it with its
    own fenced git (issue 30, review): files with +/- counts and unified diffs, bounded, each
    cut one saying so (:class:`~core.missions.remote_runs.DiffView`; no absolute path).
    Refuses ``args-invalid`` (no such mission or branch) and what the route refuses. Writes
    nothing."""
    a = call.args
    data = await services(call).admin.mission_route(
        a.env_key,
        "diff",
        {"project": a.project, "missionId": a.mission_id},
        refine=no_such_mission(a.mission_id),
    )
    view: DiffView = parse_diff(data)
    # issue 31: the host's second wall redacts a held secret from the patches on their way out;
    # the person must also be told, before Merge, that the branch carries it in the clear
    redactor = await call.ctx.secrets.current(call.ctx.state)
    shown = "\n".join(f"{f.path}\n{f.patch or ''}" for f in view.files)
    holds = bool(redactor) and bool(redactor.spans(shown.encode("utf-8", "surrogatepass")))
    return Outcome(
        view.model_copy(update={"secret_warning": HOLDS_SECRET_WORDS if holds else None})
    )


async def remote_merge(call: Call[MissionRef]) -> Outcome:
    """A person merges a ``merge_wait`` or ``landed`` mission's branch ``vbx/<mission_id>``
    into the project's checked-out branch on its environment (issue 30, Merge): fast-forward or
    a merge commit naming the mission. The server refuses ``invalid_transition`` (another
    phase), ``read-only-mode`` (SAFE mode), ``args-invalid`` (a conflict, its files listed,
    nothing changed). Audited here and on the server: envKey, project, mission, how."""
    a = call.args
    data = await services(call).admin.mission_route(
        a.env_key,
        "merge",
        {"project": a.project, "missionId": a.mission_id},
        refine=merge_refusal,  # a conflict lists its files
    )
    merged: Merged = parse_merged(a.mission_id, data)
    return Outcome(
        merged,
        rule="mission-merged",
        details={
            "envKey": a.env_key,
            "project": a.project,
            "mission": a.mission_id,
            "how": merged.how,
        },
    )


class RemoteLandArgs(MissionRef):
    """``remote.land`` (a person's gesture): a ``merge_wait`` mission of a remote project whose
    receipt the person imports; ``confirm_claim`` (``confirmClaim``): they confirmed, in the
    page's extra dialog, importing a candidate that is only its poster's claim;
    ``imported_via`` names the gesture token, as for ``receipt.import`` and ``tray.land``."""

    confirm_claim: bool = Field(default=False, alias="confirmClaim")
    imported_via: str | None = Field(default=None, max_length=64)


async def remote_land(call: Call[RemoteLandArgs]) -> Outcome:
    """A person lands a remote mission (issue 30, Review; seed 004 F2.5d): the environment
    server imports the ``merge_wait`` head's receipt candidate into the project's block store
    and posts the ``landed`` letter naming the store version the import made
    (:meth:`server_host.runner_land.Landing.land`, which checks every rule again and runs the
    one landing, ``tray.land``, there). Refuses ``human_gesture_required`` (not the page's
    gesture, before anything is sent), and as the server does: ``confirmation-required`` (a
    claim-only candidate without ``confirm_claim``), ``invalid_transition`` (not
    ``merge_wait``), ``read-only-mode``, ``receipt-window-invalid``,
    ``receipt-scope-invalid``, ``args-invalid``. A mission already landed is answered again
    (``duplicate``). The answer (:class:`~core.missions.remote_runs.Landed`) is read by
    :func:`~core.missions.remote_runs.parse_landed`. Audited here and on the server: envKey,
    project, mission, store version, checked."""
    a = call.args
    data = await services(call).admin.mission_route(
        a.env_key,
        "land",
        {"project": a.project, "missionId": a.mission_id, "confirmClaim": a.confirm_claim},
    )
    landed: Landed = parse_landed(a.mission_id, data)
    return Outcome(
        landed,
        rule="mission-landed",
        details={
            "envKey": a.env_key,
            "project": a.project,
            "mission": a.mission_id,
            "store_version": landed.store_version,
            "checked": landed.checked,
            "duplicate": landed.duplicate,
        },
    )
