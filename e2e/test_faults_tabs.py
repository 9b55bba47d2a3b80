"""Two tabs of the same site (issue 10; SPEC §3): one host owns the storage at a time.

The design (docs/security.md, "Two tabs"): the tab that opens first holds the Web Lock
``voicebox-host`` for its worker's life. A second tab's worker waits in the lock's queue and
never opens the storage; since issue 33 item 2 its page is a follower — every call it makes
is answered by the first tab's one host, through a brokered port (e2e/test_tabs_workspace.py
for the workspace) — and when the first tab closes it takes over, and sees every write the
first one made. Without the broker (no SharedWorker) it would answer ``host-active-elsewhere``.

IndexedDB ``versionchange``: a connection asked to upgrade closes at once, so the other open
never waits, and the host reopens at the new version and keeps auditing.
"""

from __future__ import annotations

import time
from pathlib import Path

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.site import BASE_URL

SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
WRITES = 60

# The first tab writes in a loop, from its own page: a new file per round plus one file
# overwritten every round, each write awaited before the next.
WRITE_LOOP = """([project, rounds]) => {
  const host = window.voicebox.host;
  window.__loop = { done: 0, refused: [] };
  window.__loopFinished = (async () => {
    for (let i = 0; i < rounds; i++) {
      const text = new TextEncoder().encode(`round ${i}\\n`.repeat(1 + (i % 7)));
      for (const path of [`loop/${i}.txt`, "counter.txt"]) {
        try { await host.call("file.write", { project, path }, { body: text.slice().buffer }); }
        catch (err) { window.__loop.refused.push(`${path}: ${err.code}`); }
      }
      window.__loop.done = i + 1;
    }
  })();
}"""

# What the second tab asks while the first writes: every request gets its own answer, from the
# one host.
STANDBY_CALLS = """async ([project]) => {
  const host = window.voicebox.host;
  const body = () => new TextEncoder().encode("from the second tab").buffer;
  const asks = [
    ["host.info", {}], ["project.list", {}], ["audit.verify", {}],
    ["file.write", { project, path: "second-tab.txt" }, body()],
    ["file.read", { project, path: "counter.txt" }],
    ["project.create", { name: "second tab" }], ["no.such.op", {}],
  ];
  const out = [];
  for (let round = 0; round < 3; round++) {
    for (const [op, args, b] of asks) {
      try { await host.call(op, args, { body: round === 0 ? b ?? null : (b ? body() : null) }); out.push({ op, ok: true }); }
      catch (err) { out.push({ op, code: err.code, status: err.status, message: err.message }); }
    }
  }
  // a message whose own id cannot be read is still answered, under its transport id
  try { await host.callRaw("not json at all", "raw-1"); out.push({ op: "raw", ok: true }); }
  catch (err) { out.push({ op: "raw", code: err.code, status: err.status }); }
  return out;
}"""


def _state(host: HostPage) -> str | None:
    return host.page.get_attribute("#status", "data-state")


def _wait_state(host: HostPage, state: str, timeout: float = 90_000) -> None:
    host.page.wait_for_function(
        "(s) => document.getElementById('status')?.dataset.state === s", arg=state, timeout=timeout
    )


def test_a_second_tab_is_answered_by_the_one_host_then_takes_over_with_no_write_lost(
    site_context: BrowserContext,
) -> None:
    first = HostPage(site_context.new_page())
    first.open()
    project = first.ok("project.create", {"name": "two tabs"})["result"]["project"]["id"]
    first.ok("file.write", {"project": project, "path": "counter.txt"}, b"start")

    second = HostPage(site_context.new_page())
    second.page.goto(BASE_URL)
    _wait_state(second, "ready")
    assert second.page.evaluate("() => window.voicebox.host.role") == "follower"
    assert not second.page.is_visible("#host-standby")
    assert second.page.locator("nav button[data-surface]").first.is_enabled()

    first.page.evaluate(WRITE_LOOP, [project, WRITES])
    first.page.wait_for_function("() => window.__loop.done >= 1")
    answers = second.page.evaluate(STANDBY_CALLS, [project])
    loop_during = first.page.evaluate("() => window.__loop.done")
    assert len(answers) == 22
    by_op = {a["op"]: a for a in answers}
    plain = ("host.info", "project.list", "audit.verify", "file.write", "file.read")
    assert all(a.get("ok") for a in answers if a["op"] in plain), answers
    assert not any(a.get("code") == "host-active-elsewhere" for a in answers), answers
    assert by_op["no.such.op"]["code"] == "operation-unknown"
    assert by_op["raw"]["code"] == "message-malformed"
    assert 0 < loop_during < WRITES, "the first tab kept writing while the second was answered"
    SHOTS.mkdir(exist_ok=True)
    second.page.screenshot(path=str(SHOTS / "two-tabs-follower.png"))

    first.page.evaluate("() => window.__loopFinished")
    loop = first.page.evaluate("() => window.__loop")
    assert loop == {"done": WRITES, "refused": []}
    assert second.page.evaluate("() => window.voicebox.host.role") == "follower"

    closed_at = time.monotonic()
    first.page.close()
    second.page.wait_for_function("() => window.voicebox.host.role === 'leader'")
    walk = second.ok("file.walk", {"project": project})["result"]["files"]
    took_over_s = time.monotonic() - closed_at
    print(f"\ntake-over after the first tab closed: {took_over_s:.2f} s")
    assert _state(second) == "ready"
    assert second.page.is_visible("#host-notice")
    second.page.screenshot(path=str(SHOTS / "two-tabs-took-over.png"))

    paths = {f["path"] for f in walk}
    assert paths == {"counter.txt", "second-tab.txt", *(f"loop/{i}.txt" for i in range(WRITES))}
    for i in range(WRITES):
        data = second.ok("file.read", {"project": project, "path": f"loop/{i}.txt"})["body"]
        assert data == f"round {i}\n".encode() * (1 + i % 7)
    last = WRITES - 1
    counter = second.ok("file.read", {"project": project, "path": "counter.txt"})["body"]
    assert counter == f"round {last}\n".encode() * (1 + last % 7)

    verdict = second.ok("audit.verify")["result"]
    assert verdict["ok"], verdict
    writes = second.ok("audit.list", {"op": "file.write", "limit": 500})["result"]["records"]
    assert sum(r["decision"] == "admitted" for r in writes) == 1 + 2 * WRITES + 3
    assert second.ok("audit.list", {"rule": "host-active-elsewhere"})["result"]["records"] == []
    second.ok("file.write", {"project": project, "path": "second-tab.txt"}, b"mine now")
    assert _state(second) == "ready"
    second.assert_clean()


def test_an_indexeddb_upgrade_elsewhere_never_hangs_and_the_audit_goes_on(host: HostPage) -> None:
    project = host.ok("project.create", {"name": "versionchange"})["result"]["project"]["id"]
    before = host.ok("file.write", {"project": project, "path": "a.txt"}, b"a")["logged"]
    upgraded = host.page.evaluate(
        """async () => {
          const version = (await indexedDB.databases()).find((d) => d.name === "voicebox-host").version;
          const started = performance.now();
          return await new Promise((resolve) => {
            const req = indexedDB.open("voicebox-host", version + 1);
            req.onblocked = () => resolve({ blocked: true });
            req.onsuccess = () => { req.result.close(); resolve({ version: version + 1, ms: performance.now() - started }); };
            req.onerror = () => resolve({ error: req.error.name });
            setTimeout(() => resolve({ hung: true }), 5000);
          }); }"""
    )
    assert "version" in upgraded, upgraded
    after = host.ok("file.write", {"project": project, "path": "b.txt"}, b"b")["logged"]
    assert isinstance(after, int) and after > before, "the host kept auditing after the upgrade"
    records = host.ok("audit.list", {"op": "file.write"})["result"]["records"]
    assert [r["seq"] for r in records][:2] == [after, before]
    assert host.ok("audit.verify")["result"]["ok"]
    host.assert_clean()
