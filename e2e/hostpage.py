"""A page of the running site, with what the tests watch and a way to call the host.

Watched from before the page's own scripts run (an init script): ``securitypolicyviolation``
events (with the element and script blamed; kept across reloads in :attr:`HostPage.violations`),
console errors (page and worker), uncaught page errors and dialogs (any ``alert`` would
be an injection). :meth:`HostPage.call` sends a host-protocol request the same way the page's
UI does, through the page's own client.

Custody (SPEC §1, §4): every message the page receives — from its workers, frames and service
worker — is recorded, and :meth:`HostPage.assert_custody` finds no bearer (``vbx_…``) or host
token (``vbh_…``) in any of them. :meth:`HostPage.assert_clean` runs it, and so does every e2e
test, after its body, for every page still open (``e2e/conftest.py``).
"""

from __future__ import annotations

import base64
import json
import re
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import BrowserContext, ConsoleMessage, Dialog, Page
from playwright.sync_api import Error as PlaywrightError

from e2e.site import BASE_URL

BOOT_TIMEOUT_MS = 90_000
SECRET_SHAPE = re.compile(r"vb[xh]_[A-Za-z0-9_-]{20,}")
"""A bearer (``vbx_`` + 256 bits) or a host token (``vbh_`` + …), URL-safe base64."""

WATCH_SCRIPT = """
(() => {
  const seen = [];
  Object.defineProperty(window, "__cspViolations", { value: seen });
  // Where a violation happened: the element (inside the editor's shadow root too — the event is
  // composed, so this document listener hears it) with its ancestors, and the script line the
  // browser blames when a script caused it (empty when the browser's own code wrote it).
  const describe = (node) => {
    const parts = [];
    for (let n = node; n && parts.length < 6; n = n.parentNode ?? n.host) {
      if (n.nodeType === 11) { parts.push("#shadow-root"); continue; }
      if (n.nodeType !== 1) continue;
      parts.push(n.nodeName.toLowerCase() + (n.id ? `#${n.id}` : "") + [...n.classList].map((c) => `.${c}`).join(""));
    }
    return parts.join(" < ");
  };
  document.addEventListener("securitypolicyviolation", (e) => {
    const v = {
      directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample,
      element: describe(e.composedPath()[0]),
      source: e.sourceFile ? `${e.sourceFile}:${e.lineNumber}:${e.columnNumber}` : "",
      document: location.href,
    };
    seen.push(v);
    // also to the test, which keeps it across reloads and navigations (this list does not)
    window.__vbxViolation?.(v);
  }, true);
  // The custody recorder: every message any worker posts to this page, as text (binary
  // payloads decoded byte-for-byte), so a test can scan all of it for secrets. A binary
  // payload over 64 KiB (an archive chunk) is scanned when it arrives and kept as a summary
  // that carries any token-shaped match, so a 200 MB export neither fills the page's heap nor
  // crosses the driver.
  const received = [];
  Object.defineProperty(window, "__received", { value: received });
  const latin1 = new TextDecoder("latin1");
  const TOKEN = new RegExp(SECRET_SHAPE);
  const bytesText = (u8) => {
    const text = latin1.decode(u8);
    if (u8.byteLength <= 65536) return text;
    const hit = text.match(TOKEN);
    return `[${u8.byteLength} bytes${hit ? `, holding ${hit[0]}` : ""}]`;
  };
  const flatten = (value) => JSON.stringify(value, (key, v) => {
    if (v instanceof ArrayBuffer) return bytesText(new Uint8Array(v));
    if (ArrayBuffer.isView(v)) return bytesText(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    if (v instanceof Blob) return "[blob]";
    return v;
  });
  const Original = window.Worker;
  window.Worker = class RecordedWorker extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => received.push(flatten(event.data)));
    }
  };
  // a follower tab's port to the leader's host (issue 33 item 2) carries answers and events
  const OriginalChannel = window.MessageChannel;
  window.MessageChannel = class RecordedChannel extends OriginalChannel {
    constructor() {
      super();
      this.port1.addEventListener("message", (event) => received.push(flatten(event.data)));
    }
  };
  // frames (the sandbox) and the service worker can post to the page too
  window.addEventListener("message", (event) => received.push(flatten(event.data)));
  try {
    navigator.serviceWorker?.addEventListener("message", (event) => received.push(flatten(event.data)));
  } catch {} // an opaque-origin frame (the sandbox) may not even look
})();
"""

CALL_SCRIPT = """
async ([op, args, b64, human]) => {
  const body = b64 === null ? null : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
  try {
    const answer = await window.voicebox.host.call(op, args, { body, human });
    let out = null, digest = null;
    if (answer.body) {
      const bytes = new Uint8Array(answer.body);
      let s = "";
      for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      out = btoa(s);
      const d = await crypto.subtle.digest("SHA-256", bytes);
      digest = [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join("");
    }
    return { ok: true, result: answer.result, logged: answer.logged, body: out, body_sha256: digest };
  } catch (err) {
    return { ok: false, refusal: { code: err.code, status: err.status, message: err.message, field: err.field } };
  }
}
"""


@dataclass
class HostPage:
    """Wraps a Playwright page of the site (see module docstring)."""

    page: Page
    violations: list[dict[str, Any]] = field(default_factory=list)
    """Every ``securitypolicyviolation`` of every document and frame this page has shown since
    it was wrapped (what :meth:`csp_violations` reads is the current document's only)."""
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        _LIVE.append(weakref.ref(self))
        self.page.add_init_script(
            WATCH_SCRIPT.replace("SECRET_SHAPE", json.dumps(SECRET_SHAPE.pattern))
        )
        self.page.expose_binding("__vbxViolation", lambda _source, v: self.violations.append(v))
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda err: self.page_errors.append(str(err)))
        self.page.on("dialog", self._dialog)
        self.page.on("worker", lambda w: w.on("console", self._console))

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.type == "error":
            self.console_errors.append(msg.text)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def open(self, url: str = BASE_URL) -> None:
        """Navigate to the site and wait until the host is ready (or fail with its error)."""
        self.page.goto(url)
        self.wait_ready()

    def wait_ready(self) -> None:
        """Wait for the status element to leave 'booting'; fail unless it says ready."""
        self.page.wait_for_function(
            "() => !['booting', 'restarting', undefined].includes("
            "document.getElementById('status')?.dataset.state)",
            timeout=BOOT_TIMEOUT_MS,
        )
        state = self.page.get_attribute("#status", "data-state")
        assert state == "ready", self.page.text_content("body")

    def wait_settled(self, timeout_s: float = 60) -> None:
        """Wait until the host has settled: its late imports, warm-up and model builds done
        (what ``host.info`` says as ``runtime.gc_frozen_objects`` > 0, set just before the
        worker posts ``settled``); a heap measured after it grows only by what a test does."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if (self.ok("host.info")["result"]["runtime"] or {}).get("gc_frozen_objects"):
                return
            self.page.wait_for_timeout(100)
        raise AssertionError(f"the host did not settle within {timeout_s} s")

    def reload(self) -> None:
        """Reload and wait for the host again."""
        self.page.reload()
        self.wait_ready()

    def call(
        self,
        op: str,
        args: dict[str, Any] | None = None,
        body: bytes | None = None,
        human: bool = False,
    ) -> dict[str, Any]:
        """Send ``op`` through the page's host client; returns ``{ok, result|refusal, ...}``.

        A returned body comes back base64-decoded as ``bytes`` in ``"body"``, with
        ``"body_sha256"`` computed in the page.
        """
        b64 = None if body is None else base64.b64encode(body).decode()
        answer = self.page.evaluate(CALL_SCRIPT, [op, args or {}, b64, human])
        if answer.get("body") is not None:
            answer["body"] = base64.b64decode(answer["body"])
        return answer

    def ok(
        self,
        op: str,
        args: dict[str, Any] | None = None,
        body: bytes | None = None,
        human: bool = False,
    ) -> dict[str, Any]:
        """Call and return the result; fail the test on a refusal."""
        answer = self.call(op, args, body, human)
        assert answer["ok"], answer
        return answer

    def refused(
        self, op: str, args: dict[str, Any] | None = None, body: bytes | None = None
    ) -> dict[str, Any]:
        """Call and return the refusal; fail the test if the host admitted it."""
        answer = self.call(op, args, body)
        assert not answer["ok"], answer
        return answer["refusal"]

    def received(self) -> list[str]:
        """Every message the page received (workers, frames, service worker) since it loaded,
        as text."""
        return self.page.evaluate("() => (window.__received || []).slice()")

    def assert_custody(self) -> int:
        """No message the page received holds a bearer or host token; returns how many were
        scanned (0 when the page is already closed)."""
        if self.page.is_closed():
            return 0
        try:  # scanned inside the page: the recorded text never has to cross the driver
            found = self.page.evaluate(
                """(source) => { const re = new RegExp(source);
                  const all = window.__received || [];
                  return { n: all.length, leaks: all.filter((m) => re.test(m)).map((m) => m.slice(0, 200)) }; }""",
                SECRET_SHAPE.pattern,
            )
        except PlaywrightError as err:
            if "closed" in str(err) or "destroyed" in str(err):
                return 0
            raise
        assert found["leaks"] == [], f"a secret reached the page: {found['leaks']}"
        return found["n"]

    def csp_violations(self) -> list[dict[str, Any]]:
        """Every ``securitypolicyviolation`` the page saw since it loaded."""
        return self.page.evaluate("() => window.__cspViolations.slice()")

    def assert_clean(self) -> None:
        """No CSP violation (in any document the page has shown), console error, page error or
        dialog happened, and no secret reached the page (:meth:`assert_custody`)."""
        self.assert_custody()
        assert self.csp_violations() == [], self.csp_violations()
        assert self.violations == [], self.violations
        assert self.console_errors == [], self.console_errors
        assert self.page_errors == []
        assert self.dialogs == []


_LIVE: list[weakref.ref[HostPage]] = []


def assert_custody_of_every_page() -> None:
    """Run :meth:`HostPage.assert_custody` on every HostPage made so far, then forget them."""
    pages = [ref() for ref in _LIVE]
    _LIVE.clear()
    for host in pages:
        if host is not None:
            host.assert_custody()


def two_tabs(site_context: BrowserContext) -> tuple[HostPage, HostPage]:
    """Two tabs of the site in one browser context: the first hosts, the second reaches the
    first's host worker (issue 33 item 2)."""
    first = HostPage(site_context.new_page())
    first.open()
    second = HostPage(site_context.new_page())
    second.open(BASE_URL)
    return first, second
