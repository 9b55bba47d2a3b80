"""The late modules in the browser (issue 18, cold boot; docs/architecture.md, "Late
operations").

The host posts ``ready`` with only the first screen's modules imported and imports the rest
right after, in one shared import; the worker posts ``settled`` when that import is done.
Calls are sent to the worker the moment ``ready`` arrives — before the page itself sends
anything: two late operations (``plugin.list``, from ``core.host.plugin_ops``; ``blocks.get``
of a project that does not exist, from ``core.host.blocks_ops``) and an eager one
(``host.info``).

- The window is real: ``host.info`` is answered before ``settled`` arrives, so the calls
  reached the host while it was still importing (this fails if the imports ran before ready).
- A late call waits for its own module only (issue 34: the modules become real one by one,
  ``tests/core/test_late_imports.py`` proves the order and the wait on CPython): here each is
  answered with its result or its ordinary refusal — never ``operation-unknown``, an
  ``internal-error`` or an import error — whether before or after ``settled``.

The first boot of a profile has no snapshot; the reload's boot runs the same way.
"""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage

PROBES = """
(() => {
  const probes = { sent: 0, answers: {}, order: [] };
  Object.defineProperty(window, "__lateProbes", { value: probes });
  const CALLS = [
    ["late-plugins", "plugin.list", {}],
    ["late-blocks", "blocks.get", { project: "p_0000000000000000" }],
    ["eager-info", "host.info", {}],
  ];
  const Original = window.Worker;
  window.Worker = class LateProbe extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const d = event.data;
        if (d?.kind === "ready" && !probes.sent) {
          probes.sent = CALLS.length;
          for (const [id, op, a] of CALLS) {
            this.postMessage({ kind: "call", id, text: JSON.stringify({ v: 1, id, op, args: a }) });
          }
        } else if (d?.kind === "settled") {
          probes.order.push("settled");
        } else if (d?.kind === "answer" && /^(late|eager)-/.test(String(d.id))) {
          probes.order.push(d.id);
          probes.answers[d.id] = JSON.parse(d.text);
        }
      });
    }
  };
})();
"""


def _probed(host: HostPage) -> tuple[dict, list[str]]:
    host.page.wait_for_function(
        "() => window.__lateProbes.sent > 0"
        " && Object.keys(window.__lateProbes.answers).length === window.__lateProbes.sent"
        " && window.__lateProbes.order.includes('settled')",
        timeout=60_000,
    )
    return host.page.evaluate("() => [window.__lateProbes.answers, window.__lateProbes.order]")


def test_calls_sent_the_moment_the_host_is_ready_wait_for_their_modules_never_fail(
    site_context: BrowserContext,
) -> None:
    site_context.add_init_script(PROBES)
    host = HostPage(site_context.new_page())
    for load in ("cold", "reload"):
        host.open() if load == "cold" else host.reload()
        answers, order = _probed(host)
        settled = order.index("settled")
        assert order.index("eager-info") < settled, (load, order)  # sent inside the window
        assert answers["eager-info"]["ok"] is True, (load, answers["eager-info"])
        assert {"late-plugins", "late-blocks"} <= set(order), (load, order)
        plugins, blocks = answers["late-plugins"], answers["late-blocks"]
        assert plugins["ok"] is True and isinstance(plugins["result"]["plugins"], list), (
            load,
            plugins,
        )
        assert blocks["ok"] is False, (load, blocks)
        assert blocks["refusal"]["code"] not in ("operation-unknown", "internal-error"), (
            load,
            blocks,
        )
        assert "Error" not in blocks["refusal"]["message"], (load, blocks)
    host.assert_clean()


def test_a_settled_host_has_frozen_what_its_boot_left_alive(site_context: BrowserContext) -> None:
    """Issue 34 (a fresh host's first post): once ``settled``, the objects the boot left alive
    are out of the cycle collector's sight (``gc.freeze``), so the first calls after it pay no
    collection over the whole heap; before ``settled`` nothing is frozen."""
    site_context.add_init_script(PROBES)
    host = HostPage(site_context.new_page())
    host.open()
    answers, _order = _probed(host)
    before = answers["eager-info"]["result"]["runtime"]["gc_frozen_objects"]
    after = host.ok("host.info")["result"]["runtime"]["gc_frozen_objects"]
    assert before == 0, before
    assert after > 10_000, after  # the host's modules and models, not a handful
    host.assert_clean()
