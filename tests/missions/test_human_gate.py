"""Where the ``human-ui`` origin can come from: only the envelope of a message the page sent
(SPEC §4; seed 004 §8; :mod:`core.gestures`)."""

from __future__ import annotations

import json

import pytest

from core.gestures import HUMAN_ORIGINS, require_human_gesture
from core.refusals import Code, Refused
from tests.missions.kit import HUMAN, Kit, candidate


def test_the_allow_list_is_closed():
    assert frozenset({"human-ui"}) == HUMAN_ORIGINS


@pytest.mark.parametrize("origin", ["peer", "sandbox", "plugin:x", "runnerd", "HUMAN-UI", ""])
def test_the_envelope_accepts_no_origin_but_human_ui(origin):
    kit = Kit()
    message = {
        "v": 1,
        "id": "r1",
        "op": "blocks.ratify",
        "origin": origin,
        "args": {"project": kit.project, "store_version": 1, "ratified_via": HUMAN},
    }
    answer, _ = kit.h.raw(json.dumps(message))
    assert answer["refusal"]["code"] == "message-malformed"
    assert kit.store()["ratified"] is None


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("blocks.ratify", {"store_version": 1, "ratified_via": HUMAN}),
        ("receipt.import", {"imported_via": HUMAN}),
    ],
)
def test_a_token_in_the_arguments_without_the_pages_gesture_is_refused(op, args):
    """What a peer, plugin or sandbox could do: write the token into the arguments."""
    kit = Kit()
    if op == "receipt.import":
        args = args | {"candidate": candidate(kit.block)}
    before = kit.store_bytes()
    refusal = kit.refused(op, **args)
    assert refusal["code"] == "human_gesture_required"
    assert refusal["field"] == "origin"
    assert kit.store_bytes() == before


def test_the_gate_checks_the_input_before_the_origin():
    with pytest.raises(Refused) as caught:
        require_human_gesture(origin=HUMAN, via=None, field="ratified_via", act="Ratifying")
    assert caught.value.code == Code.HUMAN_GESTURE_REQUIRED
    assert caught.value.field == "ratified_via"
    require_human_gesture(origin=HUMAN, via=HUMAN, field="ratified_via", act="Ratifying")


def test_refused_gestures_are_audited_with_the_rule():
    kit = Kit()
    answer = kit.call("blocks.ratify", store_version=1, ratified_via=HUMAN)
    page = kit.h.ok("audit.list", limit=1)["records"]
    assert page[0]["seq"] == answer["logged"]
    assert page[0]["decision"] == "refused"
    assert page[0]["rule"] == "human_gesture_required"
    assert page[0]["details"]["field"] == "origin"
