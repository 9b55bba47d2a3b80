"""Whose storage lock a booting host finds (issue 18, cold boot; docs/security.md, "Two tabs").

A host worker that finds the Web Lock ``voicebox-host`` held looks at who holds it: the holder
also holds ``voicebox-host-page-<id>``, the id of the page that started it, and each page holds
``voicebox-page-<its id>`` for its life. A holder whose page is gone — a reload, whose old
worker the browser is still ending — is waited for (up to ``GRACE_MS``, 5 s, in
worker/host.mjs) and the boot goes on as a plain boot: no standby. A holder whose page is alive
(another tab) means standby at once, then the take-over when it lets go.

The holder here is the page itself (an init script, before the page's own scripts run): it
holds the locks a previous worker would, and lets them go once the new worker has shown it
started (its ``runtime`` boot stage) — after a pause well inside the grace when the holder's
page is gone, or, when it is alive, as soon as standby shows (at the latest 2.5 s after that
stage, half the grace: a worker that waited the grace for another tab never shows standby).
"""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage
from e2e.site import BASE_URL

HOLDER = """
(() => {
  if (window !== window.top) return; // the sandbox frame (an opaque origin: no locks)
  const seen = [];
  Object.defineProperty(window, "__bootSeen", { value: seen });
  let letGo;
  const released = new Promise((resolve) => { letGo = resolve; });
  navigator.locks.request("voicebox-host", () => {
    navigator.locks.request("voicebox-host-page-%(holder)s", () => released);
    return released;
  });
  if (%(alive)s) navigator.locks.request("voicebox-page-%(holder)s", () => released);
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

HOLDER_PAGE = "0b5e7a3c-1d2f-4e6a-9b8c-7d6e5f4a3b2c"


def _boot(site_context: BrowserContext, alive: bool, pause_ms: int) -> tuple[HostPage, list]:
    script = HOLDER % {"holder": HOLDER_PAGE, "alive": str(alive).lower(), "pause": pause_ms}
    site_context.add_init_script(script)
    host = HostPage(site_context.new_page())
    host.page.goto(BASE_URL)
    host.page.wait_for_function(
        "() => document.getElementById('status')?.dataset.state === 'ready'", timeout=90_000
    )
    return host, host.page.evaluate("() => [...window.__bootSeen]")


def test_a_lock_still_held_by_a_host_whose_page_is_gone_is_waited_for_not_standby(
    site_context: BrowserContext,
) -> None:
    host, seen = _boot(site_context, False, 1000)
    assert "standby" not in seen, seen
    assert "boot:takeover" not in seen, seen
    assert seen.index("let-go") < seen.index("ready"), seen  # it did wait for the lock
    assert host.ok("host.info")["ok"] is True
    assert host.page.is_hidden("#host-notice")  # a plain boot: no take-over notice
    host.assert_clean()


def test_a_lock_held_by_a_host_whose_page_is_alive_means_standby_then_takeover(
    site_context: BrowserContext,
) -> None:
    host, seen = _boot(site_context, True, 2500)
    assert "standby" in seen, seen
    assert seen.index("standby") < seen.index("let-go") < seen.index("ready"), seen
    assert "boot:takeover" in seen, seen
    assert host.ok("host.info")["ok"] is True
    host.assert_clean()
