"""Missions through the host protocol in the browser (issue 6's journey; seed 004 §1–§2, §5c,
§8; SPEC §9): a chain judging → executing → gate → merge_wait posted by an agent, a green gate
that cannot land by itself, the receipt imported by a person's gesture, the landed letter; after
a reload the head and the store version are exactly as left."""

from __future__ import annotations

from e2e.hostpage import HostPage
from e2e.tray_kit import (
    HUMAN,
    Missions,
    candidate,
    card,
    expand_tray,
    letter,
    new_project,
    open_in_ui,
)

BRAIN = "Repo-B1"
MISSION = "msn_00000000d00d"


def test_chain_import_as_gesture_landed_then_reload_keeps_head_and_store_version(
    host: HostPage,
) -> None:
    pid, blocks = new_project(host, BRAIN, [("Receipt importer", "Imports receipts.")])
    m = Missions(host, pid, BRAIN, blocks[0])
    cand = candidate(blocks[0])
    for phase in ("judging", "executing", "gate"):
        m.post(MISSION, phase)
    wait = m.post(MISSION, "merge_wait", receipt_candidate=cand)
    assert (wait["mission_seq"], wait["phase"]) == (4, "merge_wait")

    # gate zero is not evidence: landing before a person imported the receipt is refused
    head_letter = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]["heads"][
        0
    ]["letter"]
    early = {
        **head_letter,
        "mission_seq": 5,
        "prev_letter_id": wait["sha12"],
        "phase": "landed",
        "receipt": {"imported": True, "store_version": 2},
    }
    refused = host.call("mission.post", {"project": pid, "agent_id": "hand-7", "letter": early})
    assert refused["refusal"]["code"] == "letter_invalid"
    assert refused["refusal"]["field"] == "letter.receipt.store_version"

    # the agent cannot import; the person can
    agent = host.call(
        "receipt.import",
        {"project": pid, "candidate": cand, "mission_id": MISSION, "imported_via": HUMAN},
    )
    assert agent["refusal"]["code"] == "human_gesture_required"
    imported = host.ok(
        "receipt.import",
        {"project": pid, "candidate": cand, "mission_id": MISSION, "imported_via": HUMAN},
        human=True,
    )["result"]
    assert imported["store_version"] == 2
    assert (imported["color_before"], imported["color_after"]) == ("grey", "green")

    landed = host.ok("mission.post", {"project": pid, "agent_id": "hand-7", "letter": early})[
        "result"
    ]
    assert (landed["mission_seq"], landed["phase"]) == (5, "landed")
    before_heads = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]
    before_store = host.ok("blocks.get", {"project": pid})["result"]["store"]

    host.reload()
    after_heads = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]
    after_store = host.ok("blocks.get", {"project": pid})["result"]["store"]
    assert after_heads == before_heads
    (head,) = after_heads["heads"]
    assert head["letter_id"] == landed["letter_id"] and head["superseded_count"] == 4
    assert head["letter"]["receipt"] == {"imported": True, "store_version": 2}
    assert after_store == before_store
    assert after_store["store_version"] == 2
    assert after_store["blocks"][0]["color"] == "green"
    assert after_store["receipts"][0]["candidate"] == cand  # byte for byte as the letter held it

    # and the tray shows it as left
    page = host.page
    open_in_ui(host, pid)
    expand_tray(page)
    landed_card = page.locator(f"{card(page, MISSION)}[data-phase='landed']")
    landed_card.wait_for()
    assert landed_card.locator(".card-receipt").inner_text() == "receipt ✓ store v2"
    audit = host.ok("audit.list", {"op": "receipt.import"})["result"]["records"]
    assert [(r["decision"], r["actor"]) for r in audit] == [
        ("admitted", HUMAN),
        ("refused", "page"),
    ]
    host.assert_clean()


TOGETHER = """
async (calls) => Promise.all(calls.map(async ([op, args]) => {
  try {
    return { ok: true, result: (await window.voicebox.host.call(op, args)).result };
  } catch (err) {
    return { ok: false, code: err.code };
  }
}))
"""


def test_posts_sent_the_moment_a_reloaded_host_is_ready_are_answered_right(
    host: HostPage,
) -> None:
    """Issue 18: once ready, the host opens its projects' mailboxes in the background. Calls
    sent at once after ``ready`` — while that warm-up may still be opening the very mailbox
    they need — are answered exactly as on a host with nothing in the background: the next
    letter extends the head, a stale one is refused with the head it missed, every project's
    heads read back as posted."""
    missions = []
    for n in range(3):
        pid, blocks = new_project(host, f"{BRAIN} {n}", [("Receipt importer", "Imports.")])
        m = Missions(host, pid, f"{BRAIN} {n}", blocks[0])
        m.chain(MISSION, ("judging", "executing", "gate"))
        missions.append(m)
    host.reload()
    calls = []
    for m in missions:
        head = m.heads[MISSION]
        nxt = letter(
            mission=MISSION, block=m.block, brain=m.brain, seq=4, prev=head["sha12"], phase="review"
        )
        stale = dict(nxt, mission_seq=3, prev_letter_id="0" * 12)
        calls += [
            ["mission.post", {"project": m.pid, "agent_id": "hand-7", "letter": nxt}],
            ["mission.post", {"project": m.pid, "agent_id": "hand-7", "letter": stale}],
        ]
    answers = host.page.evaluate(TOGETHER, calls)
    for m, posted, refused in zip(missions, answers[0::2], answers[1::2], strict=True):
        assert posted["ok"], posted
        assert (posted["result"]["mission_seq"], posted["result"]["duplicate"]) == (4, False)
        assert refused == {"ok": False, "code": "stale_head"}
        (head,) = host.ok("mailbox.read", {"project": m.pid, "kind": "mission"})["result"]["heads"]
        assert head["letter_id"] == posted["result"]["letter_id"]
        assert head["superseded_count"] == 3
