"""The late modules in the browser (issue 18, cold boot; docs/architecture.md, "Late
operations").

The host posts ``ready`` with only the first screen's modules imported and starts importing
the rest right after. Calls sent to the worker the moment ``ready`` arrives — before the page
itself sends anything, so they land while those imports run — are answered: a late operation
(``plugin.list``, from ``core.host.plugin_ops``) with its result, another (``blocks.get`` of a
project that does not exist) with its ordinary refusal, never ``operation-unknown``, an
``internal-error`` or an import error. The first boot of a profile has no snapshot; the
reload's boot runs the same way.
"""

from __future__ import annotations

from playwright.sync_api import BrowserContext

from e2e.hostpage import HostPage

PROBES = """
(() => {
  const probes = { sent: 0, answers: {} };
  Object.defineProperty(window, "__lateProbes", { value: probes });
  const CALLS = [
    ["late-plugins", "plugin.list", {}],
    ["late-blocks", "blocks.get", { project: "p_0000000000000000" }],
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
        } else if (d?.kind === "answer" && String(d.id).startsWith("late-")) {
          probes.answers[d.id] = JSON.parse(d.text);
        }
      });
    }
  };
})();
"""


def _answers(host: HostPage) -> dict:
    host.page.wait_for_function(
        "() => Object.keys(window.__lateProbes.answers).length === window.__lateProbes.sent"
        " && window.__lateProbes.sent > 0",
        timeout=60_000,
    )
    return host.page.evaluate("() => window.__lateProbes.answers")


def test_calls_sent_the_moment_the_host_is_ready_are_answered_not_import_errors(
    site_context: BrowserContext,
) -> None:
    site_context.add_init_script(PROBES)
    host = HostPage(site_context.new_page())
    for load in ("cold", "reload"):
        host.open() if load == "cold" else host.reload()
        answers = _answers(host)
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
