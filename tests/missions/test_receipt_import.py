"""``receipt.import`` through the host: the human gesture, the window, the scope, byte-for-byte
preservation, the store version and the colour (seed 004 §1c, §1d, §5c, §8;
:mod:`core.missions.receipt_import`)."""

from __future__ import annotations

import json

import pytest

from core.missions.letters import candidate_id
from core.model import canonical_json
from tests.missions.kit import HUMAN, M1, Kit, candidate, sha256_hex


def import_refused(kit: Kit, origin: str | None = None, **args) -> dict:
    """Import expecting a refusal; assert ``skeleton.json`` did not change by one byte."""
    before = kit.store_bytes()
    refusal = kit.refused("receipt.import", origin, **args)
    assert kit.store_bytes() == before
    return refusal


@pytest.mark.parametrize(
    ("imported_via", "origin", "field"),
    [
        (None, None, "imported_via"),
        ("runnerd", None, "imported_via"),
        (None, HUMAN, "imported_via"),
        ("human-ui", None, "origin"),
    ],
)
def test_receipt_import_is_a_human_gesture(imported_via, origin, field):
    kit = Kit()
    args = {"candidate": candidate(kit.block)}
    if imported_via is not None:
        args["imported_via"] = imported_via
    refusal = import_refused(kit, origin, **args)
    assert refusal["code"] == "human_gesture_required"
    assert refusal["field"] == field


def test_receipt_import_preserves_the_candidate_byte_for_byte():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    from_letter = kit.heads()[M1]["letter"]["receipt_candidate"]
    answer = kit.human("receipt.import", candidate=from_letter, imported_via=HUMAN, mission_id=M1)
    stored = json.loads(kit.store_bytes())["receipts"][-1]
    assert canonical_json(stored["candidate"]) == canonical_json(from_letter)
    expected_id = "sha256:" + sha256_hex(canonical_json(from_letter))
    assert answer["candidate_id"] == stored["candidate_id"] == expected_id
    assert candidate_id(from_letter) == expected_id
    assert stored["mission_id"] == M1


def test_receipt_import_keeps_the_candidate_as_given_not_as_the_model_would_write_it():
    kit = Kit()
    cand = candidate(kit.block)
    del cand["evidence"]["evidence_refs"]  # a default the model would fill in
    kit.human("receipt.import", candidate=cand, imported_via=HUMAN)
    stored = json.loads(kit.store_bytes())["receipts"][-1]["candidate"]
    assert "evidence_refs" not in stored["evidence"]
    assert canonical_json(stored) == canonical_json(cand)


def test_receipt_import_bumps_the_store_version_and_may_change_the_colour():
    kit = Kit()
    assert kit.store()["blocks"][0]["color"] == "grey"
    answer = kit.human("receipt.import", candidate=candidate(kit.block), imported_via=HUMAN)
    assert answer["store_version"] == 2
    assert (answer["color_before"], answer["color_after"]) == ("grey", "green")
    store = kit.store()
    assert store["store_version"] == 2
    assert store["blocks"][0]["color"] == "green"
    second = candidate(kit.block, finished_at="2025-12-31T23:45:00Z")
    again = kit.human("receipt.import", candidate=second, imported_via=HUMAN)
    assert again["store_version"] == 3
    assert (again["color_before"], again["color_after"]) == ("green", "green")


def test_the_same_candidate_imported_twice_changes_nothing_the_second_time():
    kit = Kit()
    cand = candidate(kit.block)
    first = kit.human("receipt.import", candidate=cand, imported_via=HUMAN)
    before = kit.store_bytes()
    second = kit.human("receipt.import", candidate=cand, imported_via=HUMAN)
    assert kit.store_bytes() == before
    assert second["duplicate"] is True
    assert second["store_version"] == first["store_version"] == 2


@pytest.mark.parametrize(
    ("started_at", "finished_at"),
    [
        ("2025-12-31T23:30:00Z", "2025-12-31T23:00:00Z"),  # reversed
        ("2025-12-31T23:00:00Z", "2025-12-31T23:00:00Z"),  # equal
        ("2025-12-31T23:00:00Z", "2026-01-01T00:00:01Z"),  # ends in the future
        ("2025-12-30T23:00:00Z", "2025-12-31T23:30:00Z"),  # 24 h 30 min
    ],
)
def test_receipt_window_invalid(started_at, finished_at):
    kit = Kit()
    cand = candidate(kit.block, started_at=started_at, finished_at=finished_at)
    refusal = import_refused(kit, HUMAN, candidate=cand, imported_via=HUMAN)
    assert refusal["code"] == "receipt-window-invalid"
    assert refusal["field"].startswith("candidate.evidence.window.")
    assert kit.store()["blocks"][0]["color"] == "grey"


def test_a_candidate_without_a_window_is_refused():
    kit = Kit()
    cand = candidate(kit.block)
    del cand["evidence"]["window"]
    refusal = import_refused(kit, HUMAN, candidate=cand, imported_via=HUMAN)
    assert refusal["code"] == "receipt-window-invalid"
    assert refusal["field"] == "candidate.evidence.window"


def test_a_receipt_proved_at_an_old_boundary_does_not_import():
    kit = Kit()
    kit.human(
        "blocks.candidate_edit",
        ops=[{"op": "repurpose", "block_id": kit.block, "purpose": "A wider boundary."}],
    )
    refusal = import_refused(kit, HUMAN, candidate=candidate(kit.block), imported_via=HUMAN)
    assert refusal["code"] == "receipt-scope-invalid"
    assert refusal["details"] == {"block_boundary_version": 2}
    fresh = candidate(kit.block, boundary=2)
    assert kit.human("receipt.import", candidate=fresh, imported_via=HUMAN)["store_version"] == 3


def test_a_candidate_for_an_unknown_block_is_refused():
    kit = Kit()
    refusal = import_refused(kit, HUMAN, candidate=candidate("sb_missing"), imported_via=HUMAN)
    assert refusal["code"] == "unknown_block"
    assert refusal["field"] == "candidate.block_id"


def test_a_malformed_candidate_is_args_invalid():
    kit = Kit()
    cand = candidate(kit.block)
    cand["scope"]["boundary_version"] = "1"
    refusal = import_refused(kit, HUMAN, candidate=cand, imported_via=HUMAN)
    assert refusal["code"] == "args-invalid"
    assert refusal["field"] == "candidate.scope.boundary_version"


def test_import_checks_the_version_the_person_saw():
    kit = Kit()
    refusal = import_refused(
        kit, HUMAN, candidate=candidate(kit.block), imported_via=HUMAN, if_store_version=7
    )
    assert refusal["code"] == "store-version-conflict"
