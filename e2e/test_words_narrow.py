"""The words a newcomer needs and narrow screens (issue 33 items 7 and 8), through the real UI
in headless Chromium.

Item 7: the tray's phase chips and cards, Compose's seat and capability, the Blocks table show
plain words from core (contract.gen.mjs), the raw id in the tooltip; a first-run guide says
what the product is for and where to start, closes, stays closed after a reload (the host keeps
it, not the page) and comes back from Help; Help (button or F1) holds the glossary and the
keyboard shortcuts; axe finds nothing serious in the guide and in Help, light and dark, at
1280 and 390 px.

Item 8: at 360 and 390 px, light and dark, every surface fits the screen (no sideways page),
the surface tabs are all on screen whole, the open project's name is readable, each table row's
actions are on screen without scrolling anything, and every control is within reach. A
screenshot of every surface at 360 px (light and dark) goes to docs/screenshots/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from core.missions.letters import PHASE_LABELS, PHASES
from core.missions.words import CAPABILITY_LABELS, GUIDE, SEAT_LABELS, TERMS
from e2e.hostpage import HostPage
from e2e.site import SiteRouter
from e2e.test_a11y import SURFACES, rich_project, show
from e2e.test_layout import REACH, collapse_tray
from e2e.tray_kit import axe_serious, card, expand_tray, open_in_ui, refresh_tray, shot


@pytest.fixture
def sized(browser: Browser, router: SiteRouter) -> Iterator[dict]:
    """Open contexts of a given width and colour scheme (closed at the end)."""
    opened: list[BrowserContext] = []

    def make(width: int, scheme: str = "light") -> HostPage:
        context = browser.new_context(viewport={"width": width, "height": 844}, color_scheme=scheme)
        router.install(context)
        opened.append(context)
        host = HostPage(context.new_page())
        host.open()
        return host

    yield {"make": make}
    for context in opened:
        context.close()


def guide_shown(page: Page) -> None:
    page.wait_for_selector("#guide:not([hidden]) #guide-title")


STATUS_FIT = """() => {
  const status = document.getElementById('status');
  const r = status.getBoundingClientRect();
  return { text: status.textContent, title: status.title, cut: status.scrollWidth > status.clientWidth + 0.5,
    left: r.left, right: r.right, width: document.documentElement.clientWidth };
}"""


def test_at_390_px_the_status_line_shows_every_word_of_ready(sized: dict) -> None:
    """Stop 44's tryout: at 390 px the status line ("Ready — Python …, Pyodide …, core …")
    was cut at the window's edge; it wraps on narrow screens, whole and on screen."""
    host = sized["make"](390)
    fit = host.page.evaluate(STATUS_FIT)
    assert fit["text"].startswith("Ready — Python ") and ", core " in fit["text"], fit
    assert fit["title"] == fit["text"], fit
    assert not fit["cut"], fit
    assert fit["left"] >= -0.5 and fit["right"] <= fit["width"] + 0.5, fit
    host.assert_clean()


READY_TOPS = """() => {
  if (window.top !== window) return;
  window.__readyTops = [];
  const watch = () => {
    const status = document.getElementById('status');
    const main = document.getElementById('main');
    const boot = document.getElementById('boot');
    if (status && main && boot) {
      const seen = [status.dataset.state, boot.hidden, Math.round(status.getBoundingClientRect().height),
        Math.round(main.getBoundingClientRect().top)];
      if (JSON.stringify(window.__readyTops.at(-1)) !== JSON.stringify(seen)) window.__readyTops.push(seen);
    }
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}"""
"""Frame by frame from the document's start: the status's state, whether the boot region is
hidden, the status line's height and the main area's top (px)."""


def test_at_390_px_nothing_under_the_status_line_moves_when_ready_comes(
    browser: Browser, router: SiteRouter
) -> None:
    """Stop 45's tryout: at 390 px the status line went from one line ("Loading projects…") to
    two at Ready, and pushed the surface under it down. It keeps two lines from the start."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        router.install(context)
        context.add_init_script(f"({READY_TOPS})()")
        host = HostPage(context.new_page())
        host.open()
        page = host.page
        page.wait_for_selector("#new-project-name")
        page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        seen = page.evaluate("() => window.__readyTops")
        assert len({height for _, _, height, _ in seen}) == 1, seen  # booting to Ready: one height
        before = [top for state, hidden, _, top in seen if state == "booting" and hidden]
        after = [top for state, _, _, top in seen if state == "ready"]
        assert before and after, seen  # the surface was loading under "Loading …", then Ready
        assert before[-1] == after[0] == after[-1], seen
        shot(page, "narrow-390-ready")
        host.assert_clean()
    finally:
        context.close()


# --------------------------------------------------------------------------- item 7: words


def test_phases_seats_and_capabilities_show_plain_words_with_the_raw_id_in_the_tooltip(
    host: HostPage,
) -> None:
    page = host.page
    pid, _ = rich_project(host)
    open_in_ui(host, pid, "compose")
    refresh_tray(page)
    expand_tray(page)
    page.wait_for_selector("#tray-cards article")
    for phase in PHASES:
        chip = page.locator(f"#tray-counts li[data-phase='{phase}']")
        assert chip.locator(".count-phase").inner_text() == PHASE_LABELS[phase]
        assert chip.get_attribute("title").startswith(phase)
    badge = page.locator(f"{card(page, 'msn_0000000000e4')} .phase-badge")
    assert badge.inner_text() == PHASE_LABELS["merge_wait"]
    assert badge.get_attribute("title").startswith("merge_wait")
    assert "merge_wait" not in page.inner_text("#tray-cards")
    seat = page.locator(f"{card(page, 'msn_0000000000e4')} .card-seat .seat")
    assert seat.inner_text() in SEAT_LABELS.values()
    assert seat.get_attribute("title").removeprefix("seat: ") in SEAT_LABELS
    page.wait_for_selector("#compose-seat")
    options = page.eval_on_selector_all(
        "#compose-seat option, #compose-capability option", "os => os.map(o => [o.value, o.text])"
    )
    words = {**SEAT_LABELS, **CAPABILITY_LABELS}
    assert options and all(text.startswith(words[value]) for value, text in options)
    label = page.locator("label[for='compose-seat'] .term")
    assert label.inner_text() == TERMS["seat"].label and "seat" in label.get_attribute("title")
    page.click("#surfaces button[data-surface='blocks']")
    page.wait_for_selector("#blocks-table")
    header = page.locator("#blocks-table th .term[data-term='boundary']")
    assert header.inner_text() == TERMS["boundary"].label
    assert header.get_attribute("title").startswith("boundary")
    host.assert_clean()


def test_the_first_run_guide_closes_stays_closed_after_a_reload_and_help_brings_it_back(
    host: HostPage,
) -> None:
    page = host.page
    guide_shown(page)
    steps = page.locator("#guide .guide-step")
    assert steps.all_inner_texts() == [s.title for s in GUIDE]
    shot(page, "guide-first-run")
    page.click("#guide-step-1")  # where to start: the step opens its surface
    page.wait_for_selector("#project-table, #new-project-name")
    page.click("#guide-close")
    page.wait_for_selector("#guide", state="hidden")
    assert host.ok("help.guide", {})["result"]["dismissed"] is True  # kept by the host
    host.reload()
    page.wait_for_function("() => voicebox.app.help.answered")  # the host said: closed
    assert page.locator("#guide").is_hidden()
    # Help, by keyboard: F1, then the glossary and the shortcuts, then the guide again
    page.keyboard.press("F1")
    page.wait_for_selector("#help-dialog[open]")
    glossary = page.inner_text("#glossary")
    for term in ("block", "seat", "capability", "ratify", "boundary", "merge_wait"):
        assert page.locator(f"#glossary dt[data-term='{term}']").count() == 1, term
    assert TERMS["ratify"].meaning in glossary
    assert "Ctrl/⌘ + S" in page.inner_text("#shortcuts")
    shot(page, "help-dialog")
    page.click("#guide-reopen")
    guide_shown(page)
    assert host.ok("help.guide", {})["result"]["dismissed"] is False
    host.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_the_guide_and_help_are_axe_clean(sized: dict, width: int, scheme: str) -> None:
    host = sized["make"](width, scheme)
    page = host.page
    guide_shown(page)
    found = axe_serious(page, f"{scheme} {width}: guide")
    page.click("#help-open")
    page.wait_for_selector("#help-dialog[open]")
    found += axe_serious(page, f"{scheme} {width}: help")
    assert found == [], found
    page.keyboard.press("Escape")
    page.wait_for_selector("#help-dialog", state="detached")
    host.assert_clean()


# --------------------------------------------------------------------------- item 8: narrow

FIT = """
() => {
  const width = document.documentElement.clientWidth;
  const whole = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.left >= -0.5 && r.right <= width + 0.5; };
  const tabs = [...document.querySelectorAll('#surfaces button')].filter((b) => !whole(b)).map((b) => b.dataset.surface);
  const name = document.getElementById('open-project-name');
  const actions = [...document.querySelectorAll('main td.row-actions button, main td.row-actions label')]
    .filter((b) => b.offsetParent !== null && !whole(b)).map((b) => b.getAttribute('aria-label') || b.textContent);
  return { width, page: document.documentElement.scrollWidth, tabs, actions,
    name: name ? { shown: name.clientWidth, needs: name.scrollWidth } : null };
}
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [360, 390])
def test_at_360_and_390_px_every_surface_fits_with_its_tabs_name_and_row_actions_on_screen(
    sized: dict, width: int, scheme: str
) -> None:
    host = sized["make"](width, scheme)
    page = host.page
    pid, _ = rich_project(host)
    open_in_ui(host, pid)
    host.ok("help.guide", {"dismissed": True})
    page.evaluate("() => voicebox.app.help.draw(false)")
    problems = []
    for surface in SURFACES:
        show(host, surface)
        collapse_tray(page)
        fit = page.evaluate(FIT)
        if fit["page"] > fit["width"]:
            problems.append((surface, "sideways page", fit["page"]))
        if fit["tabs"]:
            problems.append((surface, "tabs cut", fit["tabs"]))
        if fit["actions"]:
            problems.append((surface, "row actions off screen", fit["actions"][:3]))
        if fit["name"] and fit["name"]["shown"] < fit["name"]["needs"]:
            problems.append((surface, "project name cut", fit["name"]))
        reach = page.evaluate(REACH)
        problems += [(surface, "out of reach", m) for m in reach["out"]]
        if width == 360:
            shot(page, f"{'dark-' if scheme == 'dark' else ''}narrow-360-{surface}")
    assert problems == [], problems
    if width == 390:
        found = []
        for surface in ("projects", "audit", "blocks"):
            show(host, surface)
            collapse_tray(page)
            found += axe_serious(page, f"{scheme} 390: {surface}")
        assert found == [], found
    host.assert_clean()
