"""Missions that run, through the real UI (issue 30, the browser side): a real ``voicebox-env
serve`` and ``voicebox-env runner`` on 127.0.0.1 with the scripted agent
(``tests/runner/agent.py``), the page served from 127.0.0.1 with the server's origin in its
CSP (the rig of ``e2e/test_remote.py``).

The person pairs by code, opens the remote project's Missions…, reads why spawn is not offered
(the runner is not live; then the project is not a git repository), sees it offered once both
are true, spawns, and watches the card move executing → gate → merge_wait while the mission
view shows the agent's line in the log and the timeline in words, the branch's change (files,
+/− counts, diffs) and Merge (a confirm naming both branches; a fast-forward); then a hanging
agent is
cancelled from the mission view and shows ``failed`` "cancelled by a person". The lag between
a letter on the server's disk and the page showing it is measured. Nothing the page received
holds the bearer, the host token, the runner secret or the root's path (where the worktrees
are). The server, the runner and the site are always stopped.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from e2e.runner_kit import first_commit, wait_runners_live
from e2e.test_remote import SHOTS, UI_S, Rig, _add_remote, _secrets_at_rest
from e2e.tray_kit import axe_serious
from server_host.runner_desk import read_runner_secret
from server_host.runner_run import log_path
from server_host.worktrees import git
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop

GATE = (
    "import pathlib, sys, time\n"
    "time.sleep(1.5)\n"
    "sys.exit(0 if pathlib.Path('AGENT.md').exists() else 1)\n"
)
WATCH = """
() => {
  window.__seen = [];
  window.__logAt = null;
  const last = new Map();
  new MutationObserver(() => {
    for (const li of document.querySelectorAll('#remote-mission-list li[data-mission]')) {
      const m = li.dataset.mission, p = li.dataset.phase;
      if (last.get(m) !== p) { last.set(m, p); window.__seen.push({ m, p, t: Date.now() }); }
    }
    const log = document.querySelector('#mission-log');
    if (!window.__logAt && log && log.textContent.includes('agent: working on it')) window.__logAt = Date.now();
  }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
}
"""


class DiskWatch:
    """When each phase of each mission first appears in the project's mailbox on disk, and
    when the agent's line first appears in a mission's log (epoch ms), polled every 10 ms."""

    def __init__(self, root: Path, folder: Path) -> None:
        self.root, self.folder = root, folder
        self.phases: dict[tuple[str, str], float] = {}
        self.log_at: dict[str, float] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            now = time.time() * 1000
            for segment in sorted((self.folder / ".voicebox" / "mailbox").glob("*.jsonl")):
                for raw in segment.read_text().splitlines():
                    try:
                        line = json.loads(raw)
                    except ValueError:
                        continue  # a line being written
                    if line.get("kind") == "mission":
                        key = (line["mission"]["mission_id"], line["mission"]["phase"])
                        self.phases.setdefault(key, now)
            for mission, _ in list(self.phases):
                path = log_path(self.root, mission)
                seen = mission in self.log_at or not path.exists()
                if not seen and b"agent: working on it" in path.read_bytes():
                    self.log_at[mission] = now
            time.sleep(0.01)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(5)


@pytest.fixture
def rig(tmp_path: Path, dist: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "env", dist)
    try:
        yield made
    finally:
        made.close()
        print(made.server.text())


def _reason(page: Any) -> str:
    return page.text_content("#spawn-reason") or ""


def _wait_reason(page: Any, words: str) -> str:
    page.wait_for_function(
        "(w) => document.querySelector('#spawn-reason')?.textContent.includes(w)",
        arg=words,
        timeout=UI_S,
    )
    return _reason(page)


def _card_phase(page: Any, mission: str, phase: str, bound_ms: int = UI_S) -> None:
    page.wait_for_selector(
        f"#remote-mission-list li[data-mission='{mission}'][data-phase='{phase}']",
        timeout=bound_ms,
    )


def test_spawn_watch_the_log_and_cancel_a_remote_mission_through_the_page(
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
    watch = DiskWatch(root, folder)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        _add_remote(host, rig)
        page.click("button.env-open:text-is('build-box')")
        page.wait_for_selector(f"#peer-projects tr[data-project='{project}']", timeout=UI_S)
        missions = f"tr[data-project='{project}'] button.missions-open"

        # the honest reasons: pinned but not live; then live but not a git repository
        page.click(missions)
        assert "not live" in _wait_reason(page, "not live")
        assert page.is_disabled("#spawn-send")
        runner, lines = _runner(root)
        wait_runners_live(rig, lines)
        page.click(missions)
        assert "git init" in _wait_reason(page, "not a git repository")
        assert page.is_disabled("#spawn-send")
        first_commit(folder)
        page.click(missions)
        _wait_reason(page, "Spawn is available")
        assert page.is_enabled("#spawn-send")

        # spawn; the card moves executing → gate → merge_wait; the log shows the agent's line
        page.evaluate(WATCH)
        page.select_option("#spawn-runner", "build-1")
        page.fill("#spawn-note", "Add AGENT.md, please.")
        page.click("#spawn-send")
        page.wait_for_selector("#spawned-mission", timeout=UI_S)
        mission = page.text_content("#spawned-mission") or ""
        _card_phase(page, mission, "merge_wait")
        seen = [s for s in page.evaluate("() => window.__seen") if s["m"] == mission]
        shown = [s["p"] for s in seen]
        assert shown[-3:] == ["executing", "gate", "merge_wait"], shown
        page.wait_for_function(
            "() => document.querySelector('#mission-log-meta')?.textContent.includes('ended')",
            timeout=UI_S,
        )
        log_text = page.text_content("#mission-log") or ""
        assert "agent: working on it" in log_text
        assert "\x1b" not in log_text
        assert page.evaluate("() => document.querySelector('#mission-log').children.length") == 0
        now = page.text_content("#mission-timeline li[data-state='now']") or ""
        assert "gate green" in now, now
        assert (folder / "AGENT.md").exists() is False, "the agent worked in its own worktree"
        page.wait_for_selector("#mission-evidence[data-checked='true']", timeout=UI_S)
        assert "checked by the environment" in (page.text_content("#mission-evidence") or "")
        page.wait_for_selector("#diff-files li", timeout=UI_S)  # the review sits above the log
        page.locator("#mission-log").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "mission-view.png"), full_page=False)
        assert axe_serious(page, "missions panel and mission view") == []

        # review: the branch's change, file by file with its counts and diff (text nodes)
        page.wait_for_selector("#diff-files li[data-path='AGENT.md']", timeout=UI_S)
        paths = page.eval_on_selector_all("#diff-files li", "els => els.map(e => e.dataset.path)")
        assert paths == ["AGENT.md", "README.md"], paths
        agent_row = page.text_content("#diff-files li[data-path='AGENT.md']") or ""
        assert "+2 −0" in agent_row, agent_row
        patch = page.text_content(".diff-file[data-path='AGENT.md'] .diff-patch") or ""
        assert f"+mission {mission}" in patch, patch
        assert page.evaluate("() => document.querySelector('.diff-patch').children.length") == 0
        page.locator("#mission-review").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "mission-review.png"), full_page=False)

        # Merge, a person's gesture with a confirm naming both branches: a fast-forward
        checked_out = git(folder, "symbolic-ref", "--short", "HEAD").stdout.strip()
        page.click("#mission-merge")
        page.wait_for_selector("#merge-confirm", timeout=UI_S)
        asked = page.text_content("#merge-confirm") or ""
        assert f"vbx/{mission}" in asked and checked_out in asked, asked
        page.click("#merge-confirm .dialog-confirm")
        page.wait_for_selector("#merge-status[data-how='fast-forward']", timeout=UI_S)
        assert (folder / "AGENT.md").read_text().startswith(f"mission {mission}")
        head = git(folder, "rev-parse", "HEAD").stdout.strip()
        assert head == git(folder, "rev-parse", f"vbx/{mission}").stdout.strip()

        lags = [
            s["t"] - watch.phases[(mission, s["p"])]
            for s in seen
            if (mission, s["p"]) in watch.phases and s["p"] != "judging"
        ]
        log_lag = page.evaluate("() => window.__logAt") - watch.log_at[mission]
        print(
            f"letter on disk -> card shown: {[round(x) for x in lags]} ms "
            f"(median {statistics.median(lags):.0f}); log line -> shown {log_lag:.0f} ms"
        )
        assert all(lag < 1500 for lag in lags), lags

        # a hanging agent, cancelled by a person from the mission view
        page.select_option("#spawn-runner", "build-hang")
        page.fill("#spawn-note", "Hang, please.")
        page.click("#spawn-send")
        page.wait_for_function(
            "(m) => { const c = document.querySelector('#spawned-mission'); "
            "return c && c.textContent !== m; }",
            arg=mission,
            timeout=UI_S,
        )
        hanging = page.text_content("#spawned-mission") or ""
        _card_phase(page, hanging, "executing")
        page.wait_for_function(
            "() => document.querySelector('#mission-log')?.textContent.includes('hanging')",
            timeout=UI_S,
        )
        started = time.monotonic()
        page.click("#mission-cancel")
        _card_phase(page, hanging, "failed", 10_000)
        cancel_s = time.monotonic() - started
        print(f"cancel -> failed shown: {cancel_s * 1000:.0f} ms")
        assert cancel_s < 5
        assert "cancelled by a person" in (page.text_content("#mission-reason") or "")
        assert page.is_hidden("#mission-cancel")

        # custody: nothing the page received holds a secret or the root's path
        received = "\n".join(host.received())
        secrets = _secrets_at_rest(host) | {read_runner_secret(root / "host").reveal()}
        assert any(s.startswith("vbx_") for s in secrets)
        for secret in secrets:
            for start in range(0, len(secret) - 12 + 1, 4):
                assert secret[start : start + 12] not in received
        assert str(root) not in received and "worktrees/" not in received
        assert mission in received
        host.assert_clean()
    finally:
        watch.stop()
        context.close()
        if runner is not None:
            _stop(runner)
