"""Headless Debian Chromium for the benchmark: one fresh profile per :class:`Profile`.

A profile is a persistent context on a new temporary user-data folder — a truly cold browser
(empty HTTP cache, code cache, service workers, OPFS, IndexedDB). The flags are the e2e
suite's (``e2e/conftest.py``); the binary is ``/usr/bin/chromium`` (never ``playwright
install``).

Timing is taken in the page (``performance.now()``, ms since navigation), never through the
driver: an init script records when each worker message kind first arrives (the host's boot
stages, ``ready``). Worker memory comes from CDP: the page session auto-attaches to its
dedicated workers (non-flat sessions) and asks them for their JS heap
(:meth:`Profile.worker_memory`); the host's Wasm memory comes from ``host.info``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from typing import Any

from playwright.sync_api import BrowserContext, CDPSession, Page, Playwright

from tests.chromium import CHROMIUM, CHROMIUM_ARGS

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "Profile"]

BOOT_TIMEOUT_MS = 180_000

MARKS_SCRIPT = """
(() => {
  const marks = {};
  Object.defineProperty(window, "__marks", { value: marks });
  const Original = window.Worker;
  window.Worker = class MarkedWorker extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const d = event.data;
        if (!d || typeof d !== "object") return;
        const key = d.kind === "boot" ? `boot:${d.stage}` : d.kind;
        if (!(key in marks)) marks[key] = performance.now();
      });
    }
  };
})();
"""


class Profile:
    """A fresh Chromium profile with one tab (see module docstring). Use as a context manager."""

    def __init__(self, playwright: Playwright) -> None:
        self._dir = tempfile.mkdtemp(prefix="vbx-profile-")
        self.context: BrowserContext = playwright.chromium.launch_persistent_context(
            self._dir,
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 860},
        )
        self.context.add_init_script(MARKS_SCRIPT)
        self.page: Page = self.context.pages[0] if self.context.pages else self.context.new_page()
        self.console_errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("worker", lambda w: w.on("console", self._console))
        self._cdp: CDPSession = self.context.new_cdp_session(self.page)
        self._workers: dict[str, dict[str, str]] = {}
        self._replies: dict[int, dict[str, Any]] = {}
        self._next = 0
        self._cdp.on("Target.attachedToTarget", self._attached)
        self._cdp.on("Target.detachedFromTarget", self._detached)
        self._cdp.on("Target.receivedMessageFromTarget", self._message)
        self._cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": False},
        )

    def __enter__(self) -> Profile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the browser and delete the profile folder."""
        try:
            self.context.close()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.console_errors.append(msg.text)

    def _attached(self, event: dict[str, Any]) -> None:
        info = event["targetInfo"]
        self._workers[event["sessionId"]] = {"url": info.get("url", ""), "type": info["type"]}

    def _detached(self, event: dict[str, Any]) -> None:
        self._workers.pop(event.get("sessionId", ""), None)

    def _message(self, event: dict[str, Any]) -> None:
        data = json.loads(event["message"])
        if "id" in data:
            self._replies[data["id"]] = data

    def _worker_send(self, url_part: str, method: str, params: dict | None = None) -> dict:
        session = next(
            (s for s, w in reversed(self._workers.items()) if url_part in w["url"]), None
        )
        if session is None:
            raise RuntimeError(f"no worker matching {url_part!r}: {self._workers}")
        self._next += 1
        ident = self._next
        self._cdp.send(
            "Target.sendMessageToTarget",
            {
                "sessionId": session,
                "message": json.dumps({"id": ident, "method": method, "params": params or {}}),
            },
        )
        for _ in range(600):
            if ident in self._replies:
                reply = self._replies.pop(ident)
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.page.wait_for_timeout(25)
        raise TimeoutError(f"{method} on worker {url_part!r}: no reply")

    def worker_memory(self, url_part: str, gc: bool = True) -> dict[str, int]:
        """The worker's JS heap, bytes: ``js_heap_used_bytes`` / ``js_heap_total_bytes`` and
        ``backing_store_bytes`` (ArrayBuffers outside the Wasm memory, e.g. chunks in flight),
        from ``Runtime.getHeapUsage``; ``gc`` collects garbage first. The Wasm memory is not
        in these figures (the host reports it in ``host.info``)."""
        if gc:
            self._worker_send(url_part, "HeapProfiler.collectGarbage")
        usage = self._worker_send(url_part, "Runtime.getHeapUsage")
        return {
            "js_heap_used_bytes": int(usage.get("usedSize", 0)),
            "js_heap_total_bytes": int(usage.get("totalSize", 0)),
            "backing_store_bytes": int(usage.get("backingStorageSize", 0)),
        }

    def goto(self, url: str) -> None:
        """Navigate (a new document: the marks start again at 0)."""
        self.page.goto(url, wait_until="commit")

    def open_tools(self, site_url: str) -> None:
        """Load ``bench/tools.html`` and wait for its helpers (``benchPopulate``, ...)."""
        self.page.goto(site_url + "bench/tools.html", wait_until="commit")
        self.page.wait_for_function("() => typeof window.benchAudit === 'function'")

    def reload(self) -> None:
        """Reload the tab."""
        self.page.reload(wait_until="commit")

    def wait_status(self) -> str:
        """Wait until ``#status`` leaves ``booting``; return its state (``ready``/``error``)."""
        self.page.wait_for_function(
            "() => { const s = document.getElementById('status');"
            " return s && s.dataset.state && s.dataset.state !== 'booting'; }",
            timeout=BOOT_TIMEOUT_MS,
            polling=50,
        )
        state = str(self.page.get_attribute("#status", "data-state"))
        if state != "ready":
            raise RuntimeError(f"boot failed: {self.page.text_content('body')}")
        return state

    def marks(self) -> dict[str, float]:
        """When each worker message kind first arrived, ms since navigation."""
        return dict(self.page.evaluate("() => ({...window.__marks})"))

    def evaluate(self, script: str, arg: Any = None) -> Any:
        """Run ``script`` (a function expression) in the page with ``arg``."""
        return self.page.evaluate(script, arg)
