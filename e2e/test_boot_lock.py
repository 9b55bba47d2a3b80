"""Whose storage lock a booting host finds (issue 18, cold boot; docs/security.md, "Two tabs").

A host worker that finds the Web Lock ``voicebox-host`` held looks at who holds it: the holder
also holds ``voicebox-host-tab-<tab id>`` (the id the page keeps in its tab's
``sessionStorage``). This tab's own previous host — a reload whose old worker is still being
ended — is waited for (up to ``SAME_TAB_GRACE_MS``, 5 s, in worker/host.mjs) and the boot goes
on as a plain boot: no standby. Another tab's host means standby at once, then the take-over
when it lets go.

The holder here is the page itself (an init script, before the page's own scripts run): it
holds both locks, as a previous worker would, and lets them go once the new worker has shown
it started (its ``runtime`` boot stage) — after a pause well inside the grace for this tab's
id, or, for another tab's id, when standby shows (at the latest 2.5 s later, half the grace:
a worker that waited the grace for another tab would then never show standby).
"""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.site import BASE_URL

HOLDER = """
(() => {
  if (window !== window.top) return; // the sandbox frame (an opaque origin: no storage)
  const seen = [];
  Object.defineProperty(window, "__bootSeen", { value: seen });
  if (!sessionStorage.getItem("voicebox-tab")) sessionStorage.setItem("voicebox-tab", "%(tab)s");
  const holder = "%(holder)s" === "this" ? sessionStorage.getItem("voicebox-tab") : "%(holder)s";
  let letGo;
  const released = new Promise((resolve) => { letGo = resolve; });
  const held = (name) => navigator.locks.request(name, () => released);
  navigator.locks.request("voicebox-host", () => {
    held("voicebox-host-tab-" + holder);
    return released;
  });
  const Original = window.Worker;
  window.Worker = class Held extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const d = event.data;
        if (!d || typeof d !== "object") return;
        seen.push(d.kind === "boot" ? `boot:${d.stage}` : d.kind);
        if (d.kind === "boot" && d.stage === "runtime") setTimeout(() => { seen.push("let-go"); letGo(); }, %(pause)d);
        if (d.kind === "standby") { seen.push("let-go"); letGo(); }
      });
    }
  };
})();
"""

THIS_TAB = "0b5e7a3c-1d2f-4e6a-9b8c-7d6e5f4a3b2c"
OTHER_TAB = "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"


def _boot(site_context: BrowserContext, holder: str, pause_ms: int) -> tuple[HostPage, list]:
    site_context.add_init_script(HOLDER % {"tab": THIS_TAB, "holder": holder, "pause": pause_ms})
    host = HostPage(site_context.new_page())
    host.page.goto(BASE_URL)
    host.page.wait_for_function(
        "() => document.getElementById('status')?.dataset.state === 'ready'", timeout=90_000
    )
    return host, host.page.evaluate("() => [...window.__bootSeen]")


def test_a_lock_still_held_by_this_tabs_previous_host_is_waited_for_not_standby(
    site_context: BrowserContext,
) -> None:
    host, seen = _boot(site_context, "this", 1000)
    assert "standby" not in seen, seen
    assert "boot:takeover" not in seen, seen
    assert seen.index("let-go") < seen.index("ready"), seen  # it did wait for the lock
    assert host.ok("host.info")["ok"] is True
    assert host.page.is_hidden("#host-notice")  # a plain boot: no take-over notice
    host.assert_clean()


def test_a_lock_held_by_another_tabs_host_means_standby_at_once_then_takeover(
    site_context: BrowserContext,
) -> None:
    host, seen = _boot(site_context, OTHER_TAB, 2500)
    assert "standby" in seen, seen
    assert seen.index("standby") < seen.index("let-go") < seen.index("ready"), seen
    assert "boot:takeover" in seen, seen
    assert host.ok("host.info")["ok"] is True
    host.assert_clean()
