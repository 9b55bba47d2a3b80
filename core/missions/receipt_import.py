"""Receipt import: the one way a block changes colour (seed 004 §1c, §1d, §5c; SPEC §9).

A mission whose gate went green posts a ``merge_wait`` letter with a complete
``receipt_candidate``. A person imports that candidate from the tray (a gesture: the human gate
of :mod:`core.gestures` is checked by the caller). :func:`import_receipt` decides the import on
a store value and hands back the new store; the caller writes it once.

Checks, in order (each refusal names the field):

1. the candidate matches :class:`core.missions.letters.ReceiptCandidate` — ``args-invalid``;
2. it carries its execution window, and the window is acceptable at host time
   (:mod:`core.missions.receipt_window`) — ``receipt-window-invalid``;
3. the project has a store and the block exists in it — ``unknown_block``;
4. a candidate already imported (same candidate id) is answered again, unchanged — the import
   is idempotent, so a double click cannot bump the version twice;
5. ``if_store_version``, when given, is the store's version — ``store-version-conflict``;
6. the scope matches the block now: ``scope.boundary_version`` is the block's
   ``boundary_version`` and ``scope.contract_version`` is
   :data:`core.missions.blocks.CONTRACT_VERSION` — else ``receipt-scope-invalid`` ("proved at
   boundary v1 — the block is at v3").

On success ``store_version`` goes up by one, the block's colour becomes ``green`` (it may already
be), and the store records :class:`~core.missions.blocks.ImportedReceipt` with the candidate
**exactly as given** — the same JSON object, never re-serialised through the model, so its canonical
bytes (and :func:`core.missions.letters.candidate_id`) equal those of the letter it came from. Only
after this may a ``landed`` letter naming that ``store_version`` be posted
(:mod:`core.missions.posting`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from core.missions.blocks import (
    CONTRACT_VERSION,
    ImportedReceipt,
    SkeletonStore,
    check_store_version,
)
from core.missions.letters import ReceiptCandidate, candidate_id
from core.missions.receipt_window import check_window
from core.refusals import Code, Refused, invalid_input
from core.secret import known_names
from core.time import instant_iso

__all__ = ["ImportOutcome", "import_receipt"]


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """The store after the import, the receipt record, whether it was already imported, and
    the block's colour before and after."""

    store: SkeletonStore
    receipt: ImportedReceipt
    duplicate: bool
    color_before: str
    color_after: str


def _parse_candidate(raw: dict[str, Any]) -> ReceiptCandidate:
    try:
        return ReceiptCandidate.model_validate(raw)
    except ValidationError as exc:
        names = known_names(ReceiptCandidate)
        raise invalid_input(
            exc, names, code=Code.ARGS_INVALID, under="candidate", first=True
        ) from None


def import_receipt(
    store: SkeletonStore | None,
    candidate: dict[str, Any],
    *,
    now_ms: int,
    mission_id: str | None = None,
    if_store_version: int | None = None,
) -> ImportOutcome:
    """Decide the import of ``candidate`` into ``store`` at host time ``now_ms`` (ms).

    Refuses ``args-invalid``, ``receipt-window-invalid``, ``unknown_block``,
    ``store-version-conflict``, ``receipt-scope-invalid`` (order in the module docstring).
    ``duplicate`` is true when this exact candidate was imported before (``store`` unchanged).
    """
    parsed = _parse_candidate(candidate)
    window = parsed.evidence.window
    if window is None:
        raise Refused(
            Code.RECEIPT_WINDOW_INVALID,
            "The candidate carries no execution window.",
            field="candidate.evidence.window",
        )
    try:
        check_window(window, now_ms=now_ms)
    except Refused as exc:
        exc.field = f"candidate.evidence.window.{exc.field}"
        raise
    block = None if store is None else store.block(parsed.block_id)
    if store is None or block is None:
        raise Refused(
            Code.UNKNOWN_BLOCK,
            "The candidate names a block this project's store does not have.",
            field="candidate.block_id",
        )
    cid = candidate_id(candidate)
    earlier = next((r for r in store.receipts if r.candidate_id == cid), None)
    if earlier is not None:
        return ImportOutcome(store, earlier, True, block.color, block.color)
    check_store_version(store, if_store_version)
    if (
        parsed.scope.boundary_version != block.boundary_version
        or parsed.scope.contract_version != CONTRACT_VERSION
    ):
        raise Refused(
            Code.RECEIPT_SCOPE_INVALID,
            f"Proved at boundary v{parsed.scope.boundary_version} (contract "
            f"v{parsed.scope.contract_version}); the block is at boundary "
            f"v{block.boundary_version} (contract v{CONTRACT_VERSION}).",
            field="candidate.scope",
            details={"block_boundary_version": block.boundary_version},
            show_details=True,
        )
    version = store.store_version + 1
    receipt = ImportedReceipt(
        store_version=version,
        block_id=block.id,
        candidate=candidate,
        candidate_id=cid,
        imported_at=instant_iso(now_ms),
        mission_id=mission_id,
    )
    blocks = [
        b.model_copy(update={"color": "green"}) if b.id == block.id else b for b in store.blocks
    ]
    new = store.model_copy(
        update={
            "store_version": version,
            "blocks": blocks,
            "receipts": [*store.receipts, receipt],
        }
    )
    return ImportOutcome(new, receipt, False, block.color, "green")
