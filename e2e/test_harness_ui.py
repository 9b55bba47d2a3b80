"""Settings → Harness in headless Chromium against a real ``voicebox-env serve`` and
``voicebox-env runner`` on 127.0.0.1 (issue 31 "Harness"): the runner's pin declares three
agent templates; Settings lists, for the paired environment, what the runner's own probe found
of each (the program's name and version line, or "not found" — never a path) and which is
active (the first, no choice made); the person picks another; the choice is kept by the host in
HOST_DIR sealed; a mission spawned from the Missions panel runs the picked template (its agent's
trace on the mission's branch, the first template's absent). A screenshot of the section goes
to docs/screenshots/settings-harness.png."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from e2e.runner_kit import first_commit
from e2e.test_remote import UI_S, Rig, _add_remote
from e2e.test_runner_keys_ui import _open_missions
from e2e.tray_kit import go
from server_host.worktrees import git
from tests.runner.kit import AGENT, prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.runner.test_harness import CLI

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
GATE = Path(__file__).resolve().parent.parent / "tests" / "runner" / "gate_env.py"

OPFS_DOC = """async () => {
  const root = await navigator.storage.getDirectory();
  for await (const [name, handle] of root.entries()) {
    if (handle.kind !== 'directory') continue;
    try {
      const file = await (await handle.getFileHandle('harness-settings.json')).getFile();
      return Array.from(new Uint8Array(await file.arrayBuffer()));
    } catch (e) { /* not this folder */ }
  }
  return null;
}"""


def _pins(project: str) -> str:
    """``build-1`` with three templates: ``vendor-a`` (the scripted agent's ``env`` mode: it
    writes nothing, so its gate would fail), ``vendor-b`` (the stand-in CLI in ``ok`` mode:
    it writes ``AGENT.md``) and ``vendor-c`` (a program this machine does not have)."""
    return (
        "[[runner]]\n"
        'runner_id = "build-1"\n'
        'capability = "build-runner"\n'
        f'projects = ["{project}"]\n'
        f'gate_command = ["python3", "{GATE}"]\n'
        "\n[[runner.template]]\n"
        'label = "vendor-a"\n'
        f'command = ["python3", "{AGENT}", "env", "{{packet_file}}"]\n'
        "\n[[runner.template]]\n"
        'label = "vendor-b"\n'
        f'command = ["{CLI}", "ok", "{{packet_file}}"]\n'
        "\n[[runner.template]]\n"
        'label = "vendor-c"\n'
        'command = ["no-such-agent-cli", "{packet_file}"]\n'
        'keys = ["OPENAI_API_KEY"]\n'
    )


@pytest.fixture
def rig(tmp_path: Path, dist: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "env", dist)
    try:
        yield made
    finally:
        made.close()


def _probed(rig: Rig, lines: list[str]) -> None:
    deadline = time.monotonic() + 30
    while True:
        runners = httpx.get(f"{rig.origin}/api/identity", timeout=5).json()["runners"]
        if runners and runners[0]["live"] and runners[0]["templates"][0]["found"] is not None:
            return
        assert time.monotonic() < deadline, "".join(lines)
        time.sleep(0.05)


def test_the_template_picked_in_settings_harness_is_the_one_that_runs(
    browser: Browser, rig: Rig
) -> None:
    root = rig.server.root
    made: list[tuple[str, str]] = []  # on a thread of its own: playwright's loop runs here
    worker = threading.Thread(target=lambda: made.append(asyncio.run(prepare_project(root))))
    worker.start()
    worker.join(60)
    ((project, _block),) = made
    folder = root / "projects" / project
    first_commit(folder)
    (root / "runners.toml").write_text(_pins(project))
    rig.start_server()
    runner: Any = None
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        _add_remote(host, rig)
        runner, lines = _runner(root)
        _probed(rig, lines)

        # Settings → Harness: what the runner found of each template, the first one active
        go(page, "settings")
        table = "#harness .harness-capability[data-capability='build-runner']"
        page.wait_for_selector(f"{table} tr[data-label='vendor-c']", timeout=UI_S)
        rows = {
            label: page.text_content(f"{table} tr[data-label='{label}']") or ""
            for label in ("vendor-a", "vendor-b", "vendor-c")
        }
        assert "python3" in rows["vendor-a"] and "found" in rows["vendor-a"]
        assert "Python 3." in rows["vendor-a"]
        assert "fake-agent-cli" in rows["vendor-b"]
        assert "fake-agent-cli 9.4.1 (built in build)" in rows["vendor-b"]
        assert "not found" in rows["vendor-c"] and "OPENAI_API_KEY" in rows["vendor-c"]
        section = page.text_content("#harness") or ""
        assert str(CLI.parent) not in section and str(root) not in section  # names, no path
        assert page.is_checked(f"{table} tr[data-label='vendor-a'] input[type=radio]")
        assert "no choice made" in (page.text_content(table) or "")

        # the person picks vendor-b
        page.check(f"{table} tr[data-label='vendor-b'] input[type=radio]")
        page.wait_for_selector(
            "#harness-status:has-text('Choosing vendor-b for build-runner: done')", timeout=UI_S
        )
        assert page.is_checked(f"{table} tr[data-label='vendor-b'] input[type=radio]")
        assert "no choice made" not in (page.text_content(table) or "")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#harness").screenshot(path=str(SHOTS / "settings-harness.png"))
        # kept by the host in HOST_DIR, sealed at rest: no label readable in the file's bytes
        stored = bytes(page.evaluate(OPFS_DOC) or b"")
        assert stored.startswith(b"VBX1"), stored[:16]
        assert b"vendor-b" not in stored
        # a reload shows the choice kept
        host.reload()
        go(page, "settings")
        page.wait_for_selector(f"{table} tr[data-label='vendor-b']", timeout=UI_S)
        assert page.is_checked(f"{table} tr[data-label='vendor-b'] input[type=radio]")

        # a spawn from the Missions panel runs vendor-b: its agent's AGENT.md on the branch
        _open_missions(page, project)
        page.wait_for_function(
            "() => !document.querySelector('#spawn-send').disabled", timeout=UI_S
        )
        page.fill("#spawn-note", "Run the picked template.")
        page.click("#spawn-send")
        page.wait_for_selector("#spawned-mission", timeout=UI_S)
        mission = page.text_content("#spawned-mission") or ""
        page.wait_for_selector(
            f"#remote-mission-list li[data-mission='{mission}'][data-phase='merge_wait']",
            timeout=40_000,
        )
        agent_md = git(folder, "show", f"vbx/{mission}:AGENT.md").stdout
        assert agent_md.startswith(f"mission {mission}")  # the ok mode of vendor-b wrote it
        log = (root / "runner-logs" / f"{mission}.log").read_text()
        assert "agent ok: packet of" in log and "agent env" not in log
        # the letters name the role, never the template or its program
        letters = json.dumps(
            [
                p.read_text(errors="replace")
                for p in folder.rglob("*")
                if ".git" not in p.parts and p.is_file()
            ]
        )
        assert mission in letters
        for word in ("vendor-b", "fake-agent-cli"):
            assert word not in letters, word
        host.assert_clean()
    finally:
        context.close()
        if runner is not None:
            _stop(runner)
