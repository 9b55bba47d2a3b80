"""Layout that holds (issue 17 item 6), measured in headless Chromium through the real UI:
a name as long as the host takes never breaks the nav, the tray's header, a card or a table
row onto a second line (element heights are measured against the same element with a short
name); at 800 px every control of every surface is on screen or inside a box of its own that
scrolls, and nothing covers it; at ≤ 900 px the tray is an overlay drawer, which at 420 px
opens over the page and closes again; a form says the host's own sentence as a person types."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from core.missions.blocks import MAX_NAME_CHARS as BLOCK_NAME_CHARS
from core.paths import MAX_NAME_CHARS
from e2e.hostpage import HostPage
from e2e.site import SiteRouter
from e2e.test_a11y import SURFACES, rich_project, show
from e2e.tray_kit import (
    Missions,
    expand_tray,
    go,
    new_project,
    open_in_ui,
    refresh_tray,
    shot,
)

LONG_PATH = "/".join(["d" * 90, "e" * 90, "f" * 114 + ".txt"])
"""A 300-character path: the longest user string the Files surface shows on one line."""


def collapse_tray(page: Page) -> None:
    """Close the tray (at ≤ 900 px closed is one button, its counts are not shown)."""
    if page.get_attribute("#tray", "data-open") != "false":
        page.click("#tray-toggle")
    page.wait_for_selector("#tray[data-open='false']")


@pytest.fixture
def narrow(browser: Browser, router: SiteRouter) -> Iterator[BrowserContext]:
    """A context of the width each test asks for (set_viewport_size), served like `host`."""
    context = browser.new_context(viewport={"width": 800, "height": 860})
    router.install(context)
    yield context
    context.close()


HEIGHTS = """
() => {
  const h = (sel) => { const n = document.querySelector(sel); return n ? Math.round(n.getBoundingClientRect().height) : -1; };
  const row = document.querySelector('#blocks-table tbody tr');
  return {
    nav: h('.navbar'), bar: h('#project-bar'), trayHead: h('.tray-head'), trayProject: h('.tray-project'),
    card: h('#tray-cards article .card-title'), row: row ? Math.round(row.getBoundingClientRect().height) : -1,
    viewer: h('#viewer-path'),
  };
}
"""


def _measure(host: HostPage, pid: str) -> dict[str, int]:
    page = host.page
    open_in_ui(host, pid, "blocks")
    page.wait_for_selector("#blocks-table tbody tr")
    refresh_tray(page)
    expand_tray(page)
    page.wait_for_selector("#tray-cards article .card-title")
    heights = page.evaluate(HEIGHTS)
    go(page, "files")
    page.wait_for_selector("#file-tree li")
    page.evaluate(
        "(p) => voicebox.app.go('files', { project: voicebox.app.project.id, file: p })", LONG_PATH
    )
    page.wait_for_selector("#viewer-path")
    heights["viewer"] = page.evaluate(HEIGHTS)["viewer"]
    return heights


def _project(host: HostPage, name: str, block: str) -> str:
    pid, (added,) = new_project(host, name, [(block, "Its purpose.")])
    Missions(host, pid, name, added).chain("msn_00000000a001", ("judging",))
    host.ok("file.write", {"project": pid, "path": LONG_PATH}, body=b"x\n", human=True)
    return pid


def test_the_longest_names_leave_nav_tray_card_row_and_path_on_one_line(host: HostPage) -> None:
    long_name = "L" + "long project name " * 20
    long_name = long_name[:MAX_NAME_CHARS]
    long_block = ("block named at length " * 10)[:BLOCK_NAME_CHARS]
    assert len(long_name) == 200 and len(long_block) == 200 and len(LONG_PATH) == 300
    short = _measure(host, _project(host, "Short", "Tiny"))
    long = _measure(host, _project(host, long_name, long_block))
    assert long == short, (long, short)
    page = host.page
    # the full text is there, as the tooltip
    assert page.get_attribute("#open-project-name", "title") == long_name
    assert page.get_attribute("#tray-project-name", "title") == long_name
    shot(page, "layout-long-names")
    host.assert_clean()


REACH = """
() => {
  const out = [];
  const width = document.documentElement.clientWidth;
  const scrolls = (n) => { for (let a = n.parentElement; a && a !== document.body; a = a.parentElement) {
    const s = getComputedStyle(a); if (/(auto|scroll)/.test(s.overflowX + s.overflowY)) return a; } return null; };
  const controls = [...document.querySelectorAll('main a[href], main button, main input, main select, main textarea, main summary, main [tabindex], nav button, #tray button')]
    .filter((e) => e.tabIndex >= 0 && !e.disabled && !e.closest('[hidden]') && !e.closest('dialog') && e.offsetParent !== null
      && !e.classList.contains('visually-hidden-input') && !e.classList.contains('visually-hidden'));
  for (const e of controls) {
    e.scrollIntoView({ block: 'center', inline: 'nearest' });
    const r = e.getBoundingClientRect();
    const x = Math.min(Math.max(r.left + Math.min(r.width / 2, 8), 0), width - 1), y = r.top + r.height / 2;
    const top = document.elementFromPoint(x, y);
    const reached = r.width > 0 && r.left >= -1 && r.left < width && top && (top === e || e.contains(top) || top.contains(e) || top.closest('label')?.control === e);
    if (!reached) out.push({ what: e.outerHTML.slice(0, 120), left: Math.round(r.left), top: top?.outerHTML.slice(0, 80) ?? null, box: Boolean(scrolls(e)) });
  }
  window.scrollTo(0, 0);
  return { out, pageWidth: document.documentElement.scrollWidth, width };
}
"""


def test_at_800_px_every_control_of_every_surface_is_within_reach(narrow: BrowserContext) -> None:
    host = HostPage(narrow.new_page())
    host.open()
    pid, _ = rich_project(host)
    open_in_ui(host, pid)
    page = host.page
    page.set_viewport_size({"width": 800, "height": 860})
    missed = []
    for surface in SURFACES:
        show(host, surface)
        collapse_tray(page)
        seen = page.evaluate(REACH)
        assert seen["pageWidth"] <= seen["width"], (surface, seen["pageWidth"])  # no sideways page
        missed += [(surface, m) for m in seen["out"]]
    assert missed == [], missed
    host.assert_clean()


def test_at_420_px_the_tray_opens_as_a_drawer_over_the_page_and_closes(
    narrow: BrowserContext,
) -> None:
    host = HostPage(narrow.new_page())
    page = host.page
    page.set_viewport_size({"width": 420, "height": 800})
    host.open()
    pid, _ = rich_project(host)
    open_in_ui(host, pid, "blocks")
    page.wait_for_selector("#blocks-table")
    collapse_tray(page)
    main_before = page.evaluate(
        "() => document.querySelector('main').getBoundingClientRect().width"
    )
    expand_tray(page)
    drawer = page.evaluate(
        """() => { const t = document.getElementById('tray').getBoundingClientRect();
        const b = getComputedStyle(document.getElementById('tray-backdrop'));
        return { left: t.left, right: t.right, width: t.width, backdrop: b.display,
          main: document.querySelector('main').getBoundingClientRect().width,
          z: Number(getComputedStyle(document.getElementById('tray')).zIndex) }; }"""
    )
    assert drawer["right"] <= 420 and drawer["left"] > 0 and drawer["width"] <= 420 - 32
    assert drawer["backdrop"] == "block" and drawer["z"] >= 20
    assert drawer["main"] == main_before  # over the page: the page keeps its width
    shot(page, "drawer-420-open")
    page.keyboard.press("Escape")
    page.wait_for_selector("#tray[data-open='false']")
    backdrop = "() => getComputedStyle(document.getElementById('tray-backdrop')).display"
    assert page.evaluate(backdrop) == "none"
    expand_tray(page)
    page.mouse.click(20, 400)  # the backdrop, left of the drawer
    page.wait_for_selector("#tray[data-open='false']")
    host.assert_clean()


def test_a_form_says_the_hosts_own_sentence_as_a_person_types(host: HostPage) -> None:
    page = host.page
    pid, _ = rich_project(host)
    open_in_ui(host, pid, "compose")
    page.wait_for_selector("#packet-ref-value")
    page.fill("#compose-agent", "")
    page.type("#compose-agent", "-bad agent")
    said = page.text_content("#compose-agent-rule")
    refusal = host.refused(
        "compose.packet",
        {"project": pid, "block_id": "sk_x", "to": "-bad agent"},
    )
    assert said and said.rstrip(".") in refusal["message"], (said, refusal)
    assert "args." not in said and "^" not in said
    assert page.get_attribute("#compose-agent", "aria-invalid") == "true"
    page.fill("#compose-agent", "hand-2")
    page.dispatch_event("#compose-agent", "input")
    assert page.text_content("#compose-agent-rule") == ""
    assert page.get_attribute("#compose-agent", "aria-invalid") is None
    host.assert_clean()


def test_a_refusal_is_seen_where_the_person_is_not_only_at_the_pages_top(
    host: HostPage,
) -> None:
    """The alert region sticks to the window's top: a form down the page that is refused shows
    its sentence on screen, not above the fold the person scrolled away from (found by trying,
    stop 45: a remote project's Command…, refused, changed nothing in view). Here: a message to
    an agent that holds a provider key this host keeps (``sanitizer_refused``, never sent)."""
    page = host.page
    key = "sk-ant-api03-" + "Zq9" * 20
    host.ok(
        "keys.set",
        {"provider": "anthropic", "variable": "ANTHROPIC_API_KEY", "value": key},
        human=True,
    )
    page.set_viewport_size({"width": 1280, "height": 360})
    page.click("nav >> text=Environments")
    page.wait_for_selector("#contact-form")
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    page.fill("#contact-agent", "hand-1")
    page.fill("#contact-text", f"use {key}")
    page.click("#contact-form button[type=submit]")
    alert = page.locator("#alerts .alert-error", has_text="Sending the message")
    alert.wait_for()
    assert "sanitizer_refused" in (alert.text_content() or "")
    assert key not in (alert.text_content() or "")
    assert page.evaluate("() => window.scrollY") > 0  # the person is still down the page
    box = alert.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 360, box
    assert host.ok("inbox.read")["result"]["messages"] == []
    page.click("#alerts .alert-error button:text-is('Dismiss')")
    assert page.locator("#alerts .alert").count() == 0
    host.assert_clean()
