"""The tray follows the project being viewed wherever it lives, and Compose spawns there
(issue 30), through the real UI against a real ``voicebox-env serve`` and ``voicebox-env
runner`` on 127.0.0.1 with the scripted agent (the rig of ``e2e/test_runner_ui.py``).

A person with a local project open views a remote project's Missions…: the tray shows that
project's missions ("demo on build-box"). On Compose, spawn is disabled with the honest reason
while no runner is live, then while the project is not a git repository; once both hold they
spawn, and the tray's card moves executing → gate → merge_wait as the runner posts (no reload);
its Review… opens the mission view in the Missions panel. A hanging agent is cancelled from its
tray card and shows ``failed`` "cancelled by a person", pinned. "Show the missions of …" brings
the local project's tray back; viewing the remote project's Files follows it again; the local
project's Files shows the local tray again. The screenshot is
``docs/screenshots/tray-remote.png``. Nothing the page received holds a secret or the root's
path; the server, the runner and the site are always stopped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from e2e.hostpage import HostPage
from e2e.runner_kit import first_commit, wait_runners_live
from e2e.test_remote import SHOTS, UI_S, Rig, _add_remote, _secrets_at_rest
from e2e.tray_kit import axe_serious, go, new_project, open_in_ui
from server_host.runner_desk import read_runner_secret
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop

GATE = (
    "import pathlib, sys, time\n"
    "time.sleep(1.5)\n"
    "sys.exit(0 if pathlib.Path('AGENT.md').exists() else 1)\n"
)
WATCH_TRAY = """
() => {
  window.__tray = [];
  const last = new Map();
  new MutationObserver(() => {
    for (const card of document.querySelectorAll('#tray article[data-remote][data-mission]')) {
      const m = card.dataset.mission, p = card.dataset.phase;
      if (last.get(m) !== p) { last.set(m, p); window.__tray.push({ m, p, t: Date.now() }); }
    }
  }).observe(document.querySelector('#tray'), { subtree: true, childList: true, attributes: true });
}
"""


@pytest.fixture
def rig(tmp_path: Path, dist: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "env", dist)
    try:
        yield made
    finally:
        made.close()
        print(made.server.text())


def _tray_card(page: Page, mission: str, phase: str, bound_ms: int = UI_S) -> None:
    page.wait_for_selector(
        f"#tray article[data-remote][data-mission='{mission}'][data-phase='{phase}']",
        timeout=bound_ms,
    )


def _spawn_reason(page: Page, words: str) -> str:
    go(page, "compose")
    page.wait_for_function(
        "(w) => document.querySelector('#mode-spawn-reason')?.textContent.includes(w)",
        arg=words,
        timeout=UI_S,
    )
    assert page.is_disabled("#mode-spawn")
    return page.text_content("#mode-spawn-reason") or ""


def _spawn(page: Page, runner: str, note: str, before: str | None) -> str:
    page.fill("#compose-runner", runner)
    page.fill("#compose-note", note)
    page.wait_for_function(
        "(r) => document.querySelector('#packet-preview')?.textContent.includes(r)",
        arg=runner,
        timeout=UI_S,
    )
    page.wait_for_selector("#mode-spawn:checked", timeout=UI_S)
    page.click("#compose-send")
    page.wait_for_function(
        "(m) => { const c = document.querySelector('#spawned-mission'); "
        "return c && c.textContent !== m; }",
        arg=before or "",
        timeout=UI_S,
    )
    return page.text_content("#spawned-mission") or ""


def test_the_tray_follows_a_remote_project_and_compose_spawns_there_through_the_page(
    browser: Browser, rig: Rig
) -> None:
    root = rig.server.root
    made: list[tuple[str, str]] = []  # on a thread of its own: playwright's loop runs here
    worker = threading.Thread(target=lambda: made.append(asyncio.run(prepare_project(root))))
    worker.start()
    worker.join(60)
    ((project, _block),) = made
    folder = root / "projects" / project
    (folder / "check.py").write_text(GATE)
    (folder / "README.md").write_text("# demo\n")
    (root / "runners.toml").write_text(
        pins_toml(project, mode="slow", arg="1.5")
        + pins_toml(project, mode="hang", runner_id="build-hang")
    )
    rig.start_server()
    runner: Any = None
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page

        # a local project open: the tray shows it
        local, _ = new_project(host, "Local notes", [("Notes", "Keeps notes.")])
        open_in_ui(host, local, "files")
        page.wait_for_selector("#tray #tray-project-name:text-is('Local notes')", timeout=UI_S)

        # the person views the remote project's Missions…: the tray shows its missions
        _add_remote(host, rig)
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{project}']", timeout=UI_S)
        page.click(f"tr[data-project='{project}'] button.missions-open")
        page.wait_for_selector("#tray #tray-env-name:text-is('build-box')", timeout=UI_S)
        assert page.text_content("#tray-where") == "demo on build-box"
        page.wait_for_selector("#tray #tray-empty", timeout=UI_S)

        # Compose offers spawn only with a live runner in a git repository, else says why
        assert "not live" in _spawn_reason(page, "not live")
        assert "demo" in (page.text_content("#compose-project") or "")
        assert page.is_disabled("#mode-direct")
        runner, lines = _runner(root)
        wait_runners_live(rig, lines)
        assert "git init" in _spawn_reason(page, "not a git repository")
        first_commit(folder)
        go(page, "compose")
        page.wait_for_selector("#mode-spawn:not([disabled])", timeout=UI_S)

        # spawn; the tray's card moves executing → gate → merge_wait live
        page.evaluate(WATCH_TRAY)
        mission = _spawn(page, "build-1", "Add AGENT.md, please.", None)
        _tray_card(page, mission, "merge_wait")
        shown = [s["p"] for s in page.evaluate("() => window.__tray") if s["m"] == mission]
        assert shown[-3:] == ["executing", "gate", "merge_wait"], shown
        card = f"#tray article[data-mission='{mission}']"
        assert page.is_visible(f"{card} button.remote-review")
        assert not page.is_visible(f"{card} button.remote-cancel")

        # a hanging agent, cancelled by a person from its tray card
        hanging = _spawn(page, "build-hang", "Hang, please.", mission)
        _tray_card(page, hanging, "executing")
        started = time.monotonic()
        page.click(f"#tray article[data-mission='{hanging}'] button.remote-cancel")
        _tray_card(page, hanging, "failed", 10_000)
        cancel_ms = (time.monotonic() - started) * 1000
        print(f"tray: cancel -> failed shown {cancel_ms:.0f} ms")
        failed = f"#tray article[data-mission='{hanging}']"
        assert "cancelled by a person" in (page.text_content(f"{failed} .card-reason") or "")
        assert "pinned" in (page.get_attribute(failed, "class") or "")
        first = page.eval_on_selector("#tray-cards article", "a => a.dataset.mission")
        assert first == hanging, "a failure is pinned on top"
        page.screenshot(path=str(SHOTS / "tray-remote.png"), full_page=False)
        assert axe_serious(page, "the tray of a remote project and Compose there") == []

        # Review… opens the mission view in the Missions panel
        page.click(f"{card} button.remote-review")
        page.wait_for_selector(f"#mission-view[data-mission='{mission}']", timeout=UI_S)
        page.wait_for_selector("#diff-files li[data-path='AGENT.md']", timeout=UI_S)

        # back to the local project: the tray shows it again
        page.click("#tray-to-local")
        page.wait_for_selector("#tray #tray-project-name:text-is('Local notes')", timeout=UI_S)
        assert page.query_selector("#tray article[data-remote]") is None
        page.click(f"tr[data-project='{project}'] button[aria-label='Files of demo']")
        page.wait_for_selector("#peer-files", timeout=UI_S)  # its Files: the tray follows too
        page.wait_for_selector("#tray #tray-env-name:text-is('build-box')", timeout=UI_S)
        go(page, "files")
        page.wait_for_selector("#tray #tray-project-name:text-is('Local notes')", timeout=UI_S)
        assert page.query_selector("#tray #tray-env-name") is None

        # custody: nothing the page received holds a secret or the root's path
        received = "\n".join(host.received())
        secrets = _secrets_at_rest(host) | {read_runner_secret(root / "host").reveal()}
        for secret in secrets:
            for start in range(0, len(secret) - 12 + 1, 4):
                assert secret[start : start + 12] not in received
        assert str(root) not in received
        # the project's Files list git's own .git/worktrees/<mission>/ entries (names, never
        # the worktree's path); no other mention of the runtime's worktrees reaches the page
        assert "worktrees/" not in received.replace(".git/worktrees/", "")
        host.assert_clean()
    finally:
        context.close()
        if runner is not None:
            _stop(runner)


def test_an_ended_mission_opened_from_the_tray_shows_its_log_and_a_landed_card_its_receipt(
    browser: Browser, rig: Rig
) -> None:
    """The tryout's findings, through the page: (1) the tray's Review… of a mission whose run
    had ended opened its view with an empty log for good (the log answered before the board
    built the view, and an ended log is not asked again); (2) a landed remote card said only
    "receipt imported" where the view said ``receipt ✓ store v2``. The view opened from the
    tray shows the kept log and "the run has ended"; the landed card says its receipt."""
    root = rig.server.root
    made: list[tuple[str, str]] = []  # on a thread of its own: playwright's loop runs here
    worker = threading.Thread(target=lambda: made.append(asyncio.run(prepare_project(root))))
    worker.start()
    worker.join(60)
    ((project, _block),) = made
    folder = root / "projects" / project
    (folder / "check.py").write_text(
        "import pathlib, sys\nsys.exit(0 if pathlib.Path('AGENT.md').exists() else 1)\n"
    )
    first_commit(folder, branch="main")
    (root / "runners.toml").write_text(pins_toml(project, mode="ok"))
    rig.start_server()
    runner, lines = _runner(root)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        wait_runners_live(rig, lines)
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        _add_remote(host, rig)
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{project}']", timeout=UI_S)
        page.click(f"tr[data-project='{project}'] button.missions-open")
        page.wait_for_selector("#tray #tray-env-name:text-is('build-box')", timeout=UI_S)
        go(page, "compose")
        page.wait_for_selector("#mode-spawn:not([disabled])", timeout=UI_S)
        mission = _spawn(page, "build-1", "Add AGENT.md, please.", None)
        _tray_card(page, mission, "merge_wait")
        card = f"#tray article[data-mission='{mission}']"

        # Review… from the tray (the panel opened afresh): the ended run's log is shown
        page.click(f"{card} button.remote-review")
        page.wait_for_selector(f"#mission-view[data-mission='{mission}']", timeout=UI_S)
        page.wait_for_function(
            "() => document.querySelector('#mission-log-meta')?.textContent"
            ".includes('the run has ended')",
            timeout=UI_S,
        )
        assert "agent ok: packet of" in (page.text_content("#mission-log") or "")

        # landed: the tray's card says the receipt as the view does
        page.wait_for_selector("#mission-evidence[data-checked='true']", timeout=UI_S)
        page.click("#mission-land")
        _tray_card(page, mission, "landed")
        page.wait_for_function(
            "(c) => document.querySelector(c + ' .card-receipt')?.textContent "
            "=== 'receipt ✓ store v2'",
            arg=card,
            timeout=UI_S,
        )
        # the view redraws from its own board poll, which may come a moment after the tray's
        page.wait_for_function(
            "() => document.querySelector('#mission-receipt')?.textContent "
            "=== 'receipt ✓ store v2'",
            timeout=UI_S,
        )
        go(page, "compose")  # and again from another surface: Review… shows the log
        page.click(f"{card} button.remote-review")
        page.wait_for_function(
            "() => document.querySelector('#mission-log')?.textContent.includes('agent ok')",
            timeout=UI_S,
        )
        host.assert_clean()
    finally:
        context.close()
        _stop(runner)
