"""The system-block store: a project's blocks, in ``.voicebox/skeleton.json`` (seed 004 §1, §8).

A project (a *brain*, SPEC §9) may have one store. Its shape::

    {"schema": "voicebox-skeleton-v1",
     "skeleton_id": "sk_…",            # the store's own identity; a whole-skeleton mission
                                       # anchors its letters here (seed 004 §1g)
     "store_version": 7,               # +1 on every change of blocks or receipts
     "blocks": [{"id": "sb_…", "name": "…", "purpose": "…",
                 "color": "grey" | "green", "boundary_version": 2}],
     "ratified": {"store_version": 6, "ratified_at": "…Z", "via": HUMAN_UI} | null,
     "receipts": [{"store_version": 7, "block_id": "sb_…", "candidate": {…},
                   "candidate_id": "sha256:…", "imported_at": "…Z", "mission_id": "msn_…"}]}

Laws kept here:

- **Colour moves only by receipt import** (§1c): no edit op can name a colour and no letter can
  touch the store; :mod:`core.missions.receipt_import` is the only code that sets ``color``.
- **Boundary**: a block's ``boundary_version`` is the version of its purpose — the edge of what
  it is responsible for. Changing the purpose bumps it; renaming does not. A receipt proved at
  an older boundary no longer imports (:mod:`core.missions.receipt_import`).
- **candidate_edit** (§8) applies a batch of ops (``add``, ``rename``, ``repurpose``,
  ``remove``) all or nothing: every op is checked, and for the runner seat every name and
  purpose passes the one sanitizer (:mod:`core.missions.sanitizer`), against a copy of the store;
  only a batch that passes whole is written, in one atomic write. The owner seat is not sanitized.
  The length caps (:data:`MAX_NAME_CHARS`, :data:`MAX_PURPOSE_CHARS`) are checked for the whole
  batch first, before the sanitizer reads any text (issue 13: it read every 10,000-character
  purpose of a 1 MB batch that the cap would then refuse).
- **ratify** records that a person accepted the store at the version they saw; it does not
  change ``store_version`` (it changes no block). The human gate is checked by the caller
  (:mod:`core.gestures`).

A missing file means the project has no store yet; an unreadable one refuses
``storage-failed`` rather than be guessed at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationError, model_validator

from core.gestures import HUMAN_UI, HumanUi
from core.missions.letters import BlockId, CandidateJson, MissionId
from core.missions.sanitizer import check_runner_text
from core.model import Contract, canonical_json
from core.paths import META_DIR, ProjectPath, check_name
from core.ports import ProjectFiles
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.time import Instant
from core.vocabulary import Sha256Ref

__all__ = [
    "CONTRACT_VERSION",
    "MAX_NAME_CHARS",
    "MAX_PURPOSE_CHARS",
    "SKELETON_PATH",
    "AddBlock",
    "Block",
    "Color",
    "EditOp",
    "EditOutcome",
    "ImportedReceipt",
    "Ratification",
    "RemoveBlock",
    "RenameBlock",
    "RepurposeBlock",
    "SkeletonStore",
    "apply_candidate_edit",
    "check_store_version",
    "load_store",
    "ratify",
    "save_store",
]

SKELETON_PATH = ProjectPath((META_DIR, "skeleton.json"))
STORE_SCHEMA: Final = "voicebox-skeleton-v1"
CONTRACT_VERSION = 1
"""The receipt contract version this store accepts (a candidate's ``scope.contract_version``)."""
MAX_BLOCKS = 10_000
MAX_NAME_CHARS = 200
"""The longest block name, in characters."""
MAX_PURPOSE_CHARS = 2000
"""The longest block purpose, in characters."""

Color = Literal["grey", "green"]
Seat = Literal["owner", "runner"]
SkeletonId = Annotated[str, Field(pattern=r"^sk_[A-Za-z0-9_-]{1,64}$")]


_CONTROLS = frozenset(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
_CONTROLS_BUT_NEWLINE = _CONTROLS - {"\n"}


def _no_control(text: str) -> str:
    if not _CONTROLS.isdisjoint(text):
        raise ValueError("holds a control character")
    return text


def _no_control_but_newline(text: str) -> str:
    if not _CONTROLS_BUT_NEWLINE.isdisjoint(text):
        raise ValueError("holds a control character")
    return text


BlockName = Annotated[
    str, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_no_control)
]
Purpose = Annotated[
    str, Field(max_length=MAX_PURPOSE_CHARS), AfterValidator(_no_control_but_newline)
]


class Block(Contract):
    """One system block: id, name, purpose, colour and the version of its boundary."""

    id: BlockId
    name: BlockName
    purpose: Purpose = ""
    color: Color = "grey"
    boundary_version: int = Field(default=1, ge=1, le=10**9)


class ImportedReceipt(Contract):
    """A receipt a person imported: the store version it made, its block, the candidate exactly
    as imported, the candidate's id, when, and the mission it came from (if named)."""

    store_version: int = Field(ge=1)
    block_id: BlockId
    candidate: CandidateJson
    candidate_id: Sha256Ref
    imported_at: Instant
    mission_id: MissionId | None = None


class Ratification(Contract):
    """A person accepted the store at ``store_version``."""

    store_version: int = Field(ge=1)
    ratified_at: Instant
    via: HumanUi


class SkeletonStore(Contract):
    """``.voicebox/skeleton.json`` (shape in the module docstring)."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["voicebox-skeleton-v1"] = Field(default=STORE_SCHEMA, alias="schema")
    skeleton_id: SkeletonId
    store_version: int = Field(ge=1)
    blocks: list[Block] = Field(default_factory=list, max_length=MAX_BLOCKS)
    ratified: Ratification | None = None
    receipts: list[ImportedReceipt] = Field(default_factory=list)

    @model_validator(mode="after")
    def _coherent(self) -> SkeletonStore:
        """Block ids are unique; no receipt or ratification names a future version."""
        if len({b.id for b in self.blocks}) != len(self.blocks):
            raise ValueError("two blocks share an id")
        if any(r.store_version > self.store_version for r in self.receipts):
            raise ValueError("a receipt names a store version the store has not reached")
        if self.ratified is not None and self.ratified.store_version > self.store_version:
            raise ValueError("the ratification names a store version the store has not reached")
        return self

    def block(self, block_id: str) -> Block | None:
        """The block with ``block_id``, or ``None``."""
        return next((b for b in self.blocks if b.id == block_id), None)

    def is_anchor(self, ref: str) -> bool:
        """True when ``ref`` is a block of this store or the store's own skeleton id (§1g)."""
        return ref == self.skeleton_id or self.block(ref) is not None

    def receipt_at(self, store_version: int) -> ImportedReceipt | None:
        """The receipt whose import made ``store_version``, or ``None``."""
        return next((r for r in self.receipts if r.store_version == store_version), None)

    @property
    def ratified_current(self) -> bool:
        """True when the store's present version is the one a person ratified."""
        return self.ratified is not None and self.ratified.store_version == self.store_version


async def load_store(files: ProjectFiles) -> SkeletonStore | None:
    """The project's store, or ``None`` when it has none. Refuses ``storage-failed`` when the
    file exists but does not parse."""
    try:
        raw = await files.read(SKELETON_PATH)
    except Refused as exc:
        if exc.code == Code.FILE_NOT_FOUND:
            return None
        raise
    try:
        return SkeletonStore.model_validate_json(raw)
    except (ValidationError, ValueError):
        raise Refused(
            Code.STORAGE_FAILED,
            "The project's system-block store is unreadable; nothing was changed.",
        ) from None


def store_bytes(store: SkeletonStore) -> bytes:
    """The store's bytes on disk: canonical JSON (sorted keys, UTF-8) and a newline."""
    return canonical_json(store.model_dump(mode="json", by_alias=True)) + b"\n"


async def save_store(files: ProjectFiles, store: SkeletonStore) -> None:
    """Replace ``.voicebox/skeleton.json`` atomically with ``store``."""
    await files.write(SKELETON_PATH, store_bytes(store))


def check_store_version(
    store: SkeletonStore | None, expected: int | None, *, field: str = "if_store_version"
) -> None:
    """Refuse ``store-version-conflict`` (naming ``field``, showing the actual version) when
    ``expected`` is given and is not the store's version (0 names "no store yet")."""
    if expected is None:
        return
    actual = 0 if store is None else store.store_version
    if actual != expected:
        raise Refused(
            Code.STORE_VERSION_CONFLICT,
            f"The store is at version {actual}, not {expected}; look again and retry.",
            field=field,
            details={"store_version": actual},
            show_details=True,
        )


class AddBlock(Contract):
    """Add a block; the store gives it a fresh ``sb_`` id."""

    op: Literal["add"]
    name: str = Field(max_length=1000)
    purpose: str = Field(default="", max_length=10_000)


class RenameBlock(Contract):
    """Give a block a new name (its boundary is unchanged)."""

    op: Literal["rename"]
    block_id: str = Field(max_length=100)
    name: str = Field(max_length=1000)


class RepurposeBlock(Contract):
    """Give a block a new purpose; a different purpose bumps its ``boundary_version``."""

    op: Literal["repurpose"]
    block_id: str = Field(max_length=100)
    purpose: str = Field(max_length=10_000)


class RemoveBlock(Contract):
    """Remove a block (its receipts stay in the store's history)."""

    op: Literal["remove"]
    block_id: str = Field(max_length=100)


EditOp = Annotated[AddBlock | RenameBlock | RepurposeBlock | RemoveBlock, Field(discriminator="op")]


@dataclass(frozen=True, slots=True)
class EditOutcome:
    """A batch that passed: the new store (to be written once) and the ids of added blocks."""

    store: SkeletonStore
    added: list[str]


def _check_lengths(ops: Sequence[EditOp]) -> None:
    for i, op in enumerate(ops):
        if isinstance(op, AddBlock | RenameBlock) and len(op.name) > MAX_NAME_CHARS:
            _check_block_name(op.name, f"ops[{i}]")
        if isinstance(op, AddBlock | RepurposeBlock) and len(op.purpose) > MAX_PURPOSE_CHARS:
            raise Refused(
                Code.NAME_INVALID,
                f"ops[{i}].purpose: A purpose is at most {MAX_PURPOSE_CHARS} characters.",
                field=f"ops[{i}].purpose",
            )


def _sanitize_batch(ops: Sequence[EditOp]) -> None:
    for i, op in enumerate(ops):
        if isinstance(op, AddBlock | RenameBlock):
            check_runner_text(f"ops[{i}].name", op.name)
        if isinstance(op, AddBlock | RepurposeBlock):
            check_runner_text(f"ops[{i}].purpose", op.purpose)


def _check_block_name(name: str, where: str) -> None:
    """The one name rule of ``core.paths.check_name`` (no control or bidirectional control
    character, NFC, 1–200 characters) for a name a person or an agent gives a block; refuses
    ``name-invalid`` naming ``ops[i].name``. Names already in a store are read as they are."""
    try:
        check_name(name)
    except Refused as exc:
        raise Refused(
            Code.NAME_INVALID, f"{where}.name: {exc.message}", field=f"{where}.name"
        ) from None


def _checked_block(fields: dict[str, Any], where: str) -> Block:
    try:
        return Block.model_validate(fields)
    except ValidationError as exc:
        names = known_names(Block)
        raise invalid_input(exc, names, code=Code.NAME_INVALID, under=where, first=True) from None


def apply_candidate_edit(
    store: SkeletonStore | None,
    ops: Sequence[EditOp],
    *,
    seat: Seat,
    new_block_id: Callable[[], str],
    new_skeleton_id: Callable[[], str],
) -> EditOutcome:
    """Apply the batch ``ops`` to a copy of ``store`` (``None`` creates the store).

    All or nothing: raises :class:`~core.refusals.Refused` on the first bad op and the caller
    writes nothing — ``sanitizer_refused`` (runner seat; ``"ops[i].name: path separator"``),
    ``unknown_block`` (``ops[i].block_id``), ``name-invalid`` (``ops[i].name`` fails the one
    name rule of ``core.paths.check_name``: empty, too long, control or bidirectional control
    characters, not NFC; a name over :data:`MAX_NAME_CHARS` or a purpose over
    :data:`MAX_PURPOSE_CHARS` characters is refused so before the sanitizer runs),
    ``args-invalid`` (more than 10,000 blocks). The result has ``store_version`` one higher
    (1 for a new store).
    """
    _check_lengths(ops)
    if seat == "runner":
        _sanitize_batch(ops)
    blocks: dict[str, Block] = {} if store is None else {b.id: b for b in store.blocks}
    added: list[str] = []
    for i, op in enumerate(ops):
        where = f"ops[{i}]"
        if isinstance(op, AddBlock | RenameBlock):
            _check_block_name(op.name, where)
        if isinstance(op, AddBlock):
            block_id = new_block_id()
            blocks[block_id] = _checked_block(
                {"id": block_id, "name": op.name, "purpose": op.purpose}, where
            )
            added.append(block_id)
            continue
        current = blocks.get(op.block_id)
        if current is None:
            raise Refused(
                Code.UNKNOWN_BLOCK,
                f"{where}.block_id names no block of this store.",
                field=f"{where}.block_id",
            )
        if isinstance(op, RemoveBlock):
            del blocks[op.block_id]
            continue
        fields = current.model_dump()
        if isinstance(op, RenameBlock):
            fields["name"] = op.name
        elif op.purpose != current.purpose:
            fields["purpose"] = op.purpose
            fields["boundary_version"] = current.boundary_version + 1
        blocks[op.block_id] = _checked_block(fields, where)
    if len(blocks) > MAX_BLOCKS:
        raise Refused(Code.ARGS_INVALID, f"A store holds at most {MAX_BLOCKS} blocks.")
    if store is None:
        new = SkeletonStore(
            skeleton_id=new_skeleton_id(), store_version=1, blocks=list(blocks.values())
        )
    else:
        new = store.model_copy(
            update={"store_version": store.store_version + 1, "blocks": list(blocks.values())}
        )
        new = SkeletonStore.model_validate(new.model_dump(by_alias=True))
    return EditOutcome(new, added)


def ratify(store: SkeletonStore | None, *, store_version: int, at: str) -> SkeletonStore:
    """Record that a person ratified ``store`` at ``store_version`` (the version they saw).

    Refuses ``file-not-found`` when there is no store and ``store-version-conflict`` when the
    store has moved on. The human gate is the caller's
    (:func:`core.gestures.require_human_gesture`).
    """
    if store is None:
        raise Refused(Code.FILE_NOT_FOUND, "This project has no system-block store to ratify.")
    check_store_version(store, store_version, field="store_version")
    return store.model_copy(
        update={"ratified": Ratification(store_version=store_version, ratified_at=at, via=HUMAN_UI)}
    )
