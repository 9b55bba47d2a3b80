"""Accessibility (issue 7; SPEC §11): axe-core, run inside the page with Trusted Types on,
finds no serious or critical violation on any surface, with the tray collapsed and expanded and
with each dialog open; every control is reachable by Tab, and the whole journey — create a
project, add a block, deliver a packet, import a receipt, read its provenance, hide a failed
mission, collapse the tray, switch SAFE mode, verify the audit — works with keyboard.press
alone. The run saves a screenshot of every surface into docs/screenshots/."""

from __future__ import annotations

from playwright.sync_api import Browser, Page

from e2e.hostpage import HostPage
from e2e.site import SiteRouter
from e2e.tray_kit import (
    Missions,
    ago,
    axe_serious,
    candidate,
    card,
    collapse_tray,
    expand_tray,
    go,
    new_project,
    open_in_ui,
    refresh_tray,
    shot,
)

BRAIN = "Repo-B1"
SURFACES = [
    "projects",
    "files",
    "blocks",
    "compose",
    "tools",
    "plugins",
    "environments",
    "audit",
    "settings",
]
READY = {
    "projects": "#project-table",
    "files": "#file-tree li",
    "blocks": "#blocks-table",
    "compose": "#packet-ref-value",
    "tools": "#tool-table",
    "plugins": "#plugin-file",
    "environments": "#new-env-name",
    "audit": "#audit-rows tr[data-seq]",
    "settings": "#setting-read_only",
}


def rich_project(host: HostPage) -> tuple[str, list[str]]:
    """A project as a person has it after a day's work: blocks, files, missions in every state."""
    pid, blocks = new_project(
        host,
        BRAIN,
        [
            ("Receipt importer", "Imports receipts into the block store."),
            ("Mailbox", "Append-only letters with content ids."),
            ("Tray", "Shows mission heads."),
        ],
    )
    host.ok("project.create", {"name": "Scratch"})
    for path, text in (("README.md", "# Repo-B1\n"), ("src/importer.py", "def run():\n    pass\n")):
        host.ok("file.write", {"project": pid, "path": path}, text.encode())
    m = Missions(host, pid, BRAIN, blocks[0])
    m.chain("msn_0000000000e1", ("judging", "executing"), block=blocks[1])
    old = ago(hours=31)
    m.post("msn_0000000000e2", "judging", started=old, updated=old, block=blocks[2])
    m.post("msn_0000000000e2", "executing", started=old, updated=old, block=blocks[2])
    m.chain(
        "msn_0000000000e3",
        ("judging", "executing", "failed"),
        verdict={"decision": "REJECT", "gist": "the gate could not reach the store"},
        block=blocks[1],
    )
    cand = candidate(blocks[0])
    m.chain(
        "msn_0000000000e4", ("judging", "executing", "gate", "merge_wait"), receipt_candidate=cand
    )
    cand5 = candidate(blocks[2])
    m.chain(
        "msn_0000000000e5",
        ("judging", "executing", "gate", "merge_wait"),
        receipt_candidate=cand5,
        block=blocks[2],
        verdict={"decision": "APPROVE", "gist": "ready for the receipt"},
    )
    imported = host.ok(
        "receipt.import",
        {
            "project": pid,
            "candidate": cand5,
            "mission_id": "msn_0000000000e5",
            "imported_via": "human-ui",
        },
        human=True,
    )["result"]
    landed = host.ok(
        "tray.next_letter",
        {
            "project": pid,
            "mission_id": "msn_0000000000e5",
            "phase": "landed",
            "store_version": imported["store_version"],
        },
    )["result"]["letter"]
    host.ok("mission.post", {"project": pid, "agent_id": "operator", "letter": landed})
    return pid, blocks


def show(host: HostPage, surface: str) -> None:
    page = host.page
    go(page, surface)
    page.wait_for_selector(READY[surface])
    page.wait_for_timeout(150)


def _axe_everywhere(host: HostPage, scheme: str) -> list[dict]:
    """axe on the boot page, on every surface with the tray expanded and collapsed, on the
    landed card's provenance and on each tray dialog; a screenshot of every surface."""
    page = host.page
    prefix = "" if scheme == "light" else "dark-"
    page.wait_for_selector("#guide:not([hidden]) #guide-close")  # the first-run guide, checked too
    found = axe_serious(page, f"{scheme}: boot: projects, no project")
    page.click("#guide-close")  # then closed, so the surfaces' screenshots show the surfaces
    page.wait_for_selector("#guide", state="hidden")
    pid, _ = rich_project(host)
    open_in_ui(host, pid)
    refresh_tray(page)
    for surface in SURFACES:
        show(host, surface)
        expand_tray(page)
        page.wait_for_selector("#tray-cards article")
        found += axe_serious(page, f"{scheme}: {surface}, tray expanded")
        shot(page, f"{prefix}surface-{surface}")
        collapse_tray(page)
        found += axe_serious(page, f"{scheme}: {surface}, tray collapsed")
    expand_tray(page)
    # the landed card's provenance, and each dialog the tray opens
    page.click(f"{card(page, 'msn_0000000000e5')} button:has-text('Provenance')")
    page.wait_for_selector("#prov-msn_0000000000e5 li[data-step='receipt']")
    found += axe_serious(page, "tray with provenance")
    for button, dialog in (
        ("Import this receipt", "import-dialog"),
        ("Archive", "archive-dialog"),
    ):
        page.click(f"{card(page, 'msn_0000000000e4')} button:has-text('{button}')")
        page.wait_for_selector(f"#{dialog}[open]")
        found += axe_serious(page, f"dialog {dialog}")
        page.keyboard.press("Escape")
        page.wait_for_selector(f"#{dialog}", state="detached")
    page.click(f"{card(page, 'msn_0000000000e3')} button:has-text('Dismiss')")
    page.wait_for_selector("#dismiss-dialog[open]")
    found += axe_serious(page, "dialog dismiss")
    page.keyboard.press("Escape")
    return found


def test_axe_finds_no_serious_violation_on_any_surface_tray_collapsed_and_expanded(
    host: HostPage,
) -> None:
    found = _axe_everywhere(host, "light")
    assert found == [], found
    host.assert_clean()


DARK_BACKGROUND = "rgb(15, 18, 22)"
"""--bg of the dark palette (page/styles.css): proof the dark theme is the one axe checked."""


def test_axe_finds_no_serious_violation_on_any_surface_in_the_dark_theme(
    browser: Browser, router: SiteRouter
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="dark")
    router.install(context)
    try:
        host = HostPage(context.new_page())
        host.open()
        background = "() => getComputedStyle(document.documentElement).backgroundColor"
        assert host.page.evaluate(background) == DARK_BACKGROUND
        found = _axe_everywhere(host, "dark")
        assert found == [], found
        host.assert_clean()
    finally:
        context.close()


def focus_id(page: Page) -> str:
    return page.evaluate(
        "() => { const a = document.activeElement; return a ? (a.id || a.dataset.key || a.dataset.kbd || a.tagName) : ''; }"
    )


def tab_to(page: Page, test: str, limit: int = 250, back: bool = False) -> None:
    """Press Tab (or Shift+Tab) until ``test`` (a JS expression over ``a``, the focused element)
    holds."""
    for _ in range(limit):
        if page.evaluate(
            f"() => {{ const a = document.activeElement; return Boolean(a && ({test})); }}"
        ):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"never reached by Tab: {test}; last focus {focus_id(page)}")


def type_keys(page: Page, text: str) -> None:
    for ch in text:
        page.keyboard.press(ch if ch != " " else "Space")


REACHABLE = """
() => {
  const all = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
    // a radio group is one Tab stop (its checked radio); the arrows move within it
    .filter((e) => !(e.type === 'radio' && !e.checked && document.querySelector(`input[name='${e.name}']:checked`)))
    .filter((e) => e.tabIndex >= 0 && !e.disabled && !e.closest('[hidden]') && !e.closest('dialog:not([open])')
      && (e.offsetParent !== null || e.classList.contains('visually-hidden-input') || e.classList.contains('skip-link')));
  all.forEach((e, i) => { e.dataset.kbd = 'k' + i; });
  return all.map((e) => e.dataset.kbd);
}
"""


def _missed_by_tab(page: Page) -> list[str | None]:
    """Tab through the page once; the outerHTML head of each visible, enabled control never
    focused, or None for one that left the page during the walk (replaced by a new drawing:
    none should — the tray's clock changes only its time texts, e2e/test_tray_clock.py)."""
    controls = set(page.evaluate(REACHABLE))
    assert len(controls) > 10
    page.evaluate("() => document.activeElement?.blur()")
    seen = set()
    for _ in range(len(controls) * 2 + 20):
        page.keyboard.press("Tab")
        key = page.evaluate("() => document.activeElement?.dataset?.kbd ?? null")
        if key:
            seen.add(key)
        if seen >= controls:
            break
    return page.evaluate(
        "(keys) => keys.map((k) => document.querySelector(`[data-kbd='${k}']`)?.outerHTML.slice(0, 120) ?? null)",
        sorted(controls - seen),
    )


def test_every_control_is_reachable_and_the_journey_works_with_the_keyboard_alone(
    host: HostPage,
) -> None:
    page = host.page
    # -- reachability: on every surface, Tab visits every visible, enabled control
    pid, _ = rich_project(host)
    open_in_ui(host, pid)
    expand_tray(page)
    for surface in SURFACES:
        show(host, surface)
        page.wait_for_selector("#tray-cards article")
        assert not (missing := _missed_by_tab(page)), (surface, missing)

    # -- the journey, keyboard only (letters an agent posts arrive through the protocol)
    host.open()  # the site's address with no route in it: a fresh start on Projects
    page.wait_for_selector("#new-project-name")
    tab_to(page, "a.id === 'new-project-name'")
    type_keys(page, "Keyboard only")
    page.keyboard.press("Enter")
    page.wait_for_selector("#project-title:text-is('Keyboard only')")
    kpid = page.evaluate("() => voicebox.app.project.id")

    tab_to(page, "a.dataset.surface === 'blocks'", back=True)
    page.keyboard.press("Enter")
    page.wait_for_selector("#new-block-name")
    tab_to(page, "a.id === 'new-block-name'")
    type_keys(page, "Importer")
    page.keyboard.press("Enter")
    page.wait_for_selector("#blocks-table th.block-name bdi:text-is('Importer')")
    block = page.get_attribute("#blocks-table tr[data-block]", "data-block")

    tab_to(page, "a.dataset.surface === 'compose'", back=True)
    page.keyboard.press("Enter")
    page.wait_for_selector("#packet-ref-value")
    tab_to(page, "a.id === 'mode-direct'")
    page.keyboard.press("ArrowUp")  # within the radio group: direct → clipboard
    page.wait_for_function(
        "() => document.getElementById('compose-send').textContent === 'Copy the packet'"
    )
    page.keyboard.press("ArrowDown")
    page.wait_for_function(
        "() => document.getElementById('compose-send').textContent === 'Deliver to the inbox'"
    )
    tab_to(page, "a.id === 'compose-agent'", back=True)
    page.keyboard.press("Control+A")
    type_keys(page, "hand-9")
    page.wait_for_function(
        "() => document.getElementById('packet-preview').textContent.includes('hand-9')"
    )
    tab_to(page, "a.id === 'compose-send'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#direct-notice")

    # an agent works the mission to a green gate and another one fails
    m = Missions(host, kpid, "Keyboard only", block)
    m.chain(
        "msn_0000000000f1",
        ("judging", "executing", "gate", "merge_wait"),
        receipt_candidate=candidate(block),
    )
    m.chain("msn_0000000000f2", ("judging", "failed"))
    # the tray polls (every 2.5 s): a poll between two posts draws a card of an earlier phase
    # first, and a walk of 250 Tabs takes less than a poll; so wait for the gestures themselves
    for gesture in ("import-msn_0000000000f1", "dismiss-msn_0000000000f2"):
        page.wait_for_selector(f"#tray-cards [data-key='{gesture}']", timeout=10_000)

    tab_to(page, "a.dataset.key === 'import-msn_0000000000f1'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#import-dialog[open]")
    assert page.evaluate("() => document.activeElement.className").startswith("dialog-cancel")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{card(page, 'msn_0000000000f1')}[data-phase='landed']")
    tab_to(page, "a.dataset.key === 'prov-msn_0000000000f1'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#prov-msn_0000000000f1 li[data-step='receipt']")
    assert page.get_attribute("[data-key='prov-msn_0000000000f1']", "aria-expanded") == "true"

    tab_to(page, "a.dataset.key === 'dismiss-msn_0000000000f2'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#dismiss-dialog[open]")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(card(page, "msn_0000000000f2"), state="detached")
    assert focus_id(page) == "tray-toggle"
    page.keyboard.press("Enter")
    page.wait_for_selector("#tray[data-open='false']")
    assert page.get_attribute("#tray-toggle", "aria-expanded") == "false"
    page.keyboard.press("Enter")
    page.wait_for_selector("#tray[data-open='true'] #tray-cards")
    tab_to(page, "a.closest('#tray-cards')")
    page.keyboard.press("Escape")  # Escape inside the tray collapses it
    page.wait_for_selector("#tray[data-open='false']")

    tab_to(page, "a.dataset.surface === 'settings'", back=True)
    page.keyboard.press("Enter")
    tab_to(page, "a.id === 'setting-read_only'")
    page.keyboard.press("Space")
    page.wait_for_selector("#safe-badge:not([hidden])")
    page.keyboard.press("Space")
    page.wait_for_selector("dialog[open]")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("#safe-badge", state="hidden")

    tab_to(page, "a.dataset.surface === 'audit'", back=True)
    page.keyboard.press("Enter")
    tab_to(page, "a.id === 'verify-audit'")
    page.keyboard.press("Enter")
    page.wait_for_selector("#verify-result.ok")
    host.assert_clean()
