"""The system-block store through the host: ratify, candidate_edit, seats and the sanitizer
(seed 004 §1c, §8; :mod:`core.missions.blocks`)."""

from __future__ import annotations

import json

import pytest

from tests.missions.kit import HUMAN, Kit
from tests.support import run


def store_unchanged_refusal(kit: Kit, op: str, origin: str | None = None, **args) -> dict:
    """Call ``op`` expecting a refusal; assert ``skeleton.json`` did not change by one byte."""
    before = kit.store_bytes()
    refusal = kit.refused(op, origin, **args)
    assert kit.store_bytes() == before
    return refusal


# --- ratify ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratified_via", "origin", "field"),
    [
        (None, None, "ratified_via"),
        ("", None, "ratified_via"),
        ("agent", None, "ratified_via"),
        (None, HUMAN, "ratified_via"),
        ("human-ui", None, "origin"),
    ],
)
def test_ratify_without_human_origin_refused(ratified_via, origin, field):
    kit = Kit()
    args = {"store_version": 1}
    if ratified_via is not None:
        args["ratified_via"] = ratified_via
    refusal = store_unchanged_refusal(kit, "blocks.ratify", origin, **args)
    assert refusal["code"] == "human_gesture_required"
    assert refusal["field"] == field
    assert kit.store()["ratified"] is None


def test_ratify_by_a_person_records_the_version_they_saw():
    kit = Kit()
    answer = kit.human("blocks.ratify", store_version=1, ratified_via=HUMAN)
    assert answer["store_version"] == 1
    got = kit.ok("blocks.get")
    assert got["store"]["ratified"]["store_version"] == 1
    assert got["store"]["ratified"]["via"] == HUMAN
    assert got["store"]["store_version"] == 1
    assert got["ratified_current"] is True
    kit.human("blocks.candidate_edit", ops=[{"op": "rename", "block_id": kit.block, "name": "X"}])
    assert kit.ok("blocks.get")["ratified_current"] is False


def test_ratify_names_the_present_version_or_conflicts():
    kit = Kit()
    kit.human("blocks.candidate_edit", ops=[{"op": "add", "name": "Second"}])
    refusal = store_unchanged_refusal(
        kit, "blocks.ratify", HUMAN, store_version=1, ratified_via=HUMAN
    )
    assert refusal["code"] == "store-version-conflict"
    assert refusal["details"] == {"store_version": 2}


def test_ratify_without_a_store_is_refused():
    kit = Kit(store=False)
    refusal = kit.refused("blocks.ratify", HUMAN, store_version=1, ratified_via=HUMAN)
    assert refusal["code"] == "file-not-found"


def test_ratify_is_audited_as_the_persons_act():
    kit = Kit()
    answer = kit.call("blocks.ratify", HUMAN, store_version=1, ratified_via=HUMAN)
    (rec,) = [r for r in run(kit.h.ctx.audit.page(limit=10)) if r["seq"] == answer["logged"]]
    assert rec["actor"] == HUMAN
    assert rec["op"] == "blocks.ratify"
    assert rec["details"]["store_version"] == 1


# --- candidate_edit: seats and the sanitizer -------------------------------------------------

HOSTILE = [
    ("name", "importer/../../etc", "path separator"),
    ("name", "see https://evil.example", "URL"),
    ("name", "Receipt\nimporter", "control character"),
    ("purpose", "stores vbx_9f8e7d6c5b4a3f2e1d0c", "token-like string"),
]


def batch(kit: Kit, field: str, hostile: str) -> list[dict]:
    """A clean op, then a rename (or repurpose) of the existing block carrying ``hostile``."""
    first = {"op": "add", "name": "Audit trail", "purpose": "Keeps the record."}
    if field == "name":
        second = {"op": "rename", "block_id": kit.block, "name": hostile}
    else:
        second = {"op": "repurpose", "block_id": kit.block, "purpose": hostile}
    return [first, second]


@pytest.mark.parametrize(("field", "hostile", "hazard"), HOSTILE)
def test_runner_hostile_rename_refused_naming_field(field, hostile, hazard):
    kit = Kit()
    refusal = store_unchanged_refusal(
        kit, "blocks.candidate_edit", seat="runner", ops=batch(kit, field, hostile)
    )
    assert refusal["code"] == "sanitizer_refused"
    assert refusal["field"] == f"ops[1].{field}"
    assert refusal["message"] == f"ops[1].{field}: {hazard}"
    # the whole batch was refused: the clean first op did not apply either
    store = kit.store()
    assert [b["name"] for b in store["blocks"]] == ["Receipt importer"]
    assert store["store_version"] == 1


def test_runner_seat_is_the_default_without_a_gesture():
    kit = Kit()
    refusal = store_unchanged_refusal(
        kit, "blocks.candidate_edit", ops=[{"op": "add", "name": "a/b"}]
    )
    assert refusal["code"] == "sanitizer_refused"


@pytest.mark.parametrize(("field", "hostile"), [(f, h) for f, h, _ in HOSTILE if "\n" not in h])
def test_same_batch_as_owner_applies(field, hostile):
    kit = Kit()
    answer = kit.human("blocks.candidate_edit", ops=batch(kit, field, hostile))
    assert answer["store_version"] == 2
    renamed = next(b for b in kit.store()["blocks"] if b["id"] == kit.block)
    assert renamed[field] == hostile
    assert [b["name"] for b in kit.store()["blocks"]].count("Audit trail") == 1


def test_owner_text_is_stored_verbatim_including_a_slash():
    kit = Kit()
    kit.human(
        "blocks.candidate_edit",
        ops=[{"op": "rename", "block_id": kit.block, "name": "Import/export"}],
    )
    stored = json.loads(kit.store_bytes())
    assert stored["blocks"][0]["name"] == "Import/export"


def test_legitimate_runner_rename_passes_unchanged():
    kit = Kit()
    name = "Receipt importer — v2 (Ünïcode ok)"
    purpose = "Imports receipts a person confirms, one block at a time."
    answer = kit.ok(
        "blocks.candidate_edit",
        seat="runner",
        ops=[
            {"op": "rename", "block_id": kit.block, "name": name},
            {"op": "repurpose", "block_id": kit.block, "purpose": purpose},
        ],
    )
    assert answer["store_version"] == 2
    block = json.loads(kit.store_bytes())["blocks"][0]
    assert block["name"].encode("utf-8") == name.encode("utf-8")
    assert block["purpose"].encode("utf-8") == purpose.encode("utf-8")


def test_owner_seat_requires_a_persons_gesture():
    kit = Kit()
    refusal = store_unchanged_refusal(
        kit, "blocks.candidate_edit", seat="owner", ops=[{"op": "add", "name": "a/b"}]
    )
    assert refusal["code"] == "human_gesture_required"
    assert refusal["field"] == "seat"


def test_a_person_may_choose_the_runner_seat_and_is_then_sanitized():
    kit = Kit()
    refusal = store_unchanged_refusal(
        kit, "blocks.candidate_edit", HUMAN, seat="runner", ops=[{"op": "add", "name": "a/b"}]
    )
    assert refusal["code"] == "sanitizer_refused"


# --- candidate_edit: the store ---------------------------------------------------------------


def test_an_edit_cannot_colour_a_block():
    kit = Kit()
    ops = [{"op": "rename", "block_id": kit.block, "name": "X", "color": "green"}]
    refusal = store_unchanged_refusal(kit, "blocks.candidate_edit", HUMAN, ops=ops)
    assert refusal["code"] == "message-malformed"
    assert kit.store()["blocks"][0]["color"] == "grey"


def test_repurpose_moves_the_boundary_and_rename_does_not():
    kit = Kit()
    kit.human("blocks.candidate_edit", ops=[{"op": "rename", "block_id": kit.block, "name": "N"}])
    assert kit.store()["blocks"][0]["boundary_version"] == 1
    kit.human(
        "blocks.candidate_edit",
        ops=[{"op": "repurpose", "block_id": kit.block, "purpose": "Imports and audits."}],
    )
    assert kit.store()["blocks"][0]["boundary_version"] == 2
    assert kit.store()["store_version"] == 3


def test_a_batch_naming_an_unknown_block_applies_nothing():
    kit = Kit()
    ops = [
        {"op": "add", "name": "Fresh"},
        {"op": "rename", "block_id": "sb_missing", "name": "Y"},
    ]
    refusal = store_unchanged_refusal(kit, "blocks.candidate_edit", HUMAN, ops=ops)
    assert refusal["code"] == "unknown_block"
    assert refusal["field"] == "ops[1].block_id"
    assert len(kit.store()["blocks"]) == 1


def test_candidate_edit_checks_the_version_it_was_written_against():
    kit = Kit()
    ops = [{"op": "add", "name": "Second"}]
    refusal = store_unchanged_refusal(
        kit, "blocks.candidate_edit", HUMAN, ops=ops, if_store_version=0
    )
    assert refusal["code"] == "store-version-conflict"
    assert kit.human("blocks.candidate_edit", ops=ops, if_store_version=1)["store_version"] == 2


def test_the_first_edit_creates_the_store_with_a_skeleton_id():
    kit = Kit(store=False)
    answer = kit.human("blocks.candidate_edit", ops=[{"op": "add", "name": "First"}])
    store = kit.store()
    assert store["skeleton_id"] == answer["skeleton_id"]
    assert store["skeleton_id"].startswith("sk_")
    assert store["store_version"] == 1
    assert [b["id"] for b in store["blocks"]] == answer["added"]
    assert store["blocks"][0]["color"] == "grey"


def test_an_unreadable_store_refuses_rather_than_guesses():
    kit = Kit()
    kit.files.tree[".voicebox"]["skeleton.json"] = b"{not json"
    refusal = kit.refused("mission.post", agent_id="hand-1", letter=kit.letter())
    assert refusal["code"] == "storage-failed"


@pytest.mark.parametrize("op", ["add", "rename"])
@pytest.mark.parametrize("name", ["x\u202eevil", "a\u2066b", "e\u0301", "   "])
def test_a_block_name_follows_the_one_name_rule(op, name):
    """A block name is shown in lists and options where it cannot be isolated: a
    bidirectional control would reverse the page's own text after it (core/paths.py rule)."""
    kit = Kit()
    edit = (
        {"op": "add", "name": name}
        if op == "add"
        else {"op": op, "block_id": kit.block, "name": name}
    )
    refusal = store_unchanged_refusal(kit, "blocks.candidate_edit", HUMAN, ops=[edit])
    assert (refusal["code"], refusal["field"]) == ("name-invalid", "ops[0].name")


@pytest.mark.parametrize(
    ("op", "field", "size"),
    [("add", "purpose", 2001), ("repurpose", "purpose", 10_000), ("rename", "name", 201)],
)
def test_length_caps_are_checked_before_the_sanitizer_reads_any_text(op, field, size):
    """Issue 13: the sanitizer ran over every 10,000-character purpose of a 1 MB batch before
    the store's 2,000-character cap refused it. The caps come first, for every op of the
    batch: the over-long op is named even though an earlier op holds a hazard."""
    kit = Kit()
    hazard = {"op": "add", "name": "see https://evil.example"}
    long_op = {"op": op, field: "a" * size}
    long_op.update({"name": "Plain"} if op == "add" else {"block_id": kit.block})
    refusal = store_unchanged_refusal(
        kit, "blocks.candidate_edit", seat="runner", ops=[hazard, long_op]
    )
    assert (refusal["code"], refusal["field"]) == ("name-invalid", f"ops[1].{field}")
