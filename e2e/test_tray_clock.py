"""The tray's clock turns in place (stop 44; docs/ui.md, "The mission tray"): when a minute
turns, a card's "elapsed" text changes and nothing else is drawn again — the card's buttons
are the same elements, and the one a keyboard user is on keeps the focus.

The tray's time is the host's: each ``tray.read`` answers the host clock's ``now``, and the
page only counts on from it until the next read. Playwright's ``page.clock`` fakes the page's
clock, not the host worker's (the next read would set the tray back to the host's time), so
the test moves the host's clock itself — ``Date.now`` in the host worker, which Python's
``time.time()`` reads under Pyodide — and then lets the tray read as its poll does (an
unforced ``refresh``)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, Worker

from e2e.hostpage import HostPage
from e2e.tray_kit import Missions, candidate, card, expand_tray, new_project, open_in_ui

MISSION = "msn_00000000c10c"
A_MINUTE_ON_MS = 61_000

SHIFT_CLOCK = """(ms) => {
  self.__realNow ??= Date.now.bind(Date);
  Date.now = () => self.__realNow() + ms;
  return Date.now() - self.__realNow();
}"""


def host_worker(page: Page) -> Worker:
    """The dedicated worker that is the host."""
    (worker,) = [w for w in page.workers if w.url.endswith("worker/host.mjs")]
    return worker


def minutes(elapsed: str) -> int:
    """The minutes an "elapsed 2h 1m" text says."""
    found = re.fullmatch(r"elapsed (\d+)h (\d+)m", elapsed)
    assert found, elapsed
    return int(found[1]) * 60 + int(found[2])


def test_a_turning_minute_changes_the_time_text_and_replaces_no_control(host: HostPage) -> None:
    page = host.page
    pid, (block,) = new_project(host, "Clock", [("Importer", "Imports receipts.")])
    m = Missions(host, pid, "Clock", block)
    m.chain(MISSION, ("judging", "executing", "gate"))
    m.post(MISSION, "merge_wait", receipt_candidate=candidate(block))  # started 2 h ago
    open_in_ui(host, pid, "blocks")
    expand_tray(page)
    archive = page.locator(f"{card(page, MISSION)} button[data-key='archive-{MISSION}']")
    archive.wait_for()
    elapsed = page.locator(f"{card(page, MISSION)} .card-elapsed")
    before = elapsed.inner_text()
    buttons = page.locator(f"{card(page, MISSION)} button").element_handles()
    assert len(buttons) == 3  # the block's name, Import this receipt, Archive…
    archive.focus()

    # a minute passes on the host's clock; the tray reads as its poll does
    assert host_worker(page).evaluate(SHIFT_CLOCK, A_MINUTE_ON_MS) >= A_MINUTE_ON_MS
    page.evaluate("() => voicebox.app.tray.refresh()")
    page.wait_for_function(
        "([sel, was]) => document.querySelector(sel).textContent !== was",
        arg=[f"{card(page, MISSION)} .card-elapsed", before],
    )
    assert minutes(elapsed.inner_text()) - minutes(before) in (1, 2)  # (2: a real minute too)
    assert [b.evaluate("(b) => b.isConnected") for b in buttons] == [True, True, True]
    assert page.evaluate("() => document.activeElement?.dataset.key") == f"archive-{MISSION}"
    host.assert_clean()
