"""The mission letter on its own: shape, roles, phases, per-phase gating, paths, content id
(seed 004 §1a–§1f, §1h(a); :mod:`core.missions.letters`)."""

from __future__ import annotations

import hashlib
import json

import pytest

from core.missions.letters import PHASES, letter_id, parse_letter, sha12
from core.refusals import Code, Refused
from tests.missions.kit import SHA_A, candidate, letter


def refusal(body: dict) -> Refused:
    with pytest.raises(Refused) as caught:
        parse_letter(body)
    return caught.value


SEED_FIELDS = {
    "schema",
    "mission_id",
    "mission_seq",
    "prev_letter_id",
    "block_id",
    "brain_ref",
    "seat",
    "runner_id",
    "capability",
    "phase",
    "verdict",
    "gate",
    "receipt_candidate",
    "receipt",
    "packet_ref",
    "synthetic",
    "tokens_total",
    "started_at",
    "updated_at",
}


def test_a_letter_carries_every_field_of_the_seed_shape_and_no_other():
    assert set(parse_letter(letter()).wire()) == SEED_FIELDS


def test_the_eight_phases_and_no_other():
    assert PHASES == (
        "judging",
        "executing",
        "gate",
        "review",
        "merge_wait",
        "landed",
        "failed",
        "archived",
    )
    assert refusal(letter(phase="shelved")).field == "letter.phase"


@pytest.mark.parametrize(
    ("field", "value"),
    [("seat", "claude"), ("seat", "gpt"), ("capability", "openai-runner")],
)
def test_seat_and_capability_name_roles_never_vendors(field, value):
    assert refusal(letter(**{field: value})).field == f"letter.{field}"


@pytest.mark.parametrize("extra", ["model", "vendor", "voice", "worktree", "brain_root"])
def test_no_field_can_carry_a_vendor_or_host_detail(extra):
    refused = refusal(letter(**{extra: "anything"}))
    assert refused.code == Code.LETTER_INVALID
    # refused by the closed schema; the caller's key is never repeated (issue 13)
    assert refused.field == "letter" and extra not in refused.message


def test_executing_has_no_verdict():
    body = letter(phase="executing", verdict={"decision": "APPROVE", "gist": "looks right"})
    assert refusal(body).field == "letter.verdict"
    parse_letter(letter(phase="judging", verdict={"decision": "CHANGE", "gist": "rename it"}))


def test_merge_wait_requires_the_gate():
    body = letter(phase="merge_wait")
    del body["gate"]
    assert refusal(body).field == "letter.gate"


def test_merge_wait_means_the_gate_exited_zero():
    body = letter(phase="merge_wait")
    body["gate"]["exit_status"] = 1
    assert refusal(body).field == "letter.gate.exit_status"


def test_gate_zero_cannot_land_by_schema():
    """A green gate without an imported receipt is merge_wait, never landed (§1d)."""
    green = {"command": "pytest -q", "exit_status": 0, "artifact_hash": SHA_A}
    for receipt in (None, {"imported": False, "store_version": 3}, {"imported": True}):
        body = letter(phase="landed", gate=green, receipt=receipt)
        refused = refusal(body)
        assert refused.code == Code.LETTER_INVALID
        assert refused.field == "letter.receipt"
    parse_letter(letter(phase="landed", gate=green, receipt={"imported": True, "store_version": 3}))


def test_an_imported_receipt_appears_only_on_a_landed_letter():
    body = letter(phase="merge_wait", receipt={"imported": True, "store_version": 3})
    assert refusal(body).field == "letter.receipt.imported"


def test_archived_with_imported_receipt_refused_by_schema():
    body = letter(phase="archived", receipt={"imported": True, "store_version": 3})
    refused = refusal(body)
    assert refused.code == Code.LETTER_INVALID
    assert refused.field == "letter.receipt.imported"
    parse_letter(letter(phase="archived", receipt={"imported": False}))


def test_letter_cannot_colour_a_block_by_schema():
    for key in ("color", "colour"):
        refused = refusal(letter(**{key: "green"}))
        assert (refused.code, refused.field) == (Code.LETTER_INVALID, "letter")
        assert refused.message == "letter holds a field it does not take."


@pytest.mark.parametrize(
    ("where", "body"),
    [
        ("letter.brain_ref", letter(brain="/home/ana/Repo-B1")),
        ("letter.brain_ref", letter(brain="C:\\work\\Repo-B1")),
        ("letter.brain_ref", letter(brain="~/Repo-B1")),
        (
            "letter.gate.command",
            letter(
                gate={"command": "cd /srv/repo && make", "exit_status": 0, "artifact_hash": SHA_A}
            ),
        ),
        ("letter.verdict.gist", letter(verdict={"decision": "REJECT", "gist": "see file:///etc"})),
        ("letter.verdict.gist", letter(verdict={"decision": "APPROVE", "gist": "ok //srv/x"})),
    ],
)
def test_no_absolute_path_anywhere_in_a_letter(where, body):
    refused = refusal(body)
    assert refused.code == Code.LETTER_INVALID
    assert refused.field == where


def test_evidence_refs_hold_no_absolute_path():
    cand = candidate("sb_x")
    cand["evidence"]["evidence_refs"] = ["/home/ana/log.txt"]
    body = letter(phase="merge_wait", receipt_candidate=cand)
    assert refusal(body).field == "letter.receipt_candidate.evidence.evidence_refs[0]"


def test_relative_paths_and_urls_are_not_absolute_paths():
    cand = candidate("sb_x")
    cand["evidence"]["evidence_refs"] = ["tests/test_a.py::test_b", "https://ci.example/run/7"]
    parse_letter(letter(phase="merge_wait", receipt_candidate=cand))


def test_the_first_letter_has_no_previous_and_later_letters_name_one():
    assert refusal(letter(seq=1, prev="0123456789ab")).field == "letter.prev_letter_id"
    assert refusal(letter(seq=2, prev=None)).field == "letter.prev_letter_id"
    assert refusal(letter(seq=2, prev="0123456789")).field == "letter.prev_letter_id"


def test_updated_at_is_not_before_started_at():
    body = letter(started_at="2026-01-01T00:00:00Z", updated_at="2025-12-31T23:59:59Z")
    assert refusal(body).field == "letter.updated_at"


def test_instants_need_an_offset():
    assert refusal(letter(started_at="2026-01-01T00:00:00")).field == "letter.started_at"


def test_types_are_strict():
    assert refusal(letter(seq="2", prev="0123456789ab")).field == "letter.mission_seq"
    body = letter(phase="merge_wait")
    body["gate"]["exit_status"] = False
    assert refusal(body).field == "letter.gate.exit_status"


def test_letter_id_is_sha256_of_the_canonical_normalised_letter():
    body = letter()
    full = {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": body["mission_id"],
        "mission_seq": 1,
        "prev_letter_id": None,
        "block_id": body["block_id"],
        "brain_ref": "Repo-B1",
        "seat": "hand",
        "runner_id": "build-1",
        "capability": "build-runner",
        "phase": "judging",
        "verdict": None,
        "gate": None,
        "receipt_candidate": None,
        "receipt": None,
        "packet_ref": None,
        "synthetic": False,
        "tokens_total": 0,
        "started_at": body["started_at"],
        "updated_at": body["updated_at"],
    }
    canonical = json.dumps(full, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert letter_id(parse_letter(body)) == expected
    # the same letter written with its defaults spelled out has the same id
    assert letter_id(parse_letter(full)) == expected
    assert sha12(expected) == expected[:12]


def test_any_change_changes_the_letter_id():
    base = letter_id(parse_letter(letter()))
    assert letter_id(parse_letter(letter(tokens_total=1))) != base
    assert letter_id(parse_letter(letter(brain="Repo-B2"))) != base


def test_a_letter_that_is_not_an_object_is_invalid():
    with pytest.raises(Refused) as caught:
        parse_letter(["not", "a", "letter"])
    assert caught.value.code == Code.LETTER_INVALID
