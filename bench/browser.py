"""Headless Debian Chromium for the benchmark: one fresh profile per :class:`Profile`.

A profile is a persistent context on a new temporary user-data folder — a truly cold browser
(empty HTTP cache, code cache, service workers, OPFS, IndexedDB). The flags are the e2e
suite's (``e2e/conftest.py``); the binary is ``/usr/bin/chromium`` (never ``playwright
install``).

Timing is taken in the page (``performance.now()``, ms since navigation), never through the
driver: an init script records when each worker message kind first arrives (the host's boot
stages, ``ready``). Worker memory comes from CDP: the page session auto-attaches to its
dedicated workers (non-flat sessions), and each worker session to the workers that worker
starts (the export's reader lanes, environment servers: their messages travel wrapped in their
parent's), and asks them for their JS heap (:meth:`Profile.worker_memory`,
:meth:`Profile.workers_memory`); the host's Wasm memory comes from ``host.info``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from typing import Any

from playwright.sync_api import BrowserContext, CDPSession, Error, Page, Playwright

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
  // the site's status says Ready once its first screen is drawn (issue 34): "drawn"
  new MutationObserver(() => {
    const s = document.getElementById("status");
    if (s?.dataset.state === "ready" && !("drawn" in marks)) marks.drawn = performance.now();
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-state"] });
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
        # session path (outermost first: the page's worker, then the worker it started…) -> info
        self._workers: dict[tuple[str, ...], dict[str, str]] = {}
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

    def _attached(self, event: dict[str, Any], parent: tuple[str, ...] = ()) -> None:
        info = event["targetInfo"]
        path = (*parent, event["sessionId"])
        self._workers[path] = {"url": info.get("url", ""), "type": info["type"]}
        # the workers this worker starts are attached too (their messages come wrapped in its);
        # a page closed meanwhile (the end of a measurement) has nothing left to attach
        with contextlib.suppress(Error):
            self._post(
                path,
                {
                    "id": self._ident(),
                    "method": "Target.setAutoAttach",
                    "params": {
                        "autoAttach": True,
                        "waitForDebuggerOnStart": False,
                        "flatten": False,
                    },
                },
            )

    def _detached(self, event: dict[str, Any], parent: tuple[str, ...] = ()) -> None:
        gone = (*parent, event.get("sessionId", ""))
        for path in [p for p in self._workers if p[: len(gone)] == gone]:
            del self._workers[path]

    def _message(self, event: dict[str, Any], parent: tuple[str, ...] = ()) -> None:
        path = (*parent, event["sessionId"])
        data = json.loads(event["message"])
        if "id" in data:
            self._replies[data["id"]] = data
        elif data.get("method") == "Target.attachedToTarget":
            self._attached(data["params"], path)
        elif data.get("method") == "Target.detachedFromTarget":
            self._detached(data["params"], path)
        elif data.get("method") == "Target.receivedMessageFromTarget":
            self._message(data["params"], path)

    def _ident(self) -> int:
        self._next += 1
        return self._next

    def _post(self, path: tuple[str, ...], message: dict[str, Any]) -> None:
        """Send ``message`` to the worker at ``path``, wrapped once per level below the page."""
        for inner in reversed(path[1:]):
            message = {
                "id": self._ident(),
                "method": "Target.sendMessageToTarget",
                "params": {"sessionId": inner, "message": json.dumps(message)},
            }
        self._cdp.send(
            "Target.sendMessageToTarget", {"sessionId": path[0], "message": json.dumps(message)}
        )

    def _worker_paths(self, url_part: str) -> list[tuple[str, ...]]:
        return [p for p, w in self._workers.items() if url_part in w["url"]]

    def _worker_send(self, url_part: str, method: str, params: dict | None = None) -> dict:
        paths = self._worker_paths(url_part)
        if not paths:
            raise RuntimeError(f"no worker matching {url_part!r}: {self._workers}")
        return self._send_to(paths[-1], method, params)

    def _send_to(self, path: tuple[str, ...], method: str, params: dict | None = None) -> dict:
        ident = self._ident()
        self._post(path, {"id": ident, "method": method, "params": params or {}})
        for _ in range(600):
            if ident in self._replies:
                reply = self._replies.pop(ident)
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.page.wait_for_timeout(25)
        raise TimeoutError(f"{method} on worker {path!r}: no reply")

    def worker_memory(self, url_part: str, gc: bool = True) -> dict[str, int]:
        """The worker's JS heap, bytes: ``js_heap_used_bytes`` / ``js_heap_total_bytes`` and
        ``backing_store_bytes`` (ArrayBuffers outside the Wasm memory, e.g. chunks in flight),
        from ``Runtime.getHeapUsage``; ``gc`` collects garbage first. The Wasm memory is not
        in these figures (the host reports it in ``host.info``)."""
        paths = self._worker_paths(url_part)
        if not paths:
            raise RuntimeError(f"no worker matching {url_part!r}: {self._workers}")
        return self._memory_of(paths[-1], gc)

    def workers_memory(self, url_part: str, gc: bool = True) -> dict[str, int]:
        """The same figures summed over every worker whose URL holds ``url_part`` (nested
        ones included; all zero and ``workers`` 0 when there is none), with ``workers``, how
        many were counted. A worker ending while it is asked is left out."""
        total = {"js_heap_used_bytes": 0, "js_heap_total_bytes": 0, "backing_store_bytes": 0}
        counted = 0
        for path in self._worker_paths(url_part):
            try:
                one = self._memory_of(path, gc)
            except (RuntimeError, TimeoutError):
                continue
            counted += 1
            for key in total:
                total[key] += one[key]
        return {**total, "workers": counted}

    def _memory_of(self, path: tuple[str, ...], gc: bool) -> dict[str, int]:
        if gc:
            self._send_to(path, "HeapProfiler.collectGarbage")
        usage = self._send_to(path, "Runtime.getHeapUsage")
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
