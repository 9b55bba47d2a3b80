"""The tray's rules and operations (seed 004 §3, §1h, F2.5d): failures pinned until a person
dismisses them, stagnant heads dismissible and shown again when they move, counts over every
head, the two follow-up letters, the fresh archive preview, provenance — and nothing a tray
operation does touches a letter, a block or a receipt."""

from __future__ import annotations

import json

from core.missions.letters import parse_letter
from core.missions.tray import (
    STAGNANT_AFTER_MS,
    STAGNANT_PHASES,
    dismiss_reason,
    is_stagnant,
    phase_counts,
)
from core.missions.ui_state import UI_STATE_NAME
from tests.missions.kit import HUMAN, M1, M2, Kit, candidate, letter
from tests.support import run

OLD = "2025-12-30T20:00:00Z"  # more than 24 h before the harness clock (2026-01-01T00:00Z)
NOW_MS = 1_767_225_600_000


def tray(kit: Kit) -> dict:
    return kit.ok("tray.read")


def card(kit: Kit, mission: str) -> dict:
    return next(c for c in tray(kit)["cards"] if c["mission_id"] == mission)


def dismiss(kit: Kit, mission: str, origin: str | None = HUMAN, **extra) -> dict:
    head = card(kit, mission)
    return kit.call(
        "tray.dismiss", origin, mission_id=mission, letter_id=head["letter_id"], **extra
    )


def untouched(kit: Kit):
    return kit.segments(), kit.store_bytes()


# -- pure rules ---------------------------------------------------------------------------------


def test_stagnant_means_judging_or_executing_unchanged_for_over_24_hours():
    for phase in ("judging", "executing"):
        assert is_stagnant(
            parse_letter(letter(phase=phase, updated_at=OLD, started_at=OLD)), NOW_MS
        )
        assert not is_stagnant(parse_letter(letter(phase=phase)), NOW_MS)
    merge = parse_letter(letter(phase="merge_wait", updated_at=OLD, started_at=OLD))
    assert not is_stagnant(merge, NOW_MS)
    exactly = "2025-12-31T00:00:00Z"  # exactly 24 h: not yet stagnant
    assert not is_stagnant(parse_letter(letter(updated_at=exactly, started_at=exactly)), NOW_MS)
    assert STAGNANT_AFTER_MS == 86_400_000
    # the phases the page's confirm text and the refusal name are the rule's own
    assert STAGNANT_PHASES == ("judging", "executing")


def test_only_failed_and_stagnant_heads_are_dismissible():
    assert dismiss_reason(parse_letter(letter(phase="failed")), NOW_MS) == "failed"
    stale = parse_letter(letter(phase="executing", updated_at=OLD, started_at=OLD))
    assert dismiss_reason(stale, NOW_MS) == "stagnant"
    for phase in ("judging", "gate", "review", "merge_wait"):
        assert dismiss_reason(parse_letter(letter(phase=phase)), NOW_MS) is None


def test_counts_cover_all_eight_phases_in_the_seed_order():
    counts = phase_counts(["failed", "judging", "failed"])
    assert list(counts) == [
        "judging",
        "executing",
        "gate",
        "review",
        "merge_wait",
        "landed",
        "failed",
        "archived",
    ]
    assert counts["failed"] == 2 and counts["judging"] == 1 and counts["landed"] == 0


# -- tray.read ----------------------------------------------------------------------------------


def test_an_empty_project_has_an_empty_tray():
    view = tray(Kit())
    assert view["cards"] == [] and view["missions"] == 0
    assert set(view["counts"].values()) == {0}
    assert view["brain_ref"] == "Repo-B1"
    assert view["tray_open"] is True


def test_failed_is_pinned_on_top_and_counts_match_the_heads():
    kit = Kit()
    kit.chain(("judging", "executing", "failed"), mission=M1)
    kit.chain(("judging", "executing"), mission=M2)
    view = tray(kit)
    assert [c["mission_id"] for c in view["cards"]] == [M1, M2]  # M2 moved last, M1 pinned
    assert view["cards"][0]["pinned"] and view["cards"][0]["dismissible"] == "failed"
    assert view["counts"]["failed"] == 1 and view["counts"]["executing"] == 1
    assert sum(view["counts"].values()) == view["missions"] == 2
    first = view["cards"][0]
    assert first["block_name"] == "Receipt importer" and first["anchor"] == "block"
    assert first["letter"]["phase"] == "failed" and first["superseded_count"] == 2


def test_a_dismissed_failure_stays_hidden_and_nothing_else_changes():
    kit = Kit()
    kit.chain(("judging", "failed"))
    before = untouched(kit)
    answer = dismiss(kit, M1)
    assert answer["ok"], answer
    assert answer["result"] == {"mission_id": M1, "hidden": True, "reason": "failed"}
    view = tray(kit)
    assert view["cards"][0]["hidden"] and view["hidden"] == 1
    assert view["counts"]["failed"] == 1  # the strip still counts it
    assert untouched(kit) == before
    stored = json.loads(kit.h.state.docs[UI_STATE_NAME])
    assert stored["dismissed"][kit.project][M1]["reason"] == "failed"


def test_dismiss_is_a_persons_gesture():
    kit = Kit()
    kit.chain(("judging", "failed"))
    refusal = dismiss(kit, M1, origin=None)["refusal"]
    assert refusal["code"] == "human_gesture_required"
    assert UI_STATE_NAME not in kit.h.state.docs
    assert not card(kit, M1)["hidden"]


def test_a_head_that_is_neither_failed_nor_stagnant_cannot_be_hidden():
    kit = Kit()
    kit.chain(("judging", "executing"))
    refusal = dismiss(kit, M1)["refusal"]
    assert refusal["code"] == "args-invalid"
    assert not card(kit, M1)["hidden"]


def test_a_stagnant_head_is_dismissible_and_shows_again_when_it_moves_to_merge_wait():
    kit = Kit()
    posted = kit.post(kit.letter(phase="judging", started_at=OLD, updated_at=OLD))
    posted = kit.post(kit.after(posted, "executing", started_at=OLD, updated_at=OLD))
    view = card(kit, M1)
    assert view["stagnant"] and view["dismissible"] == "stagnant"
    assert dismiss(kit, M1)["ok"]
    assert card(kit, M1)["hidden"]
    posted = kit.post(kit.after(posted, "gate"))
    kit.post(kit.after(posted, "merge_wait"))
    again = card(kit, M1)
    assert not again["hidden"] and again["letter"]["phase"] == "merge_wait"


def test_hiding_a_head_that_moved_since_the_person_looked_is_stale():
    kit = Kit()
    posted = kit.chain(("judging", "failed"))
    seen = card(kit, M1)["letter_id"]
    kit.post(kit.after(posted, "executing"))
    refusal = kit.refused("tray.dismiss", HUMAN, mission_id=M1, letter_id=seen)
    assert refusal["code"] == "stale_head"
    assert refusal["details"]["head_phase"] == "executing"


def test_show_again_undoes_a_dismissal():
    kit = Kit()
    kit.chain(("judging", "failed"))
    dismiss(kit, M1)
    assert dismiss(kit, M1, hide=False)["result"]["hidden"] is False
    assert not card(kit, M1)["hidden"]


def test_dismissals_survive_a_new_host_over_the_same_host_dir():
    kit = Kit()
    kit.chain(("judging", "failed"))
    dismiss(kit, M1)
    stored = kit.h.state.docs[UI_STATE_NAME]
    assert json.loads(stored)["schema"] == "voicebox-ui-state-v1"
    kit.h.state.docs[UI_STATE_NAME] = b"not json"  # unreadable presentation state shows more
    assert not card(kit, M1)["hidden"]
    kit.h.state.docs[UI_STATE_NAME] = stored
    assert card(kit, M1)["hidden"]


def test_the_layout_is_remembered():
    kit = Kit()
    assert kit.h.ok("tray.layout", open=False) == {"tray_open": False}
    assert tray(kit)["tray_open"] is False


def test_a_project_with_no_store_shows_unknown_anchors():
    kit = Kit(store=False)
    kit.post(kit.letter(block_id="sb_anything"))
    assert card(kit, M1)["anchor"] == "unknown"


# -- follow-up letters ----------------------------------------------------------------------------


def test_next_letter_lands_a_merge_wait_head_after_the_persons_import():
    kit = Kit()
    cand = candidate(kit.block)
    kit.chain(receipt_candidate=cand)
    imported = kit.human("receipt.import", candidate=cand, mission_id=M1, imported_via=HUMAN)
    draft = kit.ok(
        "tray.next_letter", mission_id=M1, phase="landed", store_version=imported["store_version"]
    )["letter"]
    assert draft["phase"] == "landed" and draft["mission_seq"] == 5
    assert draft["receipt"] == {"imported": True, "store_version": imported["store_version"]}
    posted = kit.post(draft, agent_id="operator")
    assert posted["phase"] == "landed"


def test_a_landing_draft_is_refused_by_the_post_without_an_import():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    draft = kit.ok("tray.next_letter", mission_id=M1, phase="landed", store_version=2)["letter"]
    refusal = kit.refused("mission.post", agent_id="operator", letter=draft)
    assert refusal["code"] == "letter_invalid"


def test_next_letter_only_extends_merge_wait():
    kit = Kit()
    kit.chain(("judging", "executing"))
    refusal = kit.refused("tray.next_letter", mission_id=M1, phase="archived")
    assert refusal["code"] == "invalid_transition"


def test_the_archive_preview_states_both_boundaries_and_the_letter_needs_the_gesture():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    fresh = kit.ok("tray.archive_preview", mission_id=M1)
    assert fresh["proved_boundary"] == 1 and fresh["block_boundary"] == 1
    assert fresh["would_import"] is True and fresh["import_code"] is None
    kit.human(
        "blocks.candidate_edit", ops=[{"op": "repurpose", "block_id": kit.block, "purpose": "B"}]
    )
    kit.human(
        "blocks.candidate_edit", ops=[{"op": "repurpose", "block_id": kit.block, "purpose": "C"}]
    )
    stale = kit.ok("tray.archive_preview", mission_id=M1)
    assert (stale["proved_boundary"], stale["block_boundary"]) == (1, 3)
    assert stale["would_import"] is False and stale["import_code"] == "receipt-scope-invalid"
    before = kit.segments()
    refusal = kit.refused("mission.post", agent_id="operator", letter=stale["letter"])
    assert refusal["code"] == "human_gesture_required"
    assert kit.segments() == before
    archived = kit.ok(
        "mission.post", HUMAN, agent_id="operator", letter=stale["letter"], archived_via=HUMAN
    )
    assert archived["phase"] == "archived"


def test_the_archive_preview_writes_nothing():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    before = untouched(kit)
    kit.ok("tray.archive_preview", mission_id=M1)
    assert untouched(kit) == before


def test_provenance_of_a_landed_mission_runs_packet_runner_gate_receipt():
    kit = Kit()
    cand = candidate(kit.block)
    packet = "sha256:" + "c" * 64
    posted = kit.post(kit.letter(packet_ref=packet))
    for phase in ("executing", "gate", "merge_wait"):
        extra = {"receipt_candidate": cand} if phase == "merge_wait" else {}
        posted = kit.post(kit.after(posted, phase, **extra))
    imported = kit.human("receipt.import", candidate=cand, mission_id=M1, imported_via=HUMAN)
    draft = kit.ok(
        "tray.next_letter", mission_id=M1, phase="landed", store_version=imported["store_version"]
    )["letter"]
    kit.post(draft, agent_id="operator")
    chain = kit.ok("tray.provenance", mission_id=M1)
    assert chain["packet_ref"] == packet
    assert chain["runner_id"] == "build-1" and chain["capability"] == "build-runner"
    assert chain["gate_artifact_hash"] == "sha256:" + "a" * 64
    assert chain["receipt"]["store_version"] == imported["store_version"]
    assert chain["receipt"]["artifact_hash"] == "sha256:" + "b" * 64
    assert [s["phase"] for s in chain["chain"]] == [
        "judging",
        "executing",
        "gate",
        "merge_wait",
        "landed",
    ]
    assert chain["chain"][-1]["agent_id"] == "operator"


def test_provenance_before_landing_has_no_receipt():
    kit = Kit()
    kit.chain(("judging",))
    chain = kit.ok("tray.provenance", mission_id=M1)
    assert chain["receipt"] is None and chain["packet_ref"] is None
    assert len(chain["chain"]) == 1


def test_tray_operations_on_an_unknown_mission_refuse():
    kit = Kit()
    refusal = kit.refused("tray.provenance", mission_id=M1)
    assert refusal["code"] == "args-invalid"


def test_an_import_from_a_peer_channel_carrying_the_human_origin_is_refused_and_changes_nothing():
    kit = Kit()
    cand = candidate(kit.block)
    kit.chain(receipt_candidate=cand)
    before = untouched(kit)
    message = json.dumps(
        {
            "v": 1,
            "id": "peer-1",
            "op": "receipt.import",
            "origin": HUMAN,
            "args": {
                "project": kit.project,
                "candidate": cand,
                "mission_id": M1,
                "imported_via": HUMAN,
            },
        }
    )
    answer, _, _ = run(kit.h.host.handle_full(message, actor="peer:env-1"))
    refusal = json.loads(answer)["refusal"]
    assert refusal["code"] == "human_gesture_required"
    assert untouched(kit) == before


# -- what a card offers (issue 14: the page no longer decides) ---------------------------------


def test_each_card_offers_the_actions_its_phase_allows_now():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block), mission="msn_00000000000a")  # merge_wait
    kit.chain(mission="msn_00000000000b")  # merge_wait without a receipt candidate
    kit.chain(("judging", "failed"), mission="msn_00000000000c")
    kit.chain(("judging",), mission="msn_00000000000d")
    kit.post(kit.letter(mission="msn_00000000000e", updated_at=OLD, started_at=OLD))
    kit.chain(("judging", "executing", "gate", "review"), mission="msn_00000000000f")
    offered = {c["mission_id"][-1]: c["actions"] for c in tray(kit)["cards"]}
    assert offered == {
        "a": ["import", "archive"],
        "b": ["archive"],
        "c": ["dismiss"],
        "d": [],
        "e": ["dismiss"],  # judging, unchanged for over 24 hours
        "f": [],
    }


def test_a_landed_card_offers_its_provenance():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    head = card(kit, M1)
    kit.human("tray.land", mission_id=M1, letter_id=head["letter_id"], imported_via=HUMAN)
    assert card(kit, M1)["actions"] == ["provenance"]


# -- tray.land: import the receipt and land the mission, one gesture ---------------------------


def test_landing_imports_the_receipt_and_posts_the_landed_letter_in_one_gesture():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    head = card(kit, M1)
    landed = kit.human(
        "tray.land",
        mission_id=M1,
        letter_id=head["letter_id"],
        if_store_version=1,
        imported_via=HUMAN,
    )
    assert landed["imported"]["store_version"] == 2 and landed["imported"]["duplicate"] is False
    assert landed["posted"]["phase"] == "landed" and landed["posted"]["mission_seq"] == 5
    after = kit.heads()[M1]
    assert after["agent_id"] == "operator"
    assert after["letter"]["receipt"] == {"imported": True, "store_version": 2}
    assert kit.store()["blocks"][0]["color"] == "green"
    decisions = [(r["op"], r["decision"]) for r in kit.h.ok("audit.list", limit=3)["records"]]
    assert decisions == [
        ("tray.land", "admitted"),
        ("mission.post", "admitted"),
        ("receipt.import", "admitted"),
    ]


def test_landing_is_a_persons_gesture_and_without_it_nothing_changes():
    kit = Kit()
    kit.chain(receipt_candidate=candidate(kit.block))
    head = card(kit, M1)
    before = untouched(kit)
    no_origin = kit.refused("tray.land", mission_id=M1, letter_id=head["letter_id"])
    assert (no_origin["code"], no_origin["field"]) == ("human_gesture_required", "imported_via")
    forged = kit.refused(
        "tray.land", mission_id=M1, letter_id=head["letter_id"], imported_via=HUMAN
    )
    assert (forged["code"], forged["field"]) == ("human_gesture_required", "origin")
    assert untouched(kit) == before


def test_landing_a_head_that_moved_since_the_person_looked_is_stale_and_imports_nothing():
    kit = Kit()
    first = kit.chain(
        ("judging", "executing", "gate", "review", "merge_wait"),
        receipt_candidate=candidate(kit.block),
    )
    seen = card(kit, M1)["letter_id"]
    kit.post(kit.after(first, "merge_wait", receipt_candidate=candidate(kit.block), tokens_total=1))
    before = untouched(kit)
    refusal = kit.refused("tray.land", HUMAN, mission_id=M1, letter_id=seen, imported_via=HUMAN)
    assert refusal["code"] == "stale_head" and refusal["field"] == "letter_id"
    assert untouched(kit) == before


def test_landing_after_an_import_whose_landing_was_not_posted_finishes_the_job():
    """The import and the post are two writes; if only the import was made (the post failed,
    or the person imported by hand), landing again posts the landing over the same import."""
    kit = Kit()
    cand = candidate(kit.block)
    kit.chain(receipt_candidate=cand)
    kit.human("receipt.import", candidate=cand, mission_id=M1, imported_via=HUMAN)
    head = card(kit, M1)
    landed = kit.human("tray.land", mission_id=M1, letter_id=head["letter_id"], imported_via=HUMAN)
    assert landed["imported"]["duplicate"] is True
    assert kit.heads()[M1]["letter"]["receipt"] == {"imported": True, "store_version": 2}


def test_landing_needs_a_merge_wait_head_with_a_receipt_candidate():
    kit = Kit()
    kit.chain(("judging", "executing"))
    head = card(kit, M1)
    refusal = kit.refused(
        "tray.land", HUMAN, mission_id=M1, letter_id=head["letter_id"], imported_via=HUMAN
    )
    assert refusal["code"] == "invalid_transition"
    kit.chain(mission=M2)  # merge_wait, no candidate
    bare = card(kit, M2)
    refusal = kit.refused(
        "tray.land", HUMAN, mission_id=M2, letter_id=bare["letter_id"], imported_via=HUMAN
    )
    assert (refusal["code"], refusal["field"]) == ("args-invalid", "mission_id")
