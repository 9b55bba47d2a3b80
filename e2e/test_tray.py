"""The mission tray journeys (issue 7; seed 004 §3, §1h, F2.5d; SPEC §9): failures pinned across
reloads until a person dismisses them, stalled heads hidden behind the honest confirm and back
when they move, a receipt imported from the tray lands the mission with its provenance, the
same import without a gesture is refused with the mailbox byte-identical, the archive confirm
states both boundaries, and the collapsed strip counts the heads."""

from __future__ import annotations

import re

from e2e.hostpage import HostPage
from e2e.tray_kit import (
    HUMAN,
    Missions,
    ago,
    candidate,
    card,
    collapse_tray,
    expand_tray,
    go,
    mailbox_files,
    new_project,
    open_in_ui,
    refresh_tray,
    shot,
)

BRAIN = "Repo-B1"
M_FAIL = "msn_00000000fa11"
M_RUN = "msn_000000000e0e"
M_STALE = "msn_0000000057a1"
M_WAIT = "msn_00000000a1a1"
M_LAND = "msn_000000001a1d"


def setup(host: HostPage) -> tuple[str, list[str], Missions]:
    pid, blocks = new_project(
        host,
        BRAIN,
        [("Receipt importer", "Imports receipts into the store."), ("Mailbox", "Letters.")],
    )
    return pid, blocks, Missions(host, pid, BRAIN, blocks[0])


def confirm(page, dialog_id: str) -> None:
    page.wait_for_selector(f"#{dialog_id}[open]")
    page.click(f"#{dialog_id} .dialog-confirm")
    page.wait_for_selector(f"#{dialog_id}", state="detached")


def test_failed_stays_pinned_on_top_across_reload_until_dismissed(host: HostPage) -> None:
    pid, _, m = setup(host)
    m.chain(
        M_FAIL,
        ("judging", "executing", "failed"),
        verdict={"decision": "REJECT", "gist": "the importer drops the window"},
    )
    m.chain(M_RUN, ("judging", "executing"))  # moved last: without the pin it would be first
    page = host.page
    open_in_ui(host, pid)
    expand_tray(page)
    page.wait_for_selector(card(page, M_RUN))
    order = page.eval_on_selector_all(
        "#tray-cards article", "els => els.map(e => e.dataset.mission)"
    )
    assert order == [M_FAIL, M_RUN]
    first = page.locator(card(page, M_FAIL))
    assert "pinned" in (first.get_attribute("class") or "")
    assert first.locator(".card-verdict").inner_text() == "REJECT — the importer drops the window"

    host.reload()
    open_in_ui(host, pid)
    page.wait_for_selector(card(page, M_RUN))
    order = page.eval_on_selector_all(
        "#tray-cards article", "els => els.map(e => e.dataset.mission)"
    )
    assert order[0] == M_FAIL

    before = mailbox_files(page, pid)
    page.click(f"{card(page, M_FAIL)} button:has-text('Dismiss')")
    page.wait_for_selector("#dismiss-dialog[open]")
    assert "letters stay in the mailbox" in page.inner_text("#dismiss-dialog")
    confirm(page, "dismiss-dialog")
    page.wait_for_selector(card(page, M_FAIL), state="detached")
    assert page.inner_text("#tray-hidden summary") == "1 hidden"
    assert mailbox_files(page, pid) == before  # presentation only: letters untouched

    host.reload()
    open_in_ui(host, pid)
    page.wait_for_selector(card(page, M_RUN))
    assert page.locator(card(page, M_FAIL)).count() == 0
    assert page.inner_text("#tray-counts li[data-phase='failed'] .count-n") == "1"
    audit = host.ok("audit.list", {"op": "tray.dismiss"})["result"]["records"]
    assert audit[0]["actor"] == HUMAN and audit[0]["details"]["reason"] == "failed"
    host.assert_clean()


def test_stale_executing_head_is_dismissible_with_the_confirm_and_back_when_merge_wait_arrives(
    host: HostPage,
) -> None:
    pid, blocks, m = setup(host)
    old = ago(hours=30)
    m.post(M_STALE, "judging", started=old, updated=old)
    m.post(M_STALE, "executing", started=old, updated=old)
    m.chain(M_RUN, ("judging", "executing"))  # fresh: no dismiss offered
    page = host.page
    open_in_ui(host, pid)
    expand_tray(page)
    stale = page.locator(card(page, M_STALE))
    stale.wait_for()
    assert re.match(r"No movement for (30|29)h", stale.locator(".card-stagnant").inner_text())
    assert page.locator(f"{card(page, M_RUN)} button:has-text('Dismiss')").count() == 0
    stale.locator("button:has-text('Dismiss')").click()
    page.wait_for_selector("#dismiss-dialog[open]")
    text = page.inner_text("#dismiss-dialog")
    assert "The letter itself stays in the mailbox" in text
    assert "not part of this version" in text
    assert "shows again" in text
    # the phases by the words the tray shows (core's PHASE_LABELS), never their raw ids
    assert "a stalled Opened or Working mission" in text
    assert "(to Ready to land or Landed, say)" in text
    assert not re.search(r"judging|executing|merge_wait", text), text
    shot(page, "tray-dismiss-confirm")
    confirm(page, "dismiss-dialog")
    page.wait_for_selector(card(page, M_STALE), state="detached")

    # the head moved: a dismissal names the head it hid, so the mission is back at once
    m.post(M_STALE, "gate")
    refresh_tray(page)
    page.wait_for_selector(f"{card(page, M_STALE)}[data-phase='gate']")
    # and it follows the next head (the card on screen may be a poll's older read a moment)
    m.post(M_STALE, "merge_wait", receipt_candidate=candidate(blocks[0]))
    refresh_tray(page)
    page.wait_for_selector(f"{card(page, M_STALE)}[data-phase='merge_wait']")
    assert page.locator("#tray-hidden").count() == 0
    host.assert_clean()


def test_import_from_the_tray_lands_it_and_shows_the_receipt_and_provenance(
    host: HostPage,
) -> None:
    pid, blocks, m = setup(host)
    packet = "sha256:" + "c" * 64
    m.post(M_LAND, "judging", packet_ref=packet)
    for phase in ("executing", "gate", "review"):
        m.post(M_LAND, phase)
    m.post(M_LAND, "merge_wait", receipt_candidate=candidate(blocks[0]))
    page = host.page
    open_in_ui(host, pid, "blocks")
    expand_tray(page)
    page.wait_for_selector("#tray-bell")
    assert page.inner_text("#tray-bell") == "1 waiting for a receipt import"
    wait = page.locator(card(page, M_LAND))
    assert wait.get_attribute("data-phase") == "merge_wait"
    assert wait.locator(".card-gate").inner_text() == "pytest -q · exit 0"
    wait.locator("button:has-text('Import this receipt')").click()
    page.wait_for_selector("#import-dialog[open]")
    dialog = page.inner_text("#import-dialog")
    assert blocks[0] in dialog and "boundary v1, contract v1" in dialog
    assert "sha256:" + "b" * 64 in dialog
    shot(page, "tray-import-confirm")
    confirm(page, "import-dialog")
    landed = page.locator(f"{card(page, M_LAND)}[data-phase='landed']")
    landed.wait_for()
    assert landed.locator(".card-receipt").inner_text() == "receipt ✓ store v2"
    # the Blocks surface on screen follows: the block is green at store v2
    page.wait_for_selector("#blocks-table tr[data-block] .colour-word:text-is('green')")
    landed.locator("button:has-text('Provenance')").click()
    chain = page.locator(f"#prov-{M_LAND}")
    chain.locator("li[data-step='receipt']").wait_for()
    assert packet in chain.locator("li[data-step='packet']").inner_text()
    assert "build-1" in chain.locator("li[data-step='runner']").inner_text()
    assert "sha256:" + "a" * 64 in chain.locator("li[data-step='gate']").inner_text()
    assert "✓ store v2" in chain.locator("li[data-step='receipt']").inner_text()
    assert chain.locator(".prov-letters").inner_text() == (
        "Letters: Opened → Working → Checking → In review → Ready to land → Landed"
    )
    shot(page, "tray-landed-provenance")
    head = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]["heads"][0]
    assert head["letter"]["phase"] == "landed" and head["agent_id"] == "operator"
    assert head["letter"]["receipt"] == {"imported": True, "store_version": 2}
    host.assert_clean()


def test_the_same_import_without_the_gesture_is_refused_and_the_mailbox_is_byte_identical(
    host: HostPage,
) -> None:
    pid, blocks, m = setup(host)
    cand = candidate(blocks[0])
    m.chain(M_WAIT, ("judging", "executing", "gate", "merge_wait"), receipt_candidate=cand)
    page = host.page
    before = mailbox_files(page, pid)
    assert any(k.startswith("mailbox/") for k in before) and "skeleton.json" in before
    args = {"project": pid, "candidate": cand, "mission_id": M_WAIT}
    no_origin = host.call("receipt.import", args)  # no origin, no imported_via
    assert no_origin["refusal"]["code"] == "human_gesture_required"
    forged = host.call("receipt.import", {**args, "imported_via": HUMAN})  # token, no gesture
    assert forged["refusal"]["code"] == "human_gesture_required"
    assert forged["refusal"]["field"] == "origin"
    assert mailbox_files(page, pid) == before
    assert host.ok("blocks.get", {"project": pid})["result"]["store"]["store_version"] == 1
    # and the person's gesture from the tray still lands it
    open_in_ui(host, pid)
    expand_tray(page)
    page.click(f"{card(page, M_WAIT)} button:has-text('Import this receipt')")
    confirm(page, "import-dialog")
    page.wait_for_selector(f"{card(page, M_WAIT)}[data-phase='landed']")
    refused = host.ok("audit.list", {"op": "receipt.import", "decision": "refused"})["result"]
    assert len(refused["records"]) == 2
    host.assert_clean()


def test_archive_confirm_fetches_a_fresh_snapshot_and_states_both_boundaries(
    host: HostPage,
) -> None:
    pid, blocks, m = setup(host)
    m.chain("msn_0000000000c1", ("judging", "merge_wait"), receipt_candidate=candidate(blocks[0]))
    m.chain("msn_0000000000c2", ("judging", "merge_wait"), receipt_candidate=candidate(blocks[1]))
    page = host.page
    open_in_ui(host, pid)
    expand_tray(page)
    # block 2's purpose moves twice after the tray showed the card: the snapshot is fresh
    page.wait_for_selector(card(page, "msn_0000000000c2"))
    for purpose in ("Letters and notes.", "Letters, notes and heads."):
        host.ok(
            "blocks.candidate_edit",
            {
                "project": pid,
                "ops": [{"op": "repurpose", "block_id": blocks[1], "purpose": purpose}],
            },
            human=True,
        )
    page.click(f"{card(page, 'msn_0000000000c2')} button:has-text('Archive')")
    page.wait_for_selector("#archive-dialog[open]")
    assert page.inner_text("#archive-boundaries") == ("Proved at boundary v1 — the block is at v3.")
    assert "receipt-scope-invalid" in page.inner_text("#archive-would-not")
    page.click("#archive-dialog .dialog-cancel")
    page.wait_for_selector("#archive-dialog", state="detached")

    page.click(f"{card(page, 'msn_0000000000c1')} button:has-text('Archive')")
    page.wait_for_selector("#archive-dialog[open]")
    assert page.inner_text("#archive-boundaries") == (
        "Proved at boundary v1 — the block is still at v1."
    )
    assert page.inner_text("#archive-still-imports").startswith(
        "This receipt would still import right now."
    )
    assert page.inner_text("#archive-dialog .dialog-confirm") == "Archive anyway"
    shot(page, "tray-archive-confirm")
    confirm(page, "archive-dialog")
    page.wait_for_selector(f"{card(page, 'msn_0000000000c1')}[data-phase='archived']")
    heads = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]["heads"]
    phases = {h["mission_id"]: h["letter"]["phase"] for h in heads}
    assert phases == {"msn_0000000000c1": "archived", "msn_0000000000c2": "merge_wait"}
    assert page.inner_text("#tray-counts li[data-phase='merge_wait'] .count-n") == "1"
    archived = host.ok("audit.list", {"op": "mission.post"})["result"]["records"][0]
    assert archived["actor"] == HUMAN and archived["details"]["phase"] == "archived"
    host.assert_clean()


def test_the_collapsed_strip_counts_every_head_by_phase(host: HostPage) -> None:
    pid, _, m = setup(host)
    routes = {
        "msn_000000000001": ("judging",),
        "msn_000000000002": ("judging",),
        "msn_000000000003": ("judging", "executing"),
        "msn_000000000004": ("judging", "executing", "gate"),
        "msn_000000000005": ("judging", "review"),
        "msn_000000000006": ("judging", "merge_wait"),
        "msn_000000000007": ("judging", "failed"),
        "msn_000000000008": ("judging", "failed"),
        "msn_000000000009": ("judging", "failed"),
    }
    for mission, phases in routes.items():
        m.chain(mission, phases)
    page = host.page
    open_in_ui(host, pid)
    refresh_tray(page)
    collapse_tray(page)
    page.wait_for_selector("#tray-counts li[data-phase='failed'] .count-n:text-is('3')")
    shown = {
        li.get_attribute("data-phase"): int(li.locator(".count-n").inner_text())
        for li in page.locator("#tray-counts li").all()
    }
    heads = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]["heads"]
    expected = dict.fromkeys(
        ["judging", "executing", "gate", "review", "merge_wait", "landed", "failed", "archived"], 0
    )
    for h in heads:
        expected[h["letter"]["phase"]] += 1
    assert shown == expected
    assert shown["failed"] == 3 and shown["judging"] == 2
    assert list(shown) == list(expected)  # the seed's order
    shot(page, "tray-collapsed")
    # collapsed is remembered by the host across a reload: the strip draws at the click, the
    # host stores it a moment later (tray.layout), so the reload waits for the host to say so
    for _ in range(100):
        if not host.ok("tray.read", {"project": pid})["result"]["tray_open"]:
            break
        page.wait_for_timeout(100)  # a poll's pace, bounded by the 100 reads
    assert host.ok("tray.read", {"project": pid})["result"]["tray_open"] is False
    host.reload()
    open_in_ui(host, pid)
    page.wait_for_selector("#tray[data-open='false'] #tray-counts li[data-phase='failed']")
    host.assert_clean()


def test_empty_and_no_project_states_say_what_to_do(host: HostPage) -> None:
    page = host.page
    expand_tray(page)
    assert page.inner_text("#tray-body .tray-empty p") == "Open a project to see its missions."
    pid, _, _ = setup(host)
    open_in_ui(host, pid)
    page.wait_for_selector("#tray-empty")
    assert page.inner_text("#tray-empty p") == "no missions yet — point an agent at a block"
    page.click("#tray-empty button")
    page.wait_for_selector("#packet-preview")
    assert page.get_attribute("#surfaces button[data-surface='compose']", "aria-current") == "page"
    go(page, "projects")
    host.assert_clean()
