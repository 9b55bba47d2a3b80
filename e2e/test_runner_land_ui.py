"""A person lands a remote mission from the page (issue 30, Review; the acceptance's "import
the receipt, see ``landed`` with ``receipt ✓ store vN``, merge"), in headless Chromium against
a real ``voicebox-env serve`` and ``voicebox-env runner`` on 127.0.0.1 with the scripted agent.

The person pairs, spawns, watches the mission reach ``merge_wait`` with a candidate "checked by
the environment", presses "Import this receipt" (no extra dialog for a checked candidate) and
sees the mission ``landed`` with ``receipt ✓ store v2``; then Merge fast-forwards the project's
branch. A second mission whose candidate matches no log the environment kept (its kept log's
record no longer matches: only the poster's claim) takes the extra dialog that says so:
cancelled, nothing moves; confirmed, it lands with ``receipt ✓ store v3``. Nothing the page
received holds the bearer, the host token, the runner secret or the root's path (where the
worktrees are). The server, the runner and the site are always stopped.
"""

from __future__ import annotations

import asyncio
import json
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


@pytest.fixture
def rig(tmp_path: Path, dist: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "env", dist)
    try:
        yield made
    finally:
        made.close()
        print(made.server.text())


def _spawn(page: Any, note: str, after: str | None) -> str:
    """Spawn from the panel; the new mission's id once the page shows it."""
    page.fill("#spawn-note", note)
    page.click("#spawn-send")
    page.wait_for_function(
        "(m) => { const c = document.querySelector('#spawned-mission'); "
        "return c && c.textContent !== m; }",
        arg=after or "",
        timeout=UI_S,
    )
    return page.text_content("#spawned-mission") or ""


def _card_phase(page: Any, mission: str, phase: str) -> None:
    page.wait_for_selector(
        f"#remote-mission-list li[data-mission='{mission}'][data-phase='{phase}']", timeout=UI_S
    )


def _store_version(folder: Path) -> int:
    return json.loads((folder / ".voicebox" / "skeleton.json").read_text())["store_version"]


def test_a_person_imports_a_remote_receipt_sees_it_landed_and_merges_through_the_page(
    browser: Browser, rig: Rig
) -> None:
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
    (folder / "README.md").write_text("# demo\n")
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
        page.wait_for_function(
            "() => document.querySelector('#spawn-reason')?.dataset.available === 'true'",
            timeout=UI_S,
        )
        assert _store_version(folder) == 1

        # a checked candidate: Import this receipt, no extra dialog, landed with its receipt
        mission = _spawn(page, "Add AGENT.md, please.", None)
        _card_phase(page, mission, "merge_wait")
        page.wait_for_selector("#mission-evidence[data-checked='true']", timeout=UI_S)
        assert page.is_visible("#mission-land")
        assert page.is_hidden("#mission-receipt")
        started = time.monotonic()
        page.click("#mission-land")
        _card_phase(page, mission, "landed")
        page.wait_for_selector("#mission-view[data-phase='landed']", timeout=UI_S)
        page.wait_for_function(
            "() => document.querySelector('#mission-receipt')?.textContent "
            "=== 'receipt ✓ store v2'",
            timeout=UI_S,
        )
        print(f"Import this receipt -> landed shown: {(time.monotonic() - started) * 1000:.0f} ms")
        assert page.locator("#claim-confirm").count() == 0, "no claim dialog for a checked one"
        assert _store_version(folder) == 2
        assert page.is_hidden("#mission-land")
        now = page.text_content("#mission-timeline li[data-state='now']") or ""
        assert "receipt imported" in now, now
        page.wait_for_selector("#mission-merge", timeout=UI_S)  # the review, asked again
        # the tray follows the landing at once (the gesture asks it again, not its idle pace)
        page.wait_for_selector(
            f"#tray article[data-remote][data-mission='{mission}'][data-phase='landed']",
            timeout=1_500,
        )
        page.locator("#mission-view").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "mission-landed.png"), full_page=False)
        assert axe_serious(page, "a landed mission's view") == []

        # Merge still works on the landed mission: a fast-forward of main
        page.click("#mission-merge")
        page.wait_for_selector("#merge-confirm", timeout=UI_S)
        page.click("#merge-confirm .dialog-confirm")
        page.wait_for_selector("#merge-status[data-how='fast-forward']", timeout=UI_S)
        assert (folder / "AGENT.md").read_text().startswith(f"mission {mission}")
        assert (
            git(folder, "rev-parse", "HEAD").stdout
            == git(folder, "rev-parse", f"vbx/{mission}").stdout
        )

        # only the poster's claim: the kept log's record no longer has the candidate's hash
        claimed = _spawn(page, "Add AGENT.md again.", mission)
        _card_phase(page, claimed, "merge_wait")
        record_file = log_path(root, claimed).with_name(f"{claimed}.log.json")
        deadline = time.monotonic() + 30
        while not record_file.exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        record = json.loads(record_file.read_text())
        record_file.write_text(json.dumps({**record, "sha256": "sha256:" + "0" * 64}))
        page.click("#mission-land")
        page.wait_for_selector("#claim-confirm", timeout=UI_S)
        asked = page.text_content("#claim-confirm") or ""
        assert "only the poster's claim" in asked and "no log the runner kept" in asked, asked
        page.wait_for_selector("#mission-evidence[data-checked='false']", timeout=UI_S)
        assert "only the poster's claim" in (page.text_content("#mission-evidence") or "")
        page.click("#claim-confirm .dialog-cancel")
        page.wait_for_selector("#claim-confirm", state="detached", timeout=UI_S)
        _card_phase(page, claimed, "merge_wait")
        assert _store_version(folder) == 2, "cancelled: nothing imported"
        page.click("#mission-land")
        page.wait_for_selector("#claim-confirm", timeout=UI_S)
        page.click("#claim-confirm .dialog-confirm")
        _card_phase(page, claimed, "landed")
        page.wait_for_function(
            "() => document.querySelector('#mission-receipt')?.textContent "
            "=== 'receipt ✓ store v3'",
            timeout=UI_S,
        )
        assert _store_version(folder) == 3

        # custody: nothing the page received holds a secret or the root's path
        received = "\n".join(host.received())
        secrets = _secrets_at_rest(host) | {read_runner_secret(root / "host").reveal()}
        secrets.add((root / "host" / ".host-token").read_text().strip())
        assert any(s.startswith("vbx_") for s in secrets)
        for secret in secrets:
            for start in range(0, len(secret) - 12 + 1, 4):
                assert secret[start : start + 12] not in received
        assert str(root) not in received and "worktrees/" not in received
        assert "receipt ✓ store v3" in received and claimed in received
        host.assert_clean()
    finally:
        context.close()
        _stop(runner)
