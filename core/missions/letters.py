"""The mission letter ``m1nd-mission-letter-v0``: one mission's live state (seed 004 §1).

A letter is the state a mission's runner (or a person) reports; the tray shows the head of each
mission's chain of letters. This module is the whole contract of one letter on its own — its
shape, its per-phase rules and its content id. Rules that need the project (the block store,
the mission's current head, the human gesture) live in :mod:`core.missions.posting`.

Shape (every field of the seed's §1, names and nesting unchanged)::

    schema            "m1nd-mission-letter-v0"
    mission_id        "msn_" + 12 lowercase hex
    mission_seq       1, 2, 3 … (the letter's place in the mission's chain)
    prev_letter_id    sha12 of the previous letter's content id; null exactly when seq is 1
    block_id          "sb_…" (a block) or "sk_…" (the store's skeleton id, a whole-skeleton anchor)
    brain_ref         the project's display name (never a path)
    seat              "oracle" | "hand"                      — a role, never a vendor
    runner_id         the owner-pinned runner id, or null
    capability        build-runner | naming-runner | loop-runner | hand-runner | review-runner
    phase             judging | executing | gate | review | merge_wait | landed | failed | archived
    verdict           {decision: APPROVE|CHANGE|REJECT, gist: one line} or null
    gate              {command (verbatim), exit_status, artifact_hash "sha256:…"} or null
    receipt_candidate {block_id, type, scope {boundary_version, contract_version},
                       evidence {artifact_hash, evidence_refs, window?}} or null
    receipt           {imported, store_version} or null
    packet_ref        "sha256:…" of the packet that opened the mission, or null
    synthetic         false unless the letter is a smoke test or probe (default false)
    tokens_total      ≥ 0 (default 0)
    started_at        ISO-8601 instant with an offset
    updated_at        ISO-8601 instant with an offset, not before ``started_at``

Additions, both from the seed's own text: ``evidence.window`` is the captured execution window
(§5c; optional in a letter, required when the receipt is imported), and nothing else. Unknown
fields are refused, so no ``model``, ``vendor``, ``color`` or ``worktree`` field can ride along.

Roles, not vendors (§1a): ``seat`` and ``capability`` are closed role lists and the schema has
no field that could name a model or vendor; ``runner_id`` is an opaque owner-pinned id.

Per-phase gating (§1b, §1d, §1h(a)), checked by :meth:`MissionLetter._gate`:

- ``executing`` carries no ``verdict``;
- ``merge_wait`` needs a ``gate`` whose ``exit_status`` is 0 (merge_wait means "gate green —
  receipt not landed");
- ``landed`` needs ``receipt.imported == true`` and a ``receipt.store_version`` (that the
  version is real — an import recorded in the project's store — is checked at post time);
- ``receipt.imported == true`` appears on no other phase: not on ``merge_wait`` (gate zero is
  not evidence) and never on ``archived`` (a set-aside receipt is not a landing in disguise).

No absolute paths (§1f): no string anywhere in a letter may contain an absolute path — a token
starting ``/x``, ``//x``, ``~/``, ``~user/`` (a user name of at most 255 characters, the longest
a path segment can be), ``C:\\`` or ``C:/``, ``\\\\x`` or ``file:/`` (a token starts the text
or follows whitespace, a quote, ``=``, ``,``, ``;``, ``(``, ``[``, ``{``, ``<``, ``|`` or ``&``).
This is deliberately strict: ``"fixed /api"`` in a gist is refused; host-local detail belongs
in the owner-local side record, never in the letter. The rule is one pattern with bounded
quantifiers only, so it reads a text in linear time (issue 13).

Content id (§1e, decided here): a letter's id is the lowercase hex sha256 of the canonical JSON
(:func:`core.model.canonical_json`: keys sorted, no spaces, UTF-8, no ASCII escaping) of the
letter *as this schema normalises it* — every field present under its wire name (``schema``),
absent optional fields written as their defaults (``null``, ``false``, ``0``), strings exactly
as given. ``prev_letter_id`` is the first 12 hex characters (the *sha12*) of the previous
letter's id. Two encodings of the same letter therefore have one id, and any change to any
field gives another.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from core.missions.receipt_window import ExecutionWindow
from core.model import Contract, JsonOf, canonical_json
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.time import Instant, instant_us
from core.vocabulary import MissionId, Sha256Ref

__all__ = [
    "PHASES",
    "PHASE_LABELS",
    "PHASE_MEANINGS",
    "SCHEMA",
    "BlockId",
    "BlockRef",
    "CandidateJson",
    "Capability",
    "Evidence",
    "Gate",
    "LetterJson",
    "MissionId",
    "MissionLetter",
    "OneLine",
    "Phase",
    "ReceiptCandidate",
    "ReceiptState",
    "Scope",
    "Seat",
    "Verdict",
    "absolute_path_in",
    "candidate_id",
    "letter_id",
    "parse_letter",
    "sha12",
]

SCHEMA = "m1nd-mission-letter-v0"
Phase = Literal[
    "judging", "executing", "gate", "review", "merge_wait", "landed", "failed", "archived"
]
PHASES: tuple[str, ...] = get_args(Phase)
PHASE_MEANINGS: dict[str, str] = {
    "judging": "opened: its agent has the packet to weigh",
    "executing": "work under way",
    "gate": "gate running",
    "review": "in review",
    "merge_wait": "gate green — receipt not landed",
    "landed": "receipt imported",
    "failed": "did not finish",
    "archived": "set aside by a person",
}
"""The one-line meaning shown beside each phase (under its plain label, :data:`PHASE_LABELS`)."""
PHASE_LABELS: dict[str, str] = {
    "judging": "Opened",
    "executing": "Working",
    "gate": "Checking",
    "review": "In review",
    "merge_wait": "Ready to land",
    "landed": "Landed",
    "failed": "Failed",
    "archived": "Set aside",
}
"""The short plain word a person reads for each phase (issue 33 item 7); the phase id itself is
kept for tooltips, records and the protocol. ``judging`` — the protocol's first phase of every
mission (seed 004 §4a: a seq-1 letter is ``judging``), whoever holds the seat — reads "Opened",
not "Judging": beside a Doer's mission (:data:`core.missions.words.SEAT_LABELS`: ``hand`` is
"Doer", ``oracle`` "Judge") "Judging" read as a Judge at work (stop 44)."""
Seat = Literal["hand", "oracle"]
Capability = Literal["build-runner", "naming-runner", "loop-runner", "hand-runner", "review-runner"]
Decision = Literal["APPROVE", "CHANGE", "REJECT"]

BlockId = Annotated[str, Field(pattern=r"^sb_[A-Za-z0-9_-]{1,64}$")]
BlockRef = Annotated[str, Field(pattern=r"^(sb|sk)_[A-Za-z0-9_-]{1,64}$")]
Sha12 = Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]
RunnerId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
Slug = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")]


def _no_control(text: str) -> str:
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        raise ValueError("holds a control character")
    return text


def _no_control_but_tab_newline(text: str) -> str:
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in text):
        raise ValueError("holds a control character")
    return text


OneLine = Annotated[str, Field(min_length=1, max_length=300), AfterValidator(_no_control)]
Name = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_no_control)]
Ref = Annotated[str, Field(min_length=1, max_length=500), AfterValidator(_no_control)]
Command = Annotated[
    str, Field(min_length=1, max_length=4000), AfterValidator(_no_control_but_tab_newline)
]

_ABSOLUTE = re.compile(
    r"""(?:^|[\s"'`=,;(\[{<|&])(?:/[^\s/]|//[^\s/]|~[\w.-]{0,255}[/\\]|[A-Za-z]:[\\/]|\\\\[^\s\\]|file:/)""",
    re.IGNORECASE,
)


def absolute_path_in(text: str) -> bool:
    """True when ``text`` contains an absolute path token (rule in the module docstring)."""
    return _ABSOLUTE.search(text) is not None


class Verdict(Contract):
    """A judgement: ``decision`` and a one-line ``gist`` (≤ 300 characters)."""

    decision: Decision
    gist: OneLine


class Gate(Contract):
    """The gate run: ``command`` verbatim, its ``exit_status``, the sha256 of its full log."""

    command: Command
    exit_status: int = Field(ge=-(2**31), le=2**31 - 1)
    artifact_hash: Sha256Ref


class Scope(Contract):
    """What a receipt was proved against: the block's boundary and the contract version."""

    boundary_version: int = Field(ge=1, le=10**9)
    contract_version: int = Field(ge=1, le=10**9)


class Evidence(Contract):
    """The proof: artifact hash, references, and the captured execution window (§5c)."""

    artifact_hash: Sha256Ref
    evidence_refs: list[Ref] = Field(default_factory=list, max_length=64)
    window: ExecutionWindow | None = None


class ReceiptCandidate(Contract):
    """A receipt ready for a person to import (§5c): block, type, scope, evidence."""

    block_id: BlockId
    type: Slug
    scope: Scope
    evidence: Evidence


class ReceiptState(Contract):
    """Whether the mission's receipt is imported, and the store version the import made."""

    imported: bool
    store_version: int | None = Field(default=None, ge=1, le=10**12)


def _gate_error(field: str, reason: str) -> PydanticCustomError:
    return PydanticCustomError(
        "letter_gate", "{field}: {reason}", {"field": field, "reason": reason}
    )


class MissionLetter(Contract):
    """One ``m1nd-mission-letter-v0`` letter (fields and rules in the module docstring).

    Build it with :func:`parse_letter` to get ``letter_invalid`` refusals naming the field.
    """

    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["m1nd-mission-letter-v0"] = Field(alias="schema")
    mission_id: MissionId
    mission_seq: int = Field(ge=1, le=10**9)
    prev_letter_id: Sha12 | None
    block_id: BlockRef
    brain_ref: Name
    seat: Seat
    runner_id: RunnerId | None = None
    capability: Capability
    phase: Phase
    verdict: Verdict | None = None
    gate: Gate | None = None
    receipt_candidate: ReceiptCandidate | None = None
    receipt: ReceiptState | None = None
    packet_ref: Sha256Ref | None = None
    synthetic: bool = False
    tokens_total: int = Field(default=0, ge=0, le=10**15)
    started_at: Instant
    updated_at: Instant

    @model_validator(mode="after")
    def _gate(self) -> MissionLetter:
        """Chain shape, per-phase gating and the no-absolute-path rule (module docstring)."""
        if self.mission_seq == 1 and self.prev_letter_id is not None:
            raise _gate_error("prev_letter_id", "the first letter of a mission has no previous")
        if self.mission_seq > 1 and self.prev_letter_id is None:
            raise _gate_error("prev_letter_id", "a letter after the first names its previous")
        if instant_us(self.updated_at) < instant_us(self.started_at):
            raise _gate_error("updated_at", "is earlier than started_at")
        imported = self.receipt is not None and self.receipt.imported
        if self.phase == "executing" and self.verdict is not None:
            raise _gate_error("verdict", "an executing letter carries no verdict")
        if self.phase == "merge_wait":
            if self.gate is None:
                raise _gate_error("gate", "merge_wait needs the gate that ran")
            if self.gate.exit_status != 0:
                raise _gate_error("gate.exit_status", "merge_wait means the gate exited 0")
        if self.phase == "landed" and not (
            self.receipt is not None and self.receipt.imported and self.receipt.store_version
        ):
            raise _gate_error(
                "receipt",
                "landed needs an imported receipt naming its store_version; "
                "a green gate without one is merge_wait",
            )
        if self.phase == "archived" and imported:
            raise _gate_error(
                "receipt.imported", "an archived letter sets its receipt aside, never imports it"
            )
        if imported and self.phase != "landed":
            raise _gate_error("receipt.imported", "only a landed letter states an imported receipt")
        for where, text in _strings(self.model_dump(by_alias=True)):
            if absolute_path_in(text):
                raise _gate_error(where, "holds an absolute path; letters name no host path")
        return self

    def wire(self) -> dict[str, Any]:
        """The letter as JSON data, every field under its wire name (the content-id form)."""
        return self.model_dump(mode="json", by_alias=True)


def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


def letter_id(letter: MissionLetter) -> str:
    """The letter's content id: sha256 hex of its canonical JSON (module docstring)."""
    return hashlib.sha256(canonical_json(letter.wire())).hexdigest()


def sha12(content_id: str) -> str:
    """The first 12 hex characters of a content id: what ``prev_letter_id`` holds."""
    return content_id[:12]


def candidate_id(candidate: dict[str, Any]) -> str:
    """``sha256:`` + hex sha256 of a receipt candidate's canonical JSON, exactly as given."""
    return "sha256:" + hashlib.sha256(canonical_json(candidate)).hexdigest()


def parse_letter(raw: object) -> MissionLetter:
    """Validate ``raw`` (JSON data: a dict) as a :class:`MissionLetter`.

    Raises :class:`~core.refusals.Refused` ``letter_invalid`` with ``field`` naming the first
    offending field (``phase``, ``gate.exit_status``, ``receipt``, …) and a sentence that never
    echoes input values.
    """
    if not isinstance(raw, dict):
        raise Refused(Code.LETTER_INVALID, "A mission letter is a JSON object.", field="letter")
    try:
        return MissionLetter.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        if first["type"] == "letter_gate":  # our own gate rules: field and reason are ours
            ctx = first.get("ctx") or {}
            field, reason = str(ctx.get("field", "letter")), str(ctx.get("reason", "invalid"))
            where = f"letter.{field}"
            raise Refused(Code.LETTER_INVALID, f"{where}: {reason}"[:1000], field=where) from None
        # anything else names only the letter's declared fields, never the caller's keys
        names = known_names(MissionLetter)
        raise invalid_input(
            exc, names, code=Code.LETTER_INVALID, under="letter", first=True
        ) from None


LetterJson = Annotated[dict[str, Any], JsonOf(MissionLetter)]
"""A :class:`MissionLetter` as JSON data under its wire names (:meth:`MissionLetter.wire`):
relayed as written, or checked later by the letter's own rule (issue 35: its schema is the
model's)."""

CandidateJson = Annotated[dict[str, Any], JsonOf(ReceiptCandidate)]
"""A :class:`ReceiptCandidate` as JSON data, checked by the import's own rule."""
