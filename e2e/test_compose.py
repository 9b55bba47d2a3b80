"""Compose (issue 7; seed 004 §4; SPEC §9): direct delivery opens the mission with its seq-1
judging letter whose packet_ref is the sha256 of exactly the packet shown; clipboard copies
it, with a visible fallback when the browser refuses; spawn is unavailable with its reason; a
read-only host offers the clipboard only and says why."""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from core.missions.tray import DELIVERED
from e2e.hostpage import HostPage
from e2e.tray_kit import card, expand_tray, go, new_project, open_in_ui, sha256_text, shot

NOTICE = "direct: posted to the agent's inbox — delivery is not execution."


def compose_ready(host: HostPage) -> tuple[str, list[str]]:
    pid, blocks = new_project(
        host, "Repo-B1", [("Receipt importer", "Imports receipts."), ("Mailbox", "Letters.")]
    )
    open_in_ui(host, pid, "compose")
    host.page.wait_for_selector("#packet-ref-value")
    return pid, blocks


def wait_for_packet(host: HostPage, *shows: str) -> str:
    """Wait until the preview shows a packet whose ref the page states and whose text holds
    each of ``shows``; return the text. The fields draft again 250 ms after the last key and
    the preview keeps the last packet until the host answers, so a packet on screen may be an
    earlier field's: what was typed last is waited for, never a fixed time."""
    page = host.page
    page.wait_for_function(
        """(shows) => {
          const ref = document.getElementById('packet-ref')?.textContent ?? '';
          const text = document.getElementById('packet-preview')?.textContent ?? '';
          return ref.startsWith('packet_ref') && shows.every((s) => text.includes(s));
        }""",
        arg=list(shows),
    )
    return page.eval_on_selector("#packet-preview", "e => e.textContent")


def test_direct_posts_the_seq1_judging_letter_naming_the_sha256_of_the_shown_packet(
    host: HostPage,
) -> None:
    pid, blocks = compose_ready(host)
    page = host.page
    page.select_option("#compose-block", blocks[1])
    page.fill("#compose-agent", "hand-7")
    page.fill("#compose-note", "Keep the mailbox append-only.")
    packet = wait_for_packet(host, "> Keep the mailbox append-only.", "addressed to: hand-7")
    assert "> Keep the mailbox append-only." in packet
    assert "addressed to: hand-7" in packet and "- name: Mailbox" in packet
    shown_ref = page.inner_text("#packet-ref-value")
    assert shown_ref == sha256_text(packet)
    assert page.is_checked("#mode-direct")
    assert page.is_disabled("#mode-spawn")
    assert "runner" in page.inner_text("#mode-spawn-reason")
    shot(page, "compose")
    page.click("#compose-send")
    page.wait_for_selector("#direct-notice")
    assert page.inner_text("#direct-notice") == NOTICE
    mission = page.inner_text("#delivered-mission")
    # the preview still shows exactly what was delivered
    assert page.eval_on_selector("#packet-preview", "e => e.textContent") == packet
    expand_tray(page)
    judging = page.locator(card(page, mission))
    judging.wait_for()
    assert judging.get_attribute("data-phase") == "judging"
    assert judging.locator(".card-title").inner_text() == "Mailbox"
    (head,) = host.ok("mailbox.read", {"project": pid, "kind": "mission"})["result"]["heads"]
    assert head["mission_id"] == mission
    assert head["letter"]["mission_seq"] == 1 and head["letter"]["phase"] == "judging"
    assert head["letter"]["packet_ref"] == sha256_text(packet)
    (note,) = host.ok("mailbox.read", {"project": pid, "to": "hand-7"})["result"]["letters"]
    assert note["body"] == packet
    # the card says where the packet is and that it waits (core's words, core.missions.tray)
    status = judging.locator(".card-phase-meaning")
    status.filter(has_text="inbox").wait_for()
    assert status.inner_text() == DELIVERED.format(agent="hand-7")
    shot(page, "compose-delivered")
    page.click("#compose-another")
    page.wait_for_function(
        "(m) => !document.getElementById('packet-preview').textContent.includes(m)", arg=mission
    )
    # the agent's inbox, read from the Environments surface: the packet, as text
    go(page, "environments")
    page.select_option("#inbox-project", pid)
    page.fill("#inbox-agent", "hand-7")
    page.click("#inbox-read")
    page.wait_for_selector("#inbox-letters .inbox-letter")
    assert page.eval_on_selector("#inbox-letters .inbox-body", "e => e.textContent") == packet
    assert page.eval_on_selector("#inbox-letters .inbox-body", "e => e.childElementCount") == 0
    host.assert_clean()


def test_clipboard_copies_the_packet_and_falls_back_to_visible_text_when_refused(
    site_context: BrowserContext,
) -> None:
    site_context.grant_permissions(["clipboard-read", "clipboard-write"])
    host = HostPage(site_context.new_page())
    host.open()
    pid, _ = compose_ready(host)
    page = host.page
    page.check("#mode-clipboard")
    page.wait_for_function(
        "() => document.getElementById('compose-send').textContent === 'Copy the packet'"
    )
    packet = wait_for_packet(host, "Open the mission yourself")
    assert "Open the mission yourself" in packet
    page.click("#compose-send")
    page.wait_for_selector("#compose-status .ok")
    assert page.evaluate("() => navigator.clipboard.readText()") == packet
    assert host.ok("mailbox.read", {"project": pid})["result"]["letters"] == []  # nothing posted

    page.evaluate(
        "() => { navigator.clipboard.writeText = () => Promise.reject(new DOMException('no', 'NotAllowedError')); }"
    )
    page.click("#compose-send")
    page.wait_for_selector("#clipboard-fallback:not([hidden])")
    assert "NotAllowedError" in page.inner_text("#clipboard-fallback")
    assert page.input_value("#clipboard-fallback-text") == packet
    assert page.evaluate("() => document.activeElement.id") == "clipboard-fallback-text"
    host.assert_clean()


def test_a_read_only_host_offers_the_clipboard_only_and_says_why(host: HostPage) -> None:
    page = host.page
    pid, blocks = new_project(host, "Repo-B1", [("Receipt importer", "Imports receipts.")])
    open_in_ui(host, pid, "settings")
    page.check("#setting-read_only")
    page.wait_for_selector("#safe-badge:not([hidden])")
    page.wait_for_selector("#settings-status:has-text('Saved: read_only')")
    assert host.ok("host.info")["result"]["read_only"] is True
    go(page, "compose")
    page.wait_for_selector("#read-only-note")
    assert page.is_disabled("#mode-direct")
    assert page.is_checked("#mode-clipboard")
    assert "read-only (SAFE) mode" in page.inner_text("#mode-direct-reason")
    assert page.inner_text("#compose-send") == "Copy the packet"
    shot(page, "compose-read-only")
    # the switch is kept by the host (HOST_DIR policy.json) across a reload
    host.reload()
    page.wait_for_selector("#safe-badge:not([hidden])")
    refusal = host.call(
        "blocks.candidate_edit",
        {"project": pid, "ops": [{"op": "remove", "block_id": blocks[0]}]},
        human=True,
    )
    assert refusal["refusal"]["code"] == "read-only-mode"
    open_in_ui(host, pid, "settings")
    page.uncheck("#setting-read_only")
    page.click(".dialog-confirm")
    page.wait_for_selector("#safe-badge", state="hidden")
    assert host.ok("host.info")["result"]["read_only"] is False
    host.assert_clean()
