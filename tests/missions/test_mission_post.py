"""``mission.post`` through the host protocol: gating against the project, head CAS, the
archive gesture, blocks and brains (seed 004 §1d–§1h, §2c; :mod:`core.missions.posting`)."""

from __future__ import annotations

import pytest

from core.policy import Policy
from tests.missions.kit import BRAIN, HUMAN, M1, M2, Kit, candidate, deep
from tests.support import run


def post_refused(kit: Kit, body: dict, origin: str | None = None, **extra) -> dict:
    """Post ``body`` expecting a refusal; assert the mailbox did not change by one byte."""
    before = kit.mailbox_bytes()
    refusal = kit.refused("mission.post", origin, agent_id="hand-1", letter=body, **extra)
    assert kit.mailbox_bytes() == before
    return refusal


# --- the landed law --------------------------------------------------------------------------


def test_gate_zero_cannot_land():
    """merge_wait with exit 0 but no imported receipt cannot be posted as landed (§1d)."""
    kit = Kit()
    merge_wait = kit.chain()
    green = {"command": "pytest -q", "exit_status": 0, "artifact_hash": "sha256:" + "a" * 64}
    for receipt in (None, {"imported": False, "store_version": 1}):
        body = kit.after(merge_wait, "landed", gate=green, receipt=receipt)
        refusal = post_refused(kit, body)
        assert refusal["code"] == "letter_invalid"
        assert refusal["field"] == "letter.receipt"
    # claiming an import that never happened is refused too: the store has version 1, no receipt
    body = kit.after(merge_wait, "landed", receipt={"imported": True, "store_version": 1})
    refusal = post_refused(kit, body)
    assert refusal["code"] == "letter_invalid"
    assert refusal["field"] == "letter.receipt.store_version"
    assert kit.heads()[M1]["letter"]["phase"] == "merge_wait"


def test_landed_is_accepted_after_a_human_receipt_import():
    kit = Kit()
    merge_wait = kit.chain(receipt_candidate=candidate(kit.block))
    cand = kit.heads()[M1]["letter"]["receipt_candidate"]
    imported = kit.human("receipt.import", candidate=cand, imported_via=HUMAN, mission_id=M1)
    assert imported["store_version"] == 2
    body = kit.after(merge_wait, "landed", receipt={"imported": True, "store_version": 2})
    landed = kit.post(body)
    assert landed["phase"] == "landed"
    head = kit.heads()[M1]
    assert head["letter"]["receipt"] == {"imported": True, "store_version": 2}
    assert head["superseded_count"] == 4


def test_landed_must_name_the_import_of_its_own_block_and_mission():
    kit = Kit()
    other = kit.human("blocks.candidate_edit", ops=[{"op": "add", "name": "Other"}])["added"][0]
    kit.human("receipt.import", candidate=candidate(other), imported_via=HUMAN, mission_id=M2)
    merge_wait = kit.chain()
    body = kit.after(merge_wait, "landed", receipt={"imported": True, "store_version": 3})
    refusal = post_refused(kit, body)
    assert refusal["code"] == "letter_invalid"
    assert refusal["message"] == "That import was for another block."


# --- head CAS --------------------------------------------------------------------------------


def test_stale_head_rejected():
    """A letter not extending the current head: stale_head, the actual head returned, nothing
    appended (§1e)."""
    kit = Kit()
    first = kit.post(kit.letter(phase="judging"))
    second = kit.post(kit.after(first, "executing"))
    # a second writer still extending seq 1
    racing = kit.after(first, "failed")
    refusal = post_refused(kit, racing)
    assert refusal["code"] == "stale_head"
    assert refusal["status"] == 409
    assert refusal["details"]["head_letter_id"] == second["letter_id"]
    assert refusal["details"]["head_sha12"] == second["sha12"]
    assert refusal["details"]["head_seq"] == 2
    assert refusal["details"]["head_phase"] == "executing"
    assert refusal["details"]["mission_id"] == M1


def test_stale_head_when_seq_is_not_head_plus_one():
    kit = Kit()
    first = kit.post(kit.letter())
    skipping = kit.letter(seq=3, prev=first["sha12"], phase="executing")
    assert post_refused(kit, skipping)["code"] == "stale_head"


def test_a_first_letter_needs_no_head_but_a_second_first_letter_is_stale():
    kit = Kit()
    kit.post(kit.letter(phase="judging"))
    again = kit.letter(phase="judging", tokens_total=5)
    refusal = post_refused(kit, again)
    assert refusal["code"] == "stale_head"
    assert refusal["details"]["head_seq"] == 1


def test_a_later_letter_without_any_head_is_stale():
    kit = Kit()
    refusal = post_refused(kit, kit.letter(seq=2, prev="0123456789ab", phase="executing"))
    assert refusal["code"] == "stale_head"
    assert refusal["details"]["head_letter_id"] is None


def test_missions_have_independent_heads():
    kit = Kit()
    kit.chain(("judging", "executing"), mission=M1)
    kit.chain(("judging",), mission=M2)
    heads = kit.heads()
    assert (heads[M1]["letter"]["mission_seq"], heads[M2]["letter"]["mission_seq"]) == (2, 1)


# --- colour ----------------------------------------------------------------------------------


def test_letter_cannot_colour():
    """No letter, in any phase, changes the block store (§1c); only the import does."""
    kit = Kit()
    store_before = kit.store_bytes()
    merge_wait = kit.chain(receipt_candidate=candidate(kit.block))
    assert kit.store_bytes() == store_before
    assert kit.store()["blocks"][0]["color"] == "grey"
    cand = kit.heads()[M1]["letter"]["receipt_candidate"]
    kit.human("receipt.import", candidate=cand, imported_via=HUMAN)
    after_import = kit.store_bytes()
    assert kit.store()["blocks"][0]["color"] == "green"
    kit.post(kit.after(merge_wait, "landed", receipt={"imported": True, "store_version": 2}))
    kit.chain(("judging", "failed"), mission=M2)
    assert kit.store_bytes() == after_import


# --- the archive gesture ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("archived_via", "origin", "field"),
    [
        (None, None, "archived_via"),
        ("", None, "archived_via"),
        ("runnerd", None, "archived_via"),
        ("human-touchid", None, "archived_via"),
        ("HUMAN-UI", HUMAN, "archived_via"),
        (None, HUMAN, "archived_via"),
        ("human-ui", None, "origin"),
    ],
)
def test_archived_without_human_origin_refused_with_mailbox_byte_identical(
    archived_via, origin, field
):
    kit = Kit()
    merge_wait = kit.chain()
    segments = kit.segments()
    body = kit.after(merge_wait, "archived")
    extra = {} if archived_via is None else {"archived_via": archived_via}
    refusal = post_refused(kit, body, origin, **extra)
    assert refusal["code"] == "human_gesture_required"
    assert refusal["field"] == field
    assert kit.segments() == segments
    assert kit.heads()[M1]["letter"]["phase"] == "merge_wait"


def test_archived_by_a_person_supersedes_the_merge_wait_head():
    kit = Kit()
    kit.chain(("judging", "executing", "gate", "merge_wait"), mission=M2)
    merge_wait = kit.chain()
    bell = [h for h in kit.heads().values() if h["letter"]["phase"] == "merge_wait"]
    assert len(bell) == 2
    answer, _ = kit.h.call(
        "mission.post",
        origin=HUMAN,
        project=kit.project,
        agent_id="operator",
        letter=kit.after(merge_wait, "archived"),
        archived_via=HUMAN,
    )
    assert answer["ok"], answer
    heads = kit.heads()
    assert heads[M1]["letter"]["phase"] == "archived"
    assert heads[M1]["superseded_count"] == 4
    # the superseded receipt candidate stays on the merge_wait letter; the bell counts one now
    assert [h["mission_id"] for h in heads.values() if h["letter"]["phase"] == "merge_wait"] == [M2]


@pytest.mark.parametrize(
    "route",
    [
        ("judging",),
        ("judging", "executing"),
        ("judging", "executing", "gate"),
        ("judging", "failed"),
        ("judging", "executing", "gate", "review"),
    ],
)
def test_archived_only_over_merge_wait(route):
    kit = Kit()
    head = kit.chain(route)
    refusal = post_refused(kit, kit.after(head, "archived"), HUMAN, archived_via=HUMAN)
    assert refusal["code"] == "invalid_transition"
    assert refusal["details"]["head_phase"] == route[-1]


def test_archived_cannot_open_a_mission():
    kit = Kit()
    refusal = post_refused(kit, kit.letter(phase="archived"), HUMAN, archived_via=HUMAN)
    assert refusal["code"] == "invalid_transition"


def test_archived_only_over_merge_wait_not_over_landed():
    kit = Kit()
    merge_wait = kit.chain(receipt_candidate=candidate(kit.block))
    cand = kit.heads()[M1]["letter"]["receipt_candidate"]
    kit.human("receipt.import", candidate=cand, imported_via=HUMAN)
    landed = kit.post(
        kit.after(merge_wait, "landed", receipt={"imported": True, "store_version": 2})
    )
    refusal = post_refused(kit, kit.after(landed, "archived"), HUMAN, archived_via=HUMAN)
    assert refusal["code"] == "invalid_transition"


def test_nothing_follows_an_archived_letter():
    kit = Kit()
    merge_wait = kit.chain()
    archived = kit.ok(
        "mission.post",
        HUMAN,
        agent_id="operator",
        letter=kit.after(merge_wait, "archived"),
        archived_via=HUMAN,
    )
    refusal = post_refused(kit, kit.after(archived, "executing"))
    assert refusal["code"] == "invalid_transition"


def test_archived_with_imported_receipt_refused():
    kit = Kit()
    merge_wait = kit.chain(receipt_candidate=candidate(kit.block))
    cand = kit.heads()[M1]["letter"]["receipt_candidate"]
    kit.human("receipt.import", candidate=cand, imported_via=HUMAN)
    body = kit.after(merge_wait, "archived", receipt={"imported": True, "store_version": 2})
    refusal = post_refused(kit, body, HUMAN, archived_via=HUMAN)
    assert refusal["code"] == "letter_invalid"
    assert refusal["field"] == "letter.receipt.imported"


def test_a_human_token_on_an_ordinary_letter_from_elsewhere_is_refused():
    kit = Kit()
    refusal = post_refused(kit, kit.letter(), None, archived_via=HUMAN)
    assert refusal["code"] == "human_gesture_required"
    assert refusal["field"] == "origin"


# --- blocks and brains -----------------------------------------------------------------------


def test_unknown_block():
    kit = Kit()
    refusal = post_refused(kit, kit.letter(block_id="sb_nosuchblock"))
    assert refusal["code"] == "unknown_block"
    assert refusal["field"] == "letter.block_id"


def test_skeleton_anchor_accepted():
    kit = Kit()
    posted = kit.post(kit.letter(block_id=kit.skeleton))
    assert posted["mission_seq"] == 1


def test_another_skeleton_id_is_not_an_anchor():
    kit = Kit()
    refusal = post_refused(kit, kit.letter(block_id="sk_repo_b1_candidate"))
    assert refusal["code"] == "unknown_block"


def test_synthetic_escape():
    kit = Kit()
    posted = kit.post(kit.letter(block_id="sb_smoke_probe", synthetic=True))
    assert kit.heads()[posted["mission_id"]]["letter"]["synthetic"] is True


def test_a_project_without_a_store_accepts_any_block():
    kit = Kit(store=False)
    assert kit.store() is None
    kit.post(kit.letter(block_id="sb_anything"))


def test_brain_mismatch():
    kit = Kit()
    for other in ("repo-b1", "Repo-B2", "repo_b1", f"{BRAIN} "):
        refusal = post_refused(kit, kit.letter(brain=other))
        assert refusal["code"] == "brain_mismatch"
        assert refusal["field"] == "letter.brain_ref"


def test_brain_ref_follows_a_project_rename():
    kit = Kit()
    kit.h.ok("project.rename", project=kit.project, name="Repo-B2")
    assert post_refused(kit, kit.letter())["code"] == "brain_mismatch"
    kit.post(kit.letter(brain="Repo-B2"))


# --- the host around it ----------------------------------------------------------------------


def test_refused_on_a_read_only_host():
    kit = Kit()
    kit.h.ctx.policy = Policy(read_only=True)
    refusal = post_refused(kit, kit.letter())
    assert refusal["code"] == "read-only-mode"


def test_an_invalid_letter_is_letter_invalid_not_a_malformed_message():
    kit = Kit()
    body = kit.letter()
    body["mission_seq"] = 0
    refusal = post_refused(kit, body)
    assert refusal["code"] == "letter_invalid"
    assert refusal["field"] == "letter.mission_seq"


def test_posts_and_refusals_are_audited_with_mission_details():
    kit = Kit()
    first = kit.post(kit.letter())
    answer = kit.call("mission.post", agent_id="hand-1", letter=kit.letter(tokens_total=9))
    assert answer["logged"] is not None
    records = [r for r in run(kit.h.ctx.audit.page(limit=100)) if r["op"] == "mission.post"]
    refused, admitted = records[0], records[1]
    assert admitted["decision"] == "admitted"
    assert admitted["rule"] == "mission-letter-posted"
    assert admitted["project"] == kit.project
    assert admitted["details"]["mission_id"] == M1
    assert admitted["details"]["seq"] == 1
    assert admitted["details"]["letter_id"] == first["sha12"]
    assert refused["decision"] == "refused"
    assert refused["rule"] == "stale_head"
    assert refused["details"]["head_seq"] == 1


def test_an_unknown_project_is_refused():
    kit = Kit()
    answer, _ = kit.h.call(
        "mission.post", project="p_00000000000000ff", agent_id="hand-1", letter=deep(kit.letter())
    )
    assert answer["refusal"]["code"] == "project-not-found"
