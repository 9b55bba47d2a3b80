"""Missions that run on a remote environment, as the browser host sees them (issue 30, the
browser side; seed 004 §4b, §5; SPEC §9, §12).

The runner daemon lives on an environment server; the browser host only asks it, with the
bearer it holds, and shows what it answers. The rules here:

- **What the server answers is untrusted text** (:func:`parse_board`, :func:`parse_runners`,
  :func:`parse_log`): each answer is read into a closed, bounded shape or refused
  ``peer-answer-invalid``. A head's letter is checked by :func:`core.missions.letters
  .parse_letter` (and so holds no absolute path) before the page sees it.
- **When spawn is offered** (:func:`spawn_option`): the project lives on a paired remote
  environment, a runner is pinned there for the chosen capability and is live (the server's
  public identity lists them, never their secrets), the project is a git repository with a
  commit, and this host is not read-only. Otherwise the option says which one is missing, in
  a sentence. The server checks every rule again when the spawn arrives.
- **A log is text** (:func:`strip_ansi`): colour and cursor escape sequences and every other
  control character but newline and tab are taken out before the page receives it; the page
  puts it in a text node.
- **Phases in words** (:func:`phase_words`): the timeline a person reads.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from core.json_bound import parse_json
from core.missions.harness import TemplateView
from core.missions.letters import PHASE_MEANINGS, BlockRef, LetterJson, parse_letter
from core.missions.packet import READ_ONLY_REASON, ModeOption
from core.model import Contract
from core.paths import META_DIR, fold
from core.refusals import Code, Refused
from core.relayed_text import escape_invisible
from core.vocabulary import MissionBranch, MissionId

__all__ = [
    "FOLLOW_IDLE_MS",
    "FOLLOW_LOG_MS",
    "FOLLOW_MOVING_MS",
    "HOLDS_SECRET_WORDS",
    "MERGEABLE",
    "MOVING",
    "REMOTE_DIRECT_REASON",
    "BoardBlock",
    "BoardHead",
    "DiffFile",
    "DiffView",
    "EvidenceView",
    "Landed",
    "LogView",
    "Merged",
    "RemoteBoard",
    "RunnerLive",
    "Step",
    "candidate_hash",
    "evidence_view",
    "follow_ms",
    "landed_receipt",
    "landed_words",
    "merge_refusal",
    "parse_board",
    "parse_diff",
    "parse_landed",
    "parse_log",
    "parse_merged",
    "parse_runners",
    "phase_words",
    "refuse_host_owned_changes",
    "remote_compose_modes",
    "require_claim_confirmed",
    "spawn_keys",
    "spawn_option",
    "strip_ansi",
    "timeline",
]

MAX_LOG_CHARS = 1 << 20
"""The most characters of a log the host hands the page at once (the server keeps ≤ 1 MiB)."""

NOT_PAIRED_REASON = (
    "No environment: this browser holds no pairing with that environment server, so nothing "
    "can be spawned there (pair it on the Environments surface)."
)
NO_PIN_REASON = (
    "No runner is pinned for {capability} on that environment: its operator pins one in "
    "runners.toml (docs/runner.md)."
)
NOT_LIVE_REASON = (
    "The runner pinned for {capability} is not live: its operator starts voicebox-env runner "
    "beside the server."
)
NOT_GIT_REASON = (
    "The project is not a git repository with a commit: a mission runs in a git worktree. Run "
    "git init (the Command… dialog's git/init) and make a first commit."
)


class RunnerLive(Contract):
    """One pinned runner as the server's identity lists it: ``runnerId``, its capability,
    whether it announced in the last 15 s (``live``), how many missions it runs (``busy``) and
    the provider-key variables its pinned harness needs (``keys``: names, issue 31; its
    first template's) and its ``templates``. Never a secret, a command or a path."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    runner_id: str = Field(alias="runnerId", pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    capability: str = Field(max_length=64)
    live: bool
    busy: int = Field(ge=0, le=10_000)
    keys: list[Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{1,63}$")]] = Field(
        default_factory=list, max_length=16
    )
    templates: list[TemplateView] = Field(default_factory=list, max_length=16)
    """Its pinned agent templates and what its probe found (issue 31, Settings → Harness)."""


class _Identity(Contract):
    model_config = ConfigDict(extra="ignore")

    runners: list[RunnerLive] = Field(default_factory=list, max_length=200)


class BoardBlock(Contract):
    """A block of the remote project's store (what a packet is about)."""

    model_config = ConfigDict(populate_by_name=True)

    id: BlockRef
    name: str = Field(min_length=1, max_length=200)
    purpose: str = Field(default="", max_length=2000)
    boundary_version: int = Field(alias="boundaryVersion", ge=1, le=10**9)


class BoardHead(Contract):
    """One mission's head in the remote project: its id, head letter id, when it was posted
    and the head letter (JSON data, checked by :func:`~core.missions.letters.parse_letter`)."""

    model_config = ConfigDict(populate_by_name=True)

    mission_id: MissionId = Field(alias="missionId")
    letter_id: str = Field(alias="letterId", max_length=80)
    posted_at: str = Field(alias="postedAt", max_length=40)
    letter: LetterJson


class RemoteBoard(Contract):
    """The remote project's missions board (``POST …/missions/board``): its brain name,
    skeleton id and store version, its blocks, whether it is a git repository with a commit,
    and its missions' heads, most recently moved first."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    brain_ref: str = Field(alias="brainRef", min_length=1, max_length=200)
    skeleton_id: str | None = Field(alias="skeletonId", default=None, max_length=80)
    store_version: int | None = Field(alias="storeVersion", default=None, ge=0)
    blocks: list[BoardBlock] = Field(default_factory=list, max_length=2000)
    git: bool
    heads: list[BoardHead] = Field(default_factory=list, max_length=200)


class LogView(Contract):
    """A mission's log as the page shows it: ``text`` (ANSI and control codes stripped),
    ``bytes`` the server's log holds now, ``finished`` once the run ended, ``truncated`` when
    the run printed more than the pin's output cap kept."""

    text: str
    bytes: int = Field(ge=0)
    finished: bool
    truncated: bool


def _invalid(what: str) -> Refused:
    return Refused(
        Code.PEER_ANSWER_INVALID,
        f"The environment's {what} was not what a Voicebox server says; it was not accepted.",
    )


def parse_runners(identity_text: str) -> list[RunnerLive]:
    """The pinned runners an identity answer lists (``[]`` for a server that lists none).
    Refuses ``peer-answer-invalid``."""
    try:
        return _Identity.model_validate(parse_json(identity_text)).runners
    except (Refused, ValidationError):
        raise _invalid("identity") from None


def parse_board(data: Any) -> RemoteBoard:
    """The board answer (JSON data) checked: its shape, and every head's letter by the letter
    contract (a letter carrying an absolute path or another mission's id is refused).
    Refuses ``peer-answer-invalid``."""
    try:
        board = RemoteBoard.model_validate(data)
        for head in board.heads:
            if parse_letter(head.letter).mission_id != head.mission_id:
                raise _invalid("missions board")
    except (ValidationError, Refused):
        raise _invalid("missions board") from None
    return board


class _LogAnswer(Contract):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(max_length=2 * MAX_LOG_CHARS)
    bytes: int = Field(ge=0)
    finished: bool
    truncated: bool


def parse_log(data: Any) -> LogView:
    """The log answer (JSON data) as the page shows it: :func:`strip_ansi` applied, then every
    invisible or direction-changing character written out as ``<U+XXXX>``
    (:func:`core.relayed_text.escape_invisible`: an agent's ``U+202E`` must not turn the lines
    around it backwards, a zero-width space not hide in a word; an ASCII log has none left
    once stripped), at most :data:`MAX_LOG_CHARS` characters kept (the last ones). Refuses
    ``peer-answer-invalid``."""
    try:
        answer = _LogAnswer.model_validate(data)
    except ValidationError:
        raise _invalid("mission log") from None
    text = strip_ansi(answer.text)[-MAX_LOG_CHARS:]
    if not text.isascii():
        text = escape_invisible(text)
    return LogView(
        text=text,
        bytes=answer.bytes,
        finished=answer.finished,
        truncated=answer.truncated,
    )


_ESCAPES = re.compile(
    r"\x1b\[[0-?]{0,64}+[ -/]{0,8}+[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]{0,512}+\x07"  # OSC (titles, hyperlinks) ended by BEL
    r"|\x1b[\]PX^_][^\x07\x1b]{0,512}+\x1b\\"  # OSC, DCS, SOS, PM, APC ended by ST
    r"|\x1b[\]PX^_][^\x07\x1b]{0,512}+"  # … unended
    r"|\x1b[@-Z\\-_]"  # two-character escapes
    r"|\x9b[0-?]{0,64}+[ -/]{0,8}+[@-~]"  # 8-bit CSI
)
"""Escape sequences, each bounded (possessive, finite repeats: linear, issue 29): a longer
parameter run is not a sequence a terminal honours, and what is left of it loses its escape
character to :data:`_CONTROLS`."""
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (colour, cursor, titles) and without any other
    control character but newline and tab (a carriage return too: ``\\r\\n`` becomes ``\\n``).
    Pure; the page shows the result as a text node."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))


def phase_words(phase: str) -> str:
    """The phase as a person reads it (:data:`core.missions.letters.PHASE_MEANINGS`)."""
    return PHASE_MEANINGS.get(phase, phase)


MOVING = frozenset({"judging", "executing", "gate"})
"""The phases of a mission still waiting for or under its runner: a person may cancel it, and
the page follows the board fast while one is shown."""

RUN_PATH = ("judging", "executing", "gate", "merge_wait", "landed")
"""The phases a mission that runs passes, in order (seed 004 §5c)."""


class Step(Contract):
    """One step of a mission's timeline: its phase, in words, and whether it is ``done``,
    where the mission is ``now``, or still ``next``."""

    phase: str
    words: str
    state: str


def timeline(phase: str) -> list[Step]:
    """The timeline a person reads for a mission whose head is ``phase``: the steps of
    :data:`RUN_PATH` up to it done, it now, the rest next; a ``failed`` or ``archived``
    mission ends there (the steps it passed are not known from the head: they are left out)."""
    if phase in RUN_PATH:
        at = RUN_PATH.index(phase)
        states = ["done"] * at + ["now"] + ["next"] * (len(RUN_PATH) - at - 1)
        pairs = zip(RUN_PATH, states, strict=True)
        return [Step(phase=p, words=phase_words(p), state=s) for p, s in pairs]
    return [
        Step(phase="judging", words=phase_words("judging"), state="done"),
        Step(phase=phase, words=phase_words(phase), state="now"),
    ]


def candidate_hash(letter: dict[str, Any]) -> str | None:
    """The artifact hash a ``merge_wait`` head's receipt candidate claims (``sha256:…``), or
    ``None`` when the head carries no candidate (a letter already checked by
    :func:`~core.missions.letters.parse_letter`)."""
    candidate = letter.get("receipt_candidate")
    if letter.get("phase") != "merge_wait" or not isinstance(candidate, dict):
        return None
    evidence = candidate.get("evidence")
    found = evidence.get("artifact_hash") if isinstance(evidence, dict) else None
    return found if isinstance(found, str) else None


CHECKED_WORDS = "checked by the environment: the hash is the log its runner kept"
CLAIM_WORDS = "only the poster's claim: no log the environment kept has this hash"


class EvidenceView(Contract):
    """Whether a ``merge_wait`` candidate's artifact hash is the sha256 of a log the
    environment's runner kept for the mission (``checked``) or only its poster's word, the hash
    and the sentence a person reads."""

    artifact_hash: str
    checked: bool
    words: str


def evidence_view(artifact_hash: str, data: Any) -> EvidenceView:
    """The evidence route's answer (JSON data ``{checked}``) for ``artifact_hash``. Refuses
    ``peer-answer-invalid``."""
    if not isinstance(data, dict) or not isinstance(data.get("checked"), bool):
        raise _invalid("evidence answer")
    checked = data["checked"]
    return EvidenceView(
        artifact_hash=artifact_hash,
        checked=checked,
        words=CHECKED_WORDS if checked else CLAIM_WORDS,
    )


def spawn_keys(
    runners: list[RunnerLive], capability: str, runner_id: str | None
) -> tuple[str, ...]:
    """The provider-key variables a spawn carries (issue 31 "Harness": exactly those the
    chosen runner's pin declares, no others), from the identity answer's ``runners``.

    A spawn naming ``runner_id`` carries that runner's ``keys`` (none when the server lists no
    such runner: its spawn route then refuses it as unpinned). A spawn naming no runner
    ("any live runner") carries the keys every live runner of ``capability`` declares when
    they all declare the same; when they differ it is refused ``args-invalid`` (``field``
    ``runner_id``), asking the person to choose the runner — never the union, which would give
    a run keys its harness does not need (decided for issue 31)."""
    if runner_id is not None:
        named = next((r for r in runners if r.runner_id == runner_id), None)
        return tuple(named.keys) if named is not None else ()
    needs = {tuple(sorted(r.keys)) for r in runners if r.capability == capability and r.live}
    if len(needs) > 1:
        raise Refused(
            Code.ARGS_INVALID,
            f"The live runners for {capability} need different provider keys; choose the "
            "runner to spawn with.",
            field="runner_id",
        )
    return needs.pop() if needs else ()


def spawn_option(
    *,
    paired: bool,
    runners: list[RunnerLive],
    capability: str,
    git: bool,
    read_only: bool,
) -> ModeOption:
    """Whether ``spawn`` is offered for a project of a remote environment, and if not the one
    reason a person acts on, checked in this order: no pairing (``paired``), this host
    read-only, no runner pinned for ``capability``, none of those live, the project not a git
    repository with a commit (module docstring; issue 30, compose → spawn)."""
    reason: str | None = None
    pinned = [r for r in runners if r.capability == capability]
    if not paired:
        reason = NOT_PAIRED_REASON
    elif read_only:
        reason = READ_ONLY_REASON
    elif not pinned:
        reason = NO_PIN_REASON.format(capability=capability)
    elif not any(r.live for r in pinned):
        reason = NOT_LIVE_REASON.format(capability=capability)
    elif not git:
        reason = NOT_GIT_REASON
    return ModeOption(mode="spawn", available=reason is None, reason=reason)


MERGEABLE = frozenset({"merge_wait", "landed"})
"""The phases whose branch a person may review and merge on its environment (issue 30,
review and Merge): the gate passed, landed or not."""


class DiffFile(Contract):
    """One file a mission's branch changed: its path (in the project, never absolute),
    ``added``/``removed`` line counts (``None`` for a binary file), the unified diff text
    (``None`` when not shown) and ``cut``: why the diff is cut or absent (over 2,000 lines,
    binary, past 100 files…)."""

    model_config = ConfigDict(extra="ignore")

    path: str = Field(min_length=1, max_length=4096, pattern=r"^[^/]")
    added: int | None = Field(default=None, ge=0)
    removed: int | None = Field(default=None, ge=0)
    binary: bool = False
    patch: str | None = Field(default=None, max_length=2_000_000)
    cut: str | None = Field(default=None, max_length=200)


class DiffView(Contract):
    """A mission's branch change against its base (issue 30, review): the branch, the base
    and head commit ids, ``into`` the project's checked-out branch a merge would land on
    (``None``: a detached HEAD), the files (at most 1,000) and how many more were not listed."""

    model_config = ConfigDict(extra="ignore")

    branch: MissionBranch
    base: str = Field(pattern=r"^[0-9a-f]{40,64}$")
    head: str = Field(pattern=r"^[0-9a-f]{40,64}$")
    into: str | None = Field(default=None, max_length=200)
    files: list[DiffFile] = Field(max_length=1_000)
    more: int = Field(default=0, ge=0)
    secret_warning: str | None = Field(
        default=None,
        max_length=400,
        description=(
            "Set by the host, never taken from the server: the sentence saying the change holds "
            "the value of a secret this host keeps (shown [redacted]) and what Merge would do."
        ),
    )


HOLDS_SECRET_WORDS = (
    "This change holds the value of a secret this host keeps (a provider key, a bearer or the "
    "host token), shown here as [redacted]. Merging puts that value into the branch, in the "
    "clear, for anyone who can read the repository."
)


def parse_diff(data: Any) -> DiffView:
    """The diff route's answer read into its closed shape, each file's path and patch with
    its invisible and direction-changing characters written out as ``<U+XXXX>``
    (:func:`core.relayed_text.escape_invisible`): a person reviews what will be merged, and a
    ``U+202E`` in the agent's code must not make it read as something else (Trojan Source,
    CVE-2021-42574). Refuses ``peer-answer-invalid``."""
    try:
        view = DiffView.model_validate(data)
    except ValueError:
        raise _invalid("diff answer") from None
    files = [
        f.model_copy(
            update={
                "path": escape_invisible(f.path),
                "patch": f.patch if f.patch is None else escape_invisible(f.patch),
            }
        )
        for f in view.files
    ]
    return view.model_copy(update={"files": files})


class Merged(Contract):
    """What a merge did (issue 30, Merge): the mission's branch merged ``into`` the project's
    checked-out branch, ``how`` (``fast-forward``, ``merge-commit``, ``up-to-date``) and the
    new ``head`` commit id."""

    model_config = ConfigDict(extra="ignore")

    mission_id: MissionId
    branch: MissionBranch
    into: str = Field(min_length=1, max_length=200)
    how: Literal["fast-forward", "merge-commit", "up-to-date"]
    head: str = Field(pattern=r"^[0-9a-f]{40,64}$")


def parse_merged(mission_id: str, data: Any) -> Merged:
    """The merge route's answer for ``mission_id`` read into its closed shape. Refuses
    ``peer-answer-invalid`` (as a mutating answer: the merge may have happened)."""
    try:
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return Merged.model_validate({**data, "mission_id": mission_id})
    except ValueError:
        from core.custody.peer_answers import invalid_answer

        raise invalid_answer(mutating=True) from None


MAX_CONFLICTS_SHOWN = 50


def merge_refusal(refused: Refused, text: str) -> Refused:
    """The refusal a person reads for a merge the environment refused (``text`` its answer):
    a conflict (``args-invalid`` carrying ``details.conflicts``, a JSON list of the project's
    paths, and ``conflictCount``) becomes this host's own sentence listing the conflicting
    files (at most :data:`MAX_CONFLICTS_SHOWN`) and saying nothing was changed; any other
    refusal is ``refused`` unchanged (issue 30, Merge)."""
    if refused.code is not Code.ARGS_INVALID:
        return refused
    try:
        details = parse_json(text)["refusal"]["details"]
        listed = parse_json(details["conflicts"])
        count = details.get("conflictCount")
    except (Refused, ValueError, KeyError, TypeError):
        return refused
    if not isinstance(listed, list) or not listed:
        return refused
    files = [p for p in listed if isinstance(p, str) and 0 < len(p) <= 4096]
    files = files[:MAX_CONFLICTS_SHOWN]
    total = count if isinstance(count, int) and count >= len(files) else len(files)
    more = f" and {total - len(files)} more" if total > len(files) else ""
    return Refused(
        Code.ARGS_INVALID,
        "The mission's branch conflicts with the project's checked-out branch in "
        + ", ".join(files)
        + more
        + ". Nothing was changed: resolve it in the project, or merge by hand.",
        field="missionId",
        details={"conflicts": json_text(files), "conflictCount": total},
        show_details=True,
    )


def json_text(value: Any) -> str:
    """``value`` as compact JSON text."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---- landing a remote mission (issue 30, Review: "Import this receipt" for a remote project)

CLAIM_UNCONFIRMED = (
    "This receipt candidate is only its poster's claim: no log this environment's runner kept "
    "has its artifact hash. Importing it needs the person's explicit confirmation that they "
    "accept the claim; nothing was imported."
)


def require_claim_confirmed(*, checked: bool, confirm_claim: bool) -> None:
    """The landing law of evidence (issue 30, Review): a candidate whose artifact hash is the
    sha256 of a log the environment's runner kept (``checked``) may be imported on the
    person's gesture; one that is only its poster's claim needs, in addition, the gesture's
    explicit confirmation (``confirm_claim``, the dialog that says so). Refuses
    ``confirmation-required`` (428) otherwise. The environment server asks this before it
    imports anything (:meth:`server_host.runner_desk.RunnerDesk.land`)."""
    if not checked and not confirm_claim:
        raise Refused(Code.CONFIRMATION_REQUIRED, CLAIM_UNCONFIRMED, field="confirmClaim")


MAX_OWNED_LISTED = 20
"""The most host-owned paths a merge refusal names (the count is whole)."""


def refuse_host_owned_changes(paths: list[str], branch: str) -> None:
    """The landing law at the merge (issue 30, Review; seed 004 §1c, F2.5d): a receipt lands
    in a project's block store only by a person importing it (``remote.land``), never as a
    file. A mission's branch that changes anything under the project's ``.voicebox/`` (its
    first segment, in any letter case: :data:`core.paths.META_DIR`, where the manifest, the
    block store and the mailbox live) is refused whole: merging it would write a store, a
    receipt or a letter no import, landed law or audit ever saw. ``paths`` are the
    project-relative paths the branch changes (as git names them, ``/``-separated).
    Refuses ``path-reserved`` (403) naming the first :data:`MAX_OWNED_LISTED` and the count;
    returns when there is none. The environment server asks this before it merges
    (:func:`server_host.runner_review.merge_branch`)."""
    meta = fold(META_DIR)
    owned = [p for p in paths if fold(p.split("/", 1)[0]) == meta]
    if not owned:
        return
    shown = ", ".join(owned[:MAX_OWNED_LISTED]) + (" …" if len(owned) > MAX_OWNED_LISTED else "")
    raise Refused(
        Code.PATH_RESERVED,
        f"{branch} changes the project's own {META_DIR}/ ({len(owned)} "
        f"file{'s' if len(owned) != 1 else ''}: {shown}): the block store and the missions "
        "change only through the host (a receipt lands by Import this receipt), so this "
        "branch is not merged. Nothing was changed.",
        field="missionId",
    )


def landed_words(store_version: int) -> str:
    """What a landed mission says of its receipt: ``receipt ✓ store vN`` (the store version the
    import made, which its ``landed`` letter names; the tray's words for a local project)."""
    return f"receipt ✓ store v{store_version}"


class Landed(Contract):
    """What landing a remote mission did (issue 30, Review): the receipt import made store
    version ``store_version`` (block ``block_id`` now ``color``), the ``landed`` letter
    ``letter_sha12`` (seq ``seq``) names it; ``checked``: the candidate's hash was a log the
    environment kept (else a claim the person confirmed); ``duplicate``: the mission was
    already landed and this is that landing's answer again (nothing imported or posted twice);
    ``words`` the line a person reads (:func:`landed_words`)."""

    mission_id: str
    store_version: int
    block_id: str
    color: str | None
    letter_sha12: str
    seq: int
    checked: bool
    duplicate: bool
    words: str


class _LandAnswer(Contract):
    model_config = ConfigDict(extra="ignore")

    mission_id: MissionId = Field(alias="missionId")
    store_version: int = Field(alias="storeVersion", ge=1, le=10**12)
    block_id: str = Field(alias="blockId", min_length=1, max_length=80)
    color: str | None = Field(default=None, max_length=16)
    letter_sha12: str = Field(alias="letterSha12", pattern=r"^[0-9a-f]{12}$")
    seq: int = Field(ge=2, le=10**6)
    checked: bool
    duplicate: bool


def parse_landed(mission_id: str, data: Any) -> Landed:
    """The land route's answer (JSON data ``{missionId, storeVersion, blockId, color,
    letterSha12, seq, checked, duplicate}``) for ``mission_id`` read into its closed shape
    (``words`` made here, never taken from the server). Refuses ``peer-answer-invalid`` as a
    mutating answer (the landing may have happened), also for an answer about another
    mission."""
    try:
        answer = _LandAnswer.model_validate(data)
        if answer.mission_id != mission_id:
            raise ValueError("not this mission's landing")
    except ValueError:
        from core.custody.peer_answers import invalid_answer

        raise invalid_answer(mutating=True) from None
    return Landed(
        **answer.model_dump(),
        words=landed_words(answer.store_version),
    )


def landed_receipt(letter: dict[str, Any]) -> str | None:
    """What a mission's head says of its receipt: :func:`landed_words` for a ``landed`` letter
    (already checked by :func:`~core.missions.letters.parse_letter`) whose receipt was imported,
    else ``None``."""
    receipt = letter.get("receipt")
    if letter.get("phase") != "landed" or not isinstance(receipt, dict):
        return None
    version = receipt.get("store_version")
    if receipt.get("imported") is not True or not isinstance(version, int):
        return None
    return landed_words(version)


# ----------------------------------------------------------------------------- the tray, compose
# (issue 30: the tray follows a remote project; compose → spawn)

FOLLOW_MOVING_MS = 250
"""How often (ms) the page re-reads a remote project's heads while one of them is
:data:`MOVING`: the runner posts a letter per phase, seconds apart at the least, so a letter
shows within about this (issue 30: "no polling slower than the letter itself")."""
FOLLOW_IDLE_MS = 2500
"""How often (ms) the page re-reads a remote project's heads when none is moving (a mission
someone else spawns there shows within about this; the local tray's own pace)."""
FOLLOW_LOG_MS = 100
"""How often (ms) the page re-reads an open mission's log while its run goes on (a line the
agent prints shows within about this plus one round trip; goal ≤ 250 ms p95 on loopback)."""


def follow_ms(phases: list[str]) -> int:
    """The page's next re-read of a remote project's heads, in ms: :data:`FOLLOW_MOVING_MS`
    while any of ``phases`` is :data:`MOVING`, else :data:`FOLLOW_IDLE_MS`."""
    return FOLLOW_MOVING_MS if any(p in MOVING for p in phases) else FOLLOW_IDLE_MS


REMOTE_DIRECT_REASON = (
    "This project's mailbox lives on its environment, not in this browser: direct delivery "
    "writes this browser's mailbox. Spawn it there, or copy the packet."
)


def remote_compose_modes(spawn: ModeOption) -> list[ModeOption]:
    """The modes Compose offers for a project of a remote environment, in display order: the
    clipboard (always), ``direct`` (never: :data:`REMOTE_DIRECT_REASON`), and ``spawn`` as
    :func:`spawn_option` decided it (issue 30, compose → spawn)."""
    return [
        ModeOption(mode="clipboard", available=True),
        ModeOption(mode="direct", available=False, reason=REMOTE_DIRECT_REASON),
        spawn,
    ]
