"""compose.packet drafts, never writes; direct delivery of its draft posts the seq-1 judging
letter naming the packet (seed 004 §4a). Settings: the policy is read and changed only by the
operator's gesture, audited, stored in HOST_DIR and in effect on the next request."""

from __future__ import annotations

import base64
import hashlib
import json

from core.missions.letters import PHASE_MEANINGS
from core.missions.tray import DELIVERED
from core.policy import Policy
from tests.missions.kit import HUMAN, Kit
from tests.support import HostHarness


def compose(kit: Kit, **over) -> dict:
    args = {"block_id": kit.block, "to": "hand-7"} | over
    return kit.ok("compose.packet", **args)


def test_compose_drafts_the_packet_and_its_first_letter_and_writes_nothing():
    kit = Kit()
    before = (kit.segments(), kit.store_bytes())
    drafted = compose(kit, note="Keep the API.")
    assert (kit.segments(), kit.store_bytes()) == before
    packet = drafted["packet"]
    ref = "sha256:" + hashlib.sha256(packet.encode()).hexdigest()
    assert drafted["packet_ref"] == ref
    first = drafted["letter"]
    assert first["mission_seq"] == 1 and first["phase"] == "judging"
    assert first["packet_ref"] == ref and first["mission_id"] == drafted["mission_id"]
    assert first["brain_ref"] == "Repo-B1" and first["block_id"] == kit.block
    assert "> Keep the API." in packet


def test_direct_delivers_the_drafted_packet_and_the_tray_shows_judging():
    kit = Kit()
    drafted = compose(kit)
    kit.ok(
        "mission.deliver",
        agent_id="operator",
        to="hand-7",
        letter=drafted["letter"],
        packet=drafted["packet"],
    )
    (card,) = kit.ok("tray.read")["cards"]
    assert card["letter"]["phase"] == "judging"
    assert card["letter"]["packet_ref"] == drafted["packet_ref"]
    (note,) = kit.ok("mailbox.read", to="hand-7")["letters"]
    assert note["body"] == drafted["packet"]


def test_a_delivered_mission_card_says_whose_inbox_holds_it_and_that_it_waits() -> None:
    kit = Kit()
    drafted = compose(kit)
    assert kit.ok("tray.read")["cards"] == []
    kit.ok(
        "mission.deliver",
        agent_id="operator",
        to="hand-7",
        letter=drafted["letter"],
        packet=drafted["packet"],
    )
    (card,) = kit.ok("tray.read")["cards"]
    assert card["status"] == DELIVERED.format(agent="hand-7")
    assert card["status"] == "delivered to hand-7's inbox — waiting for the agent"


def test_a_mission_posted_without_a_delivery_says_what_its_phase_means() -> None:
    kit = Kit()
    drafted = compose(kit)
    kit.ok("mission.post", agent_id="hand-7", letter=drafted["letter"])
    (card,) = kit.ok("tray.read")["cards"]
    assert card["status"] == PHASE_MEANINGS["judging"]


def test_compose_refuses_a_block_the_store_does_not_have():
    kit = Kit()
    assert kit.refused("compose.packet", block_id="sb_nope", to="hand-7")["code"] == (
        "unknown_block"
    )
    bare = Kit(store=False)
    assert bare.refused("compose.packet", block_id="sb_x", to="hand-7")["code"] == "unknown_block"


def test_compose_accepts_the_skeleton_anchor():
    kit = Kit()
    drafted = compose(kit, block_id=kit.skeleton)
    assert drafted["letter"]["block_id"] == kit.skeleton
    assert "the whole skeleton" in drafted["packet"]


def test_a_read_only_host_composes_for_the_clipboard_only_and_says_why():
    kit = Kit()
    kit.h.call("policy.set", origin=HUMAN, changes={"read_only": True})
    drafted = compose(kit, mode="clipboard")
    modes = {m["mode"]: m for m in drafted["modes"]}
    assert drafted["read_only"] is True
    assert modes["clipboard"]["available"]
    assert not modes["direct"]["available"] and "read-only" in modes["direct"]["reason"]
    refusal = kit.refused(
        "mission.deliver",
        agent_id="operator",
        to="hand-7",
        letter=drafted["letter"],
        packet=drafted["packet"],
    )
    assert refusal["code"] == "read-only-mode"


def test_spawn_is_never_offered_here_and_says_why():
    modes = {m["mode"]: m for m in compose(Kit())["modes"]}
    assert modes["spawn"]["available"] is False
    assert "runner" in modes["spawn"]["reason"]


# -- settings -------------------------------------------------------------------------------------


def test_policy_get_offers_every_switch_with_its_kind_and_bounds():
    h = HostHarness()
    answer = h.ok("policy.get")
    assert answer["policy"] == Policy().model_dump(mode="json")
    kinds = {f["name"]: f for f in answer["fields"]}
    assert set(kinds) == set(Policy.model_fields)
    assert kinds["read_only"]["kind"] == "bool"
    assert kinds["hello_bound_ms"]["kind"] == "int"
    assert (kinds["hello_bound_ms"]["minimum"], kinds["hello_bound_ms"]["maximum"]) == (1, 600_000)
    assert kinds["disabled_tools"]["kind"] == "list"
    assert kinds["admitted_plugins"]["kind"] == "map"


def test_changing_the_policy_is_a_persons_gesture_and_nothing_is_stored_otherwise():
    h = HostHarness()
    answer, _ = h.call("policy.set", changes={"read_only": True})
    assert answer["refusal"]["code"] == "human_gesture_required"
    assert "policy.json" not in h.state.docs
    assert h.ctx.policy.read_only is False


def test_safe_mode_turns_on_and_off_from_the_page_and_refuses_writes_meanwhile():
    h = HostHarness()
    project = h.ok("project.create", name="p")["project"]["id"]
    on, _ = h.call("policy.set", origin=HUMAN, changes={"read_only": True})
    assert on["ok"] and on["result"]["changed"] == ["read_only"]
    assert json.loads(h.state.docs["policy.json"])["read_only"] is True
    assert h.ok("host.info")["read_only"] is True
    write, _ = h.call("file.write", body=b"x", project=project, path="a.txt")
    assert write["refusal"]["code"] == "read-only-mode"
    off, _ = h.call("policy.set", origin=HUMAN, changes={"read_only": False})
    assert off["ok"]
    write, _ = h.call("file.write", body=b"x", project=project, path="a.txt")
    assert write["ok"]


def test_a_policy_change_is_audited_with_the_fields_it_changed():
    h = HostHarness()
    answer, _ = h.call(
        "policy.set", origin=HUMAN, changes={"hello_bound_ms": 8000, "disabled_tools": ["x"]}
    )
    record = h.sink.records[answer["logged"]]
    assert record["op"] == "policy.set" and record["actor"] == HUMAN
    assert record["rule"] == "policy-changed"
    assert record["details"]["changed"] == "disabled_tools,hello_bound_ms"
    assert record["details"]["hello_bound_ms"] == 8000


def test_an_unknown_field_or_a_value_out_of_bounds_is_refused_naming_only_known_fields():
    h = HostHarness()
    # an unknown key is never named (it could be a secret): the field is the map holding it
    for changes, field in (({"nope": 1}, "changes"), ({"hello_bound_ms": 0}, "hello_bound_ms")):
        answer, _ = h.call("policy.set", origin=HUMAN, changes=changes)
        assert answer["refusal"]["code"] == "args-invalid"
        assert answer["refusal"]["field"] == field
    assert "policy.json" not in h.state.docs


def test_the_policy_answer_holds_no_secret_shaped_value():
    h = HostHarness()
    text = json.dumps(h.ok("policy.get"))
    assert "vbx_" not in text and "token" not in text.lower()


def test_a_packet_never_carries_a_secret_the_host_holds():
    """Issue 31: a provider key pasted into the note would be written verbatim into the
    mailbox and the agent's packet file; the draft is refused instead, naming no value."""
    kit = Kit()
    value = "sk-ant-NOTE-CANARY-5d1e9a7c3b8f2e4d6a0c1b3e5f7a9d2c"
    answer, _ = kit.h.call(
        "keys.set",
        origin=HUMAN,
        provider="anthropic",
        variable="ANTHROPIC_API_KEY",
        value=value,
    )
    assert answer["ok"], answer
    before = (kit.segments(), kit.store_bytes())
    for note in (
        f"use {value} please",
        "b64 " + base64.b64encode(value.encode()).decode(),
    ):
        refusal = kit.refused("compose.packet", block_id=kit.block, to="hand-7", note=note)
        assert refusal["code"] == "sanitizer_refused" and refusal["field"] == "note"
        assert "secret this host keeps" in refusal["message"]
        assert value[:12] not in json.dumps(refusal)
    assert (kit.segments(), kit.store_bytes()) == before
    assert compose(kit, note="an ordinary note")["packet"]  # other notes still draft


def test_a_block_never_carries_a_secret_the_host_holds():
    """A provider key pasted into a block's purpose or name (any seat, a person's gesture too)
    is refused ``sanitizer_refused`` on that op's field and writes nothing: stored, it would
    ride in every packet drafted for the block, and each draft would be refused pointing at a
    note that holds no secret (the tryout of stop 46)."""
    kit = Kit()
    value = "sk-ant-BLOCK-CANARY-5d1e9a7c3b8f2e4d6a0c1b3e5f7a9d2c"
    answer, _ = kit.h.call(
        "keys.set", origin=HUMAN, provider="anthropic", variable="ANTHROPIC_API_KEY", value=value
    )
    assert answer["ok"], answer
    before = kit.store_bytes()
    for ops, field in (
        (
            [{"op": "repurpose", "block_id": kit.block, "purpose": f"uses {value}"}],
            "ops[0].purpose",
        ),
        ([{"op": "add", "name": "Fine"}, {"op": "add", "name": f"k {value}"}], "ops[1].name"),
    ):
        refusal = kit.refused("blocks.candidate_edit", HUMAN, ops=ops)
        assert (refusal["code"], refusal["field"]) == ("sanitizer_refused", field)
        assert value[:12] not in json.dumps(refusal)
    assert kit.store_bytes() == before
    assert compose(kit, note="an ordinary note")["packet"]
