"""Landing a remote mission, the host's rules (issue 30, Review): a claim-only candidate needs
the person's explicit confirmation; the land route's answer is read into a closed shape (an
answer about another mission, or a path where a block id belongs, is a lie the page never sees),
and the line a person reads is the host's own."""

from __future__ import annotations

from typing import Any

import pytest

from core.missions.remote_runs import (
    landed_receipt,
    landed_words,
    parse_landed,
    require_claim_confirmed,
)
from core.refusals import Code, Refused

MISSION = "msn_00000000abcd"
ANSWER: dict[str, Any] = {
    "missionId": MISSION,
    "storeVersion": 3,
    "blockId": "blk_0000000000000001",
    "color": "green",
    "letterSha12": "0123456789ab",
    "seq": 5,
    "checked": True,
    "duplicate": False,
}


def test_a_claim_only_candidate_is_imported_only_on_the_persons_confirmation() -> None:
    require_claim_confirmed(checked=True, confirm_claim=False)
    require_claim_confirmed(checked=True, confirm_claim=True)
    require_claim_confirmed(checked=False, confirm_claim=True)
    with pytest.raises(Refused) as caught:
        require_claim_confirmed(checked=False, confirm_claim=False)
    assert caught.value.code == Code.CONFIRMATION_REQUIRED
    assert caught.value.body().status == 428
    assert "only its poster's claim" in caught.value.message
    assert "nothing was imported" in caught.value.message


def test_the_land_answer_is_read_into_its_closed_shape_with_the_hosts_own_words() -> None:
    landed = parse_landed(MISSION, {**ANSWER, "words": "receipt ✓ store v999", "extra": 1})
    assert landed.store_version == 3 and landed.checked is True
    assert landed.words == landed_words(3) == "receipt ✓ store v3"


@pytest.mark.parametrize(
    "lie",
    [
        {"missionId": "msn_00000000ffff"},
        {"storeVersion": 0},
        {"storeVersion": "3"},
        {"letterSha12": "/srv/env/worktrees/x"},
        {"checked": "yes"},
        {"seq": None},
    ],
)
def test_a_land_answer_that_lies_is_refused_as_a_mutating_peer_answer(lie: dict) -> None:
    with pytest.raises(Refused) as caught:
        parse_landed(MISSION, {**ANSWER, **lie})
    assert caught.value.code == Code.PEER_ANSWER_INVALID


def test_a_land_answer_that_is_not_an_object_is_refused() -> None:
    for data in (None, [], "landed", 3):
        with pytest.raises(Refused) as caught:
            parse_landed(MISSION, data)
        assert caught.value.code == Code.PEER_ANSWER_INVALID


def test_only_a_landed_head_with_an_imported_receipt_says_receipt_and_its_store_version() -> None:
    landed = {"phase": "landed", "receipt": {"imported": True, "store_version": 4}}
    assert landed_receipt(landed) == "receipt ✓ store v4"
    assert landed_receipt({**landed, "phase": "merge_wait"}) is None
    assert landed_receipt({"phase": "landed", "receipt": None}) is None
    assert landed_receipt({"phase": "landed", "receipt": {"imported": False}}) is None
