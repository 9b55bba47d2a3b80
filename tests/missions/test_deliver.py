"""Compose's ``direct`` mode: the seq-1 judging letter naming the packet, and the packet in
the agent's inbox — delivery is not execution (seed 004 §4a;
``core.missions.posting.deliver_direct``).
"""

from __future__ import annotations

from core.missions.posting import packet_ref
from tests.missions.kit import M1, Kit

PACKET = "# Mission packet\n\nRename the receipt importer.\n"


def deliver(kit: Kit, **over) -> dict:
    body = kit.letter(packet_ref=packet_ref(PACKET))
    args = {"agent_id": "operator", "to": "hand-7", "letter": body, "packet": PACKET} | over
    return kit.call("mission.deliver", **args)


def test_direct_posts_the_first_letter_and_delivers_the_packet_to_the_inbox():
    kit = Kit()
    answer = deliver(kit)
    assert answer["ok"], answer
    result = answer["result"]
    assert result["posted"]["mission_seq"] == 1
    assert result["posted"]["phase"] == "judging"
    assert "not execution" in result["notice"]
    head = kit.heads()[M1]
    assert head["letter"]["packet_ref"] == packet_ref(PACKET)
    (note,) = kit.ok("mailbox.read", to="hand-7")["letters"]
    assert note["body"] == PACKET
    assert note["id"] == result["note_id"]
    assert note["from"] == "operator"


def test_packet_ref_is_the_sha256_of_the_packet():
    assert packet_ref("abc") == (
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def test_a_packet_ref_that_does_not_match_is_refused_and_nothing_is_delivered():
    kit = Kit()
    answer = deliver(kit, packet=PACKET + "changed")
    assert answer["refusal"]["code"] == "letter_invalid"
    assert answer["refusal"]["field"] == "letter.packet_ref"
    assert kit.mailbox_bytes() == b""


def test_direct_only_opens_a_mission():
    kit = Kit()
    body = kit.letter(phase="executing", packet_ref=packet_ref(PACKET))
    answer = deliver(kit, letter=body)
    assert answer["refusal"]["code"] == "letter_invalid"
    assert kit.mailbox_bytes() == b""


def test_a_repeated_delivery_appends_nothing():
    kit = Kit()
    deliver(kit)
    before = kit.mailbox_bytes()
    again = deliver(kit)
    assert again["ok"], again
    assert again["result"]["posted"]["duplicate"] is True
    assert kit.mailbox_bytes() == before
    assert len(before.splitlines()) == 2
