"""Shared helpers for the tray, compose, mission, accessibility and hostile-string journeys.

Everything goes through the page's own host client (``HostPage.call``), as the UI does; a
person's gesture is ``human=True`` (the page stamps ``origin: "human-ui"``). Letters carry
real timestamps from the test's clock, which is the browser's clock too (same machine); a
stagnant head is one whose ``started_at``/``updated_at`` the test sets more than 24 h back.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from e2e.hostpage import HostPage

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "docs" / "screenshots"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
HUMAN = "human-ui"
SHA_LOG = "sha256:" + "a" * 64
SHA_ARTIFACT = "sha256:" + "b" * 64


def iso(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ago(**delta: float) -> str:
    """The instant ``delta`` before now (e.g. ``ago(hours=30)``)."""
    return iso(datetime.now(UTC) - timedelta(**delta))


def new_project(host: HostPage, name: str, blocks: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """Create a project with ``blocks`` (name, purpose) added by the owner; return ids."""
    pid = host.ok("project.create", {"name": name})["result"]["project"]["id"]
    added: list[str] = []
    if blocks:
        ops = [{"op": "add", "name": n, "purpose": p} for n, p in blocks]
        answer = host.ok("blocks.candidate_edit", {"project": pid, "ops": ops}, human=True)
        added = answer["result"]["added"]
    return pid, added


def open_in_ui(host: HostPage, pid: str, surface: str | None = None) -> None:
    """Open project ``pid`` in the page (as a click on it would), then ``surface``."""
    host.page.evaluate("(id) => voicebox.app.openProject(id)", pid)
    host.page.wait_for_function("(id) => voicebox.app.project?.id === id", arg=pid)
    if surface:
        go(host.page, surface)


def go(page: Page, surface: str) -> None:
    """Click the surface's button in the nav."""
    page.click(f"#surfaces button[data-surface='{surface}']")


def letter(
    *,
    mission: str,
    block: str,
    brain: str,
    seq: int = 1,
    prev: str | None = None,
    phase: str = "judging",
    started: str | None = None,
    updated: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A letter as a runner would send it (only required fields plus ``fields``)."""
    started = started or ago(hours=2)
    body: dict[str, Any] = {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission,
        "mission_seq": seq,
        "prev_letter_id": prev,
        "block_id": block,
        "brain_ref": brain,
        "seat": "hand",
        "runner_id": "build-1",
        "capability": "build-runner",
        "phase": phase,
        "started_at": started,
        "updated_at": updated or started,
    }
    if phase in ("merge_wait", "gate", "review") and "gate" not in fields:
        body["gate"] = {"command": "pytest -q", "exit_status": 0, "artifact_hash": SHA_LOG}
    body.update(fields)
    return body


def candidate(block: str, boundary: int = 1) -> dict[str, Any]:
    """A complete receipt candidate whose window ended an hour ago."""
    return {
        "block_id": block,
        "type": "test",
        "scope": {"boundary_version": boundary, "contract_version": 1},
        "evidence": {
            "artifact_hash": SHA_ARTIFACT,
            "evidence_refs": ["tests/test_importer.py"],
            "window": {"started_at": ago(hours=2), "finished_at": ago(hours=1)},
        },
    }


class Missions:
    """Post letters for one project the way an agent would (no gesture)."""

    def __init__(self, host: HostPage, pid: str, brain: str, block: str) -> None:
        self.host, self.pid, self.brain, self.block = host, pid, brain, block
        self.heads: dict[str, dict[str, Any]] = {}

    def post(self, mission: str, phase: str, agent: str = "hand-7", **fields: Any) -> dict:
        """Extend ``mission`` (or open it) with a letter in ``phase``; return the post answer."""
        head = self.heads.get(mission)
        fields.setdefault("block", self.block)
        body = letter(
            mission=mission,
            brain=self.brain,
            seq=1 if head is None else head["mission_seq"] + 1,
            prev=None if head is None else head["sha12"],
            phase=phase,
            **fields,
        )
        posted = self.host.ok(
            "mission.post", {"project": self.pid, "agent_id": agent, "letter": body}
        )["result"]
        self.heads[mission] = posted
        return posted

    def chain(self, mission: str, phases: tuple[str, ...], **last: Any) -> dict:
        """Post ``phases`` in order; ``last`` fields go on the final letter."""
        posted: dict = {}
        for i, phase in enumerate(phases):
            posted = self.post(mission, phase, **(last if i == len(phases) - 1 else {}))
        return posted


def refresh_tray(page: Page) -> None:
    """Ask the tray to read the host now (it also polls every few seconds)."""
    page.evaluate("() => voicebox.app.tray.refresh({ force: true })")


def expand_tray(page: Page) -> None:
    """Make sure the tray is expanded."""
    if page.get_attribute("#tray", "data-open") != "true":
        page.click("#tray-toggle")
    page.wait_for_selector("#tray[data-open='true'] #tray-body")


def collapse_tray(page: Page) -> None:
    """Make sure the tray is collapsed."""
    if page.get_attribute("#tray", "data-open") != "false":
        page.click("#tray-toggle")
    page.wait_for_selector("#tray[data-open='false'] #tray-counts")


def card(page: Page, mission: str) -> str:
    """The selector of a mission's card in the tray."""
    return f"#tray-cards article[data-mission='{mission}']"


MAILBOX_FILES = """
async (pid) => {
  const root = await navigator.storage.getDirectory();
  let dir = await root.getDirectoryHandle("projects");
  dir = await dir.getDirectoryHandle(pid);
  dir = await dir.getDirectoryHandle(".voicebox");
  const out = {};
  async function hex(file) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const d = await crypto.subtle.digest("SHA-256", bytes);
    return [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join("") + ":" + bytes.length;
  }
  try {
    const box = await dir.getDirectoryHandle("mailbox");
    for await (const [name, h] of box.entries()) if (h.kind === "file") out["mailbox/" + name] = await hex(await h.getFile());
  } catch (e) { /* no mailbox yet */ }
  try { out["skeleton.json"] = await hex(await (await dir.getFileHandle("skeleton.json")).getFile()); } catch (e) { /* none */ }
  return out;
}
"""


def mailbox_files(page: Page, pid: str) -> dict[str, str]:
    """sha256:length of every mailbox segment and of the block store, read from OPFS."""
    return page.evaluate(MAILBOX_FILES, pid)


def axe_serious(page: Page, label: str) -> list[dict[str, Any]]:
    """Run axe-core inside the page (never add_script_tag: Trusted Types stays on); return the
    serious and critical violations, each with where it was found."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("() => axe.run(document, { resultTypes: ['violations'] })")
    bad = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    return [
        {
            "where": label,
            "id": v["id"],
            "impact": v["impact"],
            "nodes": [n["target"] for n in v["nodes"]][:5],
        }
        for v in bad
    ]


def shot(page: Page, name: str) -> Path:
    """Save a screenshot of the whole viewport into docs/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def sha256_text(text: str) -> str:
    """``sha256:`` + hex sha256 of ``text``'s UTF-8 bytes (what ``packet_ref`` names)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
