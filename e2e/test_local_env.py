"""One command to try missions that run, as a person would (issue 30, "One command to try
it"): ``python -m worker.sitebuild.serve --local-env DIR`` on free loopback ports, then in
headless Chromium pair with the URL and code it printed, open the demo project's Missions…,
spawn for the demo runner and watch the card reach ``merge_wait`` with the demo agent's log and
the environment's evidence check; the screenshot is ``docs/screenshots/local-env-demo-mission.png``.
The command is stopped with SIGTERM and leaves no child behind.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from e2e.test_remote import SHOTS, UI_S
from tests.runner.test_local_env import REPO, _alive, _descendants


def test_one_command_pair_spawn_and_watch_the_demo_mission_reach_merge_wait(
    browser: Browser, dist: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.txt"
    argv = [sys.executable, "-m", "worker.sitebuild.serve", "--dir", str(dist), "--port", "0"]
    argv += ["--local-env", str(tmp_path / "env"), "--env-port", "0"]
    with out.open("wb") as sink:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT)
    children: set[int] = set()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        deadline = time.monotonic() + 60
        while "Ctrl+C stops everything" not in out.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, out.read_text()
            time.sleep(0.05)
        text = out.read_text()
        children = _descendants(proc.pid)
        site = re.search(r"Site +(\S+)", text).group(1)
        url = re.search(r"Environment +(\S+)", text).group(1)
        code = re.search(r"pairing code +(\S+)", text).group(1)

        host = HostPage(context.new_page())
        page = host.page
        host.open(site)
        page.click("nav >> text=Environments")
        page.wait_for_selector("#remote-form", timeout=UI_S)
        page.fill("#remote-url", url)
        page.fill("#remote-code", code)
        page.click("#add-remote")
        page.wait_for_selector("tr[data-env='local-env']", timeout=UI_S)
        page.click("button.env-open:text-is('local-env')")
        row = page.wait_for_selector("#peer-projects tr[data-project]", timeout=UI_S)
        project = row.get_attribute("data-project")
        page.click(f"tr[data-project='{project}'] button.missions-open")
        page.wait_for_function(
            "() => document.querySelector('#spawn-reason')?.textContent"
            ".includes('Spawn is available')",
            timeout=UI_S,
        )
        page.select_option("#spawn-runner", "demo-1")
        page.fill("#spawn-note", "Say hello in MISSION.md.")
        page.click("#spawn-send")
        page.wait_for_selector("#spawned-mission", timeout=UI_S)
        mission = page.text_content("#spawned-mission")
        page.wait_for_selector(
            f"#remote-mission-list li[data-mission='{mission}'][data-phase='merge_wait']",
            timeout=60_000,
        )
        page.wait_for_function(
            "() => document.querySelector('#mission-log-meta')?.textContent.includes('ended')",
            timeout=UI_S,
        )
        log_text = page.text_content("#mission-log") or ""
        assert f"demo agent: mission {mission}" in log_text
        assert "gate: MISSION.md names the mission" in log_text
        page.wait_for_selector("#mission-evidence[data-checked='true']", timeout=UI_S)
        page.evaluate("() => document.querySelector('#mission-log').scrollIntoView({block: 'end'})")
        page.screenshot(path=str(SHOTS / "local-env-demo-mission.png"))
    finally:
        context.close()
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            left = {pid for pid in children if _alive(pid)}
            for pid in left:
                os.kill(pid, signal.SIGKILL)
    assert status == 0, out.read_text()
    assert not left, out.read_text()
