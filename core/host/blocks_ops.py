"""The system-block store and receipt import (seed 004 §5, §6, §8; SPEC §9).

==========================  =====  ======  =========================================
operation                   write  human   what it does
==========================  =====  ======  =========================================
``blocks.get``              no     no      the system-block store (or none)
``blocks.candidate_edit``   yes    [1]_    a batch of block edits, all or nothing
``blocks.ratify``           yes    yes     a person accepts the store at a version
``receipt.import``          yes    yes     a person imports a receipt candidate
==========================  =====  ======  =========================================

.. [1] only the ``owner`` seat (:func:`owner_seat`); the ``runner`` seat is sanitized instead.

**The human gate** is the pipeline's (:data:`core.host.registry.OPERATIONS` declares it;
:func:`core.gestures.require_human_gesture` checks it): the call's origin comes only from the
envelope of a message the page itself sent, so a peer, a plugin or the tool sandbox reaching
these operations carries none, and a gesture token they put in an argument (``ratified_via``,
``imported_via``) is refused ``human_gesture_required`` before anything is read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from core.custody.held_secrets import HELD_IN_BLOCK, refuse_held_in_text
from core.host.operations import Call, Outcome
from core.missions.blocks import (
    EditOp,
    SkeletonStore,
    apply_candidate_edit,
    check_store_version,
    load_store,
    ratify,
    save_store,
)
from core.missions.letters import CandidateJson, MissionId
from core.missions.receipt_import import import_receipt
from core.model import Contract, JsonOf
from core.time import instant_iso
from core.vocabulary import ProjectId

__all__ = [
    "BlocksAnswer",
    "EditAnswer",
    "EditArgs",
    "ImportAnswer",
    "ImportArgs",
    "ProjectArgs",
    "RatifyAnswer",
    "RatifyArgs",
    "blocks_candidate_edit",
    "blocks_get",
    "blocks_ratify",
    "owner_seat",
    "receipt_import",
]


class ProjectArgs(Contract):
    """Arguments naming one project."""

    project: ProjectId


class BlocksAnswer(Contract):
    """The project's system-block store (``null`` when it has none) and whether its present
    version is the ratified one."""

    store: Annotated[dict[str, Any], JsonOf(SkeletonStore)] | None
    ratified_current: bool


async def blocks_get(call: Call[ProjectArgs]) -> Outcome:
    """Refuses ``project-not-found``, ``storage-failed`` (an unreadable store)."""
    opened = await call.ctx.catalog.open(call.args.project)
    store = await load_store(opened.files)
    return Outcome(
        BlocksAnswer(
            store=None if store is None else store.model_dump(mode="json", by_alias=True),
            ratified_current=store is not None and store.ratified_current,
        ),
        project=call.args.project,
    )


class EditArgs(Contract):
    """``blocks.candidate_edit``: a batch of 1–200 ops, the seat, and optionally the store
    version the batch was written against. The seat defaults to ``owner`` for a person's gesture
    and ``runner`` otherwise; ``owner`` is only ever a person's gesture (:func:`owner_seat`)."""

    project: ProjectId
    ops: list[EditOp] = Field(min_length=1, max_length=200)
    seat: Literal["owner", "runner"] | None = None
    if_store_version: int | None = Field(default=None, ge=0)


def owner_seat(args: EditArgs) -> bool:
    """True for an edit that names the owner seat: a person's gesture only (seed 004 §8)."""
    return args.seat == "owner"


class EditAnswer(Contract):
    """The store after the batch: its skeleton id, version, and the ids of added blocks."""

    skeleton_id: str
    store_version: int
    added: list[str]


def _new_id(call: Call[EditArgs], prefix: str) -> str:
    return prefix + call.ctx.random.token_bytes(6).hex()


async def blocks_candidate_edit(call: Call[EditArgs]) -> Outcome:
    """Refuses ``store-version-conflict``, ``sanitizer_refused`` (runner seat, naming field and
    class; any seat, a name or purpose holding a secret this host keeps), ``unknown_block``,
    ``name-invalid``; nothing is written on refusal. Without a seat a person's gesture edits
    from the owner seat and anyone else from the runner seat."""
    args = call.args
    seat = args.seat or ("owner" if call.human else "runner")
    # a held secret in a block would ride in every packet drafted for it — and each draft's
    # refusal would point at the note, where the person cannot find it
    texts = {
        f"ops[{i}].{field}": getattr(op, field, None)
        for i, op in enumerate(args.ops)
        for field in ("name", "purpose")
    }
    await refuse_held_in_text(call.ctx.secrets, call.ctx.state, texts, HELD_IN_BLOCK)
    opened = await call.ctx.catalog.open(args.project)
    store = await load_store(opened.files)
    check_store_version(store, args.if_store_version)
    outcome = apply_candidate_edit(
        store,
        args.ops,
        seat=seat,
        new_block_id=lambda: _new_id(call, "sb_"),
        new_skeleton_id=lambda: _new_id(call, "sk_"),
    )
    await save_store(opened.files, outcome.store)
    return Outcome(
        EditAnswer(
            skeleton_id=outcome.store.skeleton_id,
            store_version=outcome.store.store_version,
            added=outcome.added,
        ),
        project=args.project,
        details={"seat": seat, "ops": len(args.ops), "store_version": outcome.store.store_version},
    )


class RatifyArgs(Contract):
    """``blocks.ratify``: the store version the person saw, and ``ratified_via`` naming the
    gesture token."""

    project: ProjectId
    store_version: int = Field(ge=1)
    ratified_via: str | None = Field(default=None, max_length=64)


class RatifyAnswer(Contract):
    """The ratified version and when."""

    store_version: int
    ratified_at: str


async def blocks_ratify(call: Call[RatifyArgs]) -> Outcome:
    """Refuses ``file-not-found`` (no store), ``store-version-conflict``."""
    args = call.args
    opened = await call.ctx.catalog.open(args.project)
    store = ratify(
        await load_store(opened.files),
        store_version=args.store_version,
        at=instant_iso(call.ctx.clock.now_ms()),
    )
    await save_store(opened.files, store)
    assert store.ratified is not None
    return Outcome(
        RatifyAnswer(
            store_version=store.ratified.store_version, ratified_at=store.ratified.ratified_at
        ),
        project=args.project,
        details={"store_version": args.store_version},
    )


class ImportArgs(Contract):
    """``receipt.import``: the candidate exactly as the ``merge_wait`` letter carries it, the
    mission it came from (optional), the store version the person saw (optional), and
    ``imported_via`` naming the gesture token."""

    project: ProjectId
    candidate: CandidateJson
    mission_id: MissionId | None = None
    if_store_version: int | None = Field(default=None, ge=0)
    imported_via: str | None = Field(default=None, max_length=64)


class ImportAnswer(Contract):
    """The store version the import made (the one a ``landed`` letter names), the block and its
    colour before and after, the candidate's id, and whether it was already imported."""

    store_version: int
    block_id: str
    color_before: str
    color_after: str
    candidate_id: str
    imported_at: str
    duplicate: bool


async def receipt_import(call: Call[ImportArgs]) -> Outcome:
    """Refuses ``args-invalid``, ``receipt-window-invalid``, ``unknown_block``,
    ``store-version-conflict``, ``receipt-scope-invalid``; nothing is written on refusal or on a
    duplicate."""
    args = call.args
    opened = await call.ctx.catalog.open(args.project)
    outcome = import_receipt(
        await load_store(opened.files),
        args.candidate,
        now_ms=call.ctx.clock.now_ms(),
        mission_id=args.mission_id,
        if_store_version=args.if_store_version,
    )
    if not outcome.duplicate:
        await save_store(opened.files, outcome.store)
    receipt = outcome.receipt
    return Outcome(
        ImportAnswer(
            store_version=receipt.store_version,
            block_id=receipt.block_id,
            color_before=outcome.color_before,
            color_after=outcome.color_after,
            candidate_id=receipt.candidate_id,
            imported_at=receipt.imported_at,
            duplicate=outcome.duplicate,
        ),
        project=args.project,
        details={
            "store_version": receipt.store_version,
            "block_id": receipt.block_id,
            "mission_id": receipt.mission_id,
            "color": outcome.color_after,
            "duplicate": outcome.duplicate,
        },
    )
