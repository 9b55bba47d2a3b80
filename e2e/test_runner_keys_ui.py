"""A person's provider key reaches a real agent through the page (issue 31, the loop closed),
in headless Chromium against a real ``voicebox-env serve`` and ``voicebox-env runner`` on
127.0.0.1: the runner's pin declares ``keys = ["ANTHROPIC_API_KEY"]``; the Missions panel shows
the key the runner needs and that it is not set; a spawn without a grant is refused
``key-not-granted`` naming the variable, shown in the panel, and nothing is queued; the person
sets the key in Settings and grants it to the paired environment; the panel shows its
fingerprint granted; the spawned mission's scripted agent saw the value (its sha256 on the
mission's branch) and printed it in every form a leak takes (raw, base64 at three alignments,
hex, URL-encoded, JSON-escaped, split across two writes); no page message, page storage
(IndexedDB, every OPFS file), DOM or URL, no file of the server's root (its logs, audit and the mission log included), nothing
the server or runner printed, and no process's argv (``ps -eo args``, read again and again while
the agent runs; /proc/*/environ is not read: the agent's environment holds the key by design)
holds the value, any 12-character fragment of it, or any of those forms."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from e2e.hostpage import HostPage
from e2e.runner_kit import first_commit, wait_runners_live
from e2e.test_provider_keys import PAGE_READABLE
from e2e.test_remote import UI_S, Rig, _add_remote, _environments
from e2e.tray_kit import go
from server_host.worktrees import git
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.runner.test_keys import _forms

VAR = "ANTHROPIC_API_KEY"
VALUE = "sk-ant-e2e-wire-4Rk9Tq2Wm7Lz5Xv8Pn3Hb6Dj1Fc0Gs"
GATE = Path(__file__).resolve().parent.parent / "tests" / "runner" / "gate_env.py"


@pytest.fixture
def rig(tmp_path: Path, dist: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "env", dist)
    try:
        yield made
    finally:
        made.close()


LEAKS = {VALUE[i : i + 12] for i in range(len(VALUE) - 11)} | set(_forms(VALUE))
"""Every 12-character fragment of the value and every form the agent prints it in."""


def _leaking(texts: list[Any]) -> list[str]:
    return [t[:120] for t in texts if isinstance(t, str) and any(f in t for f in LEAKS)]


OPFS_TEXTS = """async () => {
  const out = [];
  async function walk(dir, path) {
    for await (const [name, handle] of dir.entries()) {
      if (handle.kind === 'directory') { await walk(handle, path + name + '/'); continue; }
      const file = await handle.getFile();
      if (file.size > (8 << 20)) { out.push(path + name + ': too large to scan'); continue; }
      out.push(new TextDecoder('latin1').decode(await file.arrayBuffer()));
    }
  }
  await walk(await navigator.storage.getDirectory(), '/');
  return out;
}"""
"""Every file of the page's OPFS as text (HOST_DIR is sealed: its bytes must not hold the value
either)."""


def _fragments_in(host: HostPage) -> list[str]:
    opfs = host.page.evaluate(OPFS_TEXTS)
    assert not [t for t in opfs if t.endswith(": too large to scan")], opfs
    return _leaking(host.page.evaluate(PAGE_READABLE) + list(host.received()) + opfs)


class ArgvWatch:
    """``ps -ww -eo args`` read again and again on a thread of its own until stopped: how many
    readings saw the scripted agent's process, and every argv that held a leak."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.readings = self.agent_seen = 0
        self.leaked: list[str] = []
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stop.is_set():
            args = subprocess.run(
                ["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True
            ).stdout.splitlines()
            self.readings += 1
            self.agent_seen += any("agent.py keys" in a for a in args)
            self.leaked += _leaking(args)
            self.stop.wait(0.02)

    def done(self) -> None:
        self.stop.set()
        self.thread.join(10)


def _open_missions(page: Any, project: str) -> None:
    _environments(page)
    page.click("button.env-open:text-is('build-box')")
    page.wait_for_selector(f"#peer-projects tr[data-project='{project}']", timeout=UI_S)
    page.click(f"tr[data-project='{project}'] button.missions-open")
    page.wait_for_selector("#spawn-form", timeout=UI_S)


def test_a_key_set_and_granted_in_the_page_reaches_the_agent_and_nothing_else(
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
    pins = pins_toml(project, mode="keys-file", arg=VAR, gate=str(GATE), keys=(VAR,))
    held = pins.replace(f'"{{packet_file}}", "{VAR}"]', f'"{{packet_file}}", "{VAR}", "2"]')
    assert held != pins  # the agent stays alive 2 s after printing: argv is read meanwhile
    (root / "runners.toml").write_text(held)
    rig.start_server()
    runner: Any = None
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        host = HostPage(context.new_page())
        host.open(rig.site_url)
        page = host.page
        _add_remote(host, rig)
        runner, lines = _runner(root)
        wait_runners_live(rig, lines)

        # the panel says which key the runner needs, and that it is not set
        _open_missions(page, project)
        page.wait_for_selector(f"#spawn-keys code[data-key='{VAR}']", timeout=UI_S)
        assert "not set" in (page.text_content("#spawn-keys") or "")
        page.wait_for_function(
            "() => !document.querySelector('#spawn-send').disabled", timeout=UI_S
        )
        page.fill("#spawn-note", "Use the key.")
        page.click("#spawn-send")
        page.wait_for_selector("#spawn-refusal", timeout=UI_S)
        assert page.text_content("#spawn-refusal") == "key-not-granted"
        said = page.text_content("#spawn-reason") or ""
        assert VAR in said and "Settings" in said, said
        assert page.locator("#remote-mission-list li[data-mission]").count() == 0

        # the person sets the key and grants it to the paired environment
        go(page, "settings")
        page.wait_for_selector("#key-form")
        page.select_option("#key-provider", "anthropic")
        page.fill("#key-value", VALUE)
        page.click("#key-form button[type=submit]")
        switch = f"#keys-table tr[data-variable='{VAR}'] input[data-env]"
        page.wait_for_selector(switch)
        page.check(switch)
        page.wait_for_selector(f"#keys-status:has-text('Granting {VAR}: done')")

        # the panel shows it granted by its fingerprint; the spawn gives it to the agent
        fingerprint = hashlib.sha256(VALUE.encode()).hexdigest()[:8]
        _open_missions(page, project)
        page.wait_for_function(
            "(fp) => document.querySelector('#spawn-keys')?.textContent.includes(fp + ', granted')",
            arg=fingerprint,
            timeout=UI_S,
        )
        page.fill("#spawn-note", "Use the key.")
        watch = ArgvWatch()  # every process's argv, while the run goes on
        try:
            page.click("#spawn-send")
            page.wait_for_selector("#spawned-mission", timeout=UI_S)
            mission = page.text_content("#spawned-mission") or ""
            page.wait_for_selector(
                f"#remote-mission-list li[data-mission='{mission}'][data-phase='merge_wait']",
                timeout=40_000,
            )
        finally:
            watch.done()
        assert watch.agent_seen > 0, watch.readings  # read while the agent ran
        assert watch.leaked == []
        seen = git(folder, "show", f"vbx/{mission}:KEY.sha256").stdout.strip()
        assert seen == hashlib.sha256(VALUE.encode()).hexdigest()
        page.wait_for_function(
            "() => document.querySelector('#mission-log-meta')?.textContent.includes('ended')",
            timeout=UI_S,
        )
        log_text = page.text_content("#mission-log") or ""
        assert "leak " in log_text and "GATE-ENV" in log_text
        # every form the agent printed reached the page redacted, the split one included
        assert log_text.count("[redacted]") >= len(_forms(VALUE)) + 1, log_text
        assert "split [redacted] end" in log_text
        # the agent also wrote the value into a file of its worktree: the review's diff shows
        # that file, and the host's second wall redacts the value before the page sees it
        patch = "#mission-review details.diff-file[data-path='LEAK.txt'] pre.diff-patch"
        page.wait_for_selector(patch, timeout=UI_S)
        assert "+the key: [redacted]" in (page.text_content(patch) or "")
        # and the person is told, before Merge, that the branch carries it in the clear
        said = page.text_content("#diff-secret") or ""
        assert "secret this host keeps" in said and "Merging puts that value" in said

        # custody: every page message, its storage, DOM and URL — no value, no fragment of it
        assert _fragments_in(host) == []
        server_files = [  # the agent's own worktree holds LEAK.txt: its choice, not a leak
            p
            for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and "worktrees" not in p.parts
        ]
        assert any(p.suffix == ".log" for p in server_files)  # the mission log is scanned
        for path in server_files:
            text = path.read_bytes().decode("utf-8", "replace")
            assert _leaking([text]) == [], path.name
        assert _leaking(["".join(rig.server.log), "".join(lines)]) == []
        host.assert_clean()
    finally:
        context.close()
        if runner is not None:
            _stop(runner)
