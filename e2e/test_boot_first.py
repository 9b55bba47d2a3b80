"""The host worker starts first (issue 34, cold boot; page/start-host.mjs).

``index.html`` loads a small module that spawns the host worker before the page's own module
(``app.mjs``, which imports every surface) is in; the host client holds what the host says
until ``app.mjs`` listens (``HostClient.hold`` / ``listen``, page/host-client.mjs). The laws:
the worker is spawned before the page's module has run, and nothing the host says before the
page listens is lost — it is heard, in order, when the page listens. And the status says Ready once the first screen
is drawn, not when the host is (page/app.mjs).
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import BrowserContext, Route

from e2e.site import BASE_URL

ORDER = """
(() => {
  if (window !== window.top) return;
  const seen = [];
  Object.defineProperty(window, "__order", { value: seen });
  const Original = window.Worker;
  window.Worker = class Spawned extends Original {
    constructor(...args) {
      seen.push(`worker ${String(args[0]).split("/").pop()}`);
      super(...args);
    }
  };
  const listen = window.addEventListener.bind(window);
  window.addEventListener = (type, ...rest) => {
    if (type === "beforeunload") seen.push("app.mjs runs"); // its first lines (page/app.mjs)
    return listen(type, ...rest);
  };
})();
"""


def test_the_host_worker_is_spawned_before_the_pages_own_module_runs(
    site_context: BrowserContext,
) -> None:
    site_context.add_init_script(ORDER)
    page = site_context.new_page()
    page.goto(BASE_URL)
    page.wait_for_selector("#status[data-state='ready']", timeout=180_000)
    order = page.evaluate("() => [...window.__order]")
    assert order[:2] == ["worker host.mjs", "app.mjs runs"], order


HELD = """
async () => {
  const { host } = await import("./start-host.mjs");
  const deadline = performance.now() + 170_000;
  while (host.state !== "ready" && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const heard = [];
  for (const type of ["boot", "standby", "ready", "fatal", "lost"])
    host.addEventListener(type, (event) => heard.push([type, event.detail?.stage ?? null]));
  await new Promise((resolve) => setTimeout(resolve, 100)); // a turn: nothing is said unasked
  const before = heard.length;
  host.listen();
  return { state: host.state, before, heard };
}
"""


def test_what_the_host_says_before_the_page_listens_is_heard_in_order_when_it_listens(
    site_context: BrowserContext, dist: Path
) -> None:
    """A page of start-host.mjs alone (no app.mjs: nothing listens): the host boots to ready,
    every word of it held; listening then hears the boot stages in order, and ready last."""
    index = (dist / "index.html").read_text(encoding="utf-8")
    alone = re.sub(r'<script type="module" src="\./app\.mjs"></script>\n?', "", index)
    assert alone != index and "start-host.mjs" in alone

    def serve(route: Route) -> None:
        route.fulfill(status=200, body=alone, headers={"content-type": "text/html"})

    page = site_context.new_page()
    page.route(BASE_URL, serve)
    page.goto(BASE_URL)
    got = page.evaluate(HELD)
    assert got["state"] == "ready"
    assert got["before"] == 0  # held: nothing was said while the page did not listen
    heard = got["heard"]
    assert [t for t, _ in heard[:-1]] == ["boot"] * (len(heard) - 1) and heard[-1][0] == "ready"
    stages = [s for _, s in heard[:-1]]
    assert stages[0] == "lock" and "runtime" in stages and stages[-1] == "host", stages
    assert stages.index("runtime") < stages.index("packages") < stages.index("host")


STATUSES = """
(() => {
  if (window !== window.top) return;
  const seen = [];
  Object.defineProperty(window, "__statuses", { value: seen });
  new MutationObserver(() => {
    const s = document.getElementById("status");
    if (!s) return;
    const key = `${s.dataset.state}|${s.textContent}`;
    if (seen.length && seen[seen.length - 1].key === key) return;
    // the projects surface is drawn once its list has come and its form is in the page
    const drawn = Boolean(document.querySelector('[data-surface="projects"] #create-project'));
    seen.push({ key, state: s.dataset.state, text: s.textContent, drawn });
  }).observe(document, { subtree: true, attributes: true, childList: true, characterData: true });
})();
"""


def test_the_status_says_ready_only_once_the_first_screen_is_drawn(
    site_context: BrowserContext,
) -> None:
    """Issue 34 (a fresh tester: "Ready" showed 1–2 s before the page drew anything): between
    the host's ready and the projects drawn the status says what is loading, and it says
    Ready when the first screen is on it."""
    site_context.add_init_script(STATUSES)
    page = site_context.new_page()
    page.goto(BASE_URL)
    page.wait_for_selector("#status[data-state='ready']", timeout=180_000)
    seen = page.evaluate("() => window.__statuses.map(({ key, ...s }) => s)")
    ready = [s for s in seen if s["state"] == "ready"]
    assert ready and ready[0]["drawn"], seen
    assert ready[0]["text"].startswith("Ready — Python 3.14"), seen
    loading = [s for s in seen if s["text"] == "Loading projects…"]
    assert loading and loading[0]["state"] == "booting" and not loading[0]["drawn"], seen
    assert seen.index(loading[0]) < seen.index(ready[0])
