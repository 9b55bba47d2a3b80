// Boot progress: what is loading and bytes so far, then ready or a clear, actionable error.

import { el, formatBytes, replace } from "../dom.mjs";
import { refusalParts } from "./alerts.mjs";

const STAGES = {
  lock: "Claiming this site's storage",
  runtime: "Loading the Python runtime",
  packages: "Installing pinned Python packages",
  host: "Starting the host",
  takeover: "The other tab closed: taking over the host",
};

export function renderBoot(node, event) {
  const label = STAGES[event.stage] ?? event.stage;
  const bar = el("progress", {
    id: "boot-progress",
    max: String(Math.max(event.total, 1)),
    value: String(Math.min(event.loaded, event.total || 0)),
    "aria-labelledby": "boot-label",
  });
  replace(
    node,
    el("p", { id: "boot-label" }, `${label}…`),
    bar,
    el(
      "p",
      { class: "muted" },
      event.total ? `${formatBytes(event.loaded)} of ${formatBytes(event.total)}` : "",
    ),
  );
}

export function renderBootFailure(node, failure) {
  replace(
    node,
    el(
      "div",
      { class: "alert alert-error", role: "alert" },
      el("h2", {}, "The host could not start"),
      el("p", {}, refusalParts(failure)),
      failure.file
        ? el("p", {}, "File: ", el("code", { id: "boot-failed-file" }, failure.file))
        : null,
      el(
        "p",
        { class: "muted" },
        "Reload to try again. If it keeps failing, rebuild the site (nox -s build) and check the file named above.",
      ),
    ),
  );
}

/** Another tab's host owns the storage: this tab waits, writes nothing, and says so. */
export function renderStandby(node) {
  replace(
    node,
    el(
      "div",
      { class: "alert alert-info host-standby", id: "host-standby", role: "status" },
      el("h2", {}, "The host is active in another tab"),
      el(
        "p",
        {},
        "This site is open in another tab of this browser, and that tab's host owns the storage. " +
          "This tab does not write: anything asked of it is refused with ",
        el("code", {}, "host-active-elsewhere"),
        ".",
      ),
      el(
        "p",
        {},
        "Close the other tab (or keep working there). This tab takes over by itself the moment the other one closes.",
      ),
    ),
  );
}

/** This tab took over the host after the other tab closed (`starting`: its host is still
 * starting; calls made meanwhile wait for it). */
export function renderTakeover(node, { starting = false } = {}) {
  replace(
    node,
    el(
      "div",
      {
        class: "alert alert-info",
        id: "host-notice",
        role: "status",
        "data-starting": starting ? "true" : "false",
      },
      el(
        "p",
        {},
        starting
          ? "The other tab closed; this tab is taking over the host. Anything you do meanwhile waits for it."
          : "The other tab closed; this tab's host now owns the storage.",
      ),
      el(
        "button",
        {
          type: "button",
          class: "link",
          onclick: () => {
            node.replaceChildren();
            node.hidden = true;
          },
        },
        "Dismiss",
      ),
    ),
  );
}

const LOSS = {
  stopped: "the host worker ended",
  hung: "the host stopped answering",
  "uncaught-error": "the host hit an uncaught error",
  broken: "the host could not answer a call",
};

/**
 * The host stopped: say when and why, what happened to the calls in flight, and that it
 * restarts — with the restart's boot progress under it (`progress`, a boot event) meanwhile.
 */
export function renderHostLoss(node, loss, { restarted = false, progress = null } = {}) {
  const when = new Date(loss.at).toLocaleTimeString();
  const one = loss.pending === 1;
  const calls = one ? "1 call in flight was" : `${loss.pending} calls in flight were`;
  const notice = el(
    "div",
    {
      class: `alert ${restarted ? "alert-info" : "alert-error"}`,
      id: "host-notice",
      role: "alert",
      "data-reason": loss.reason,
    },
    el("h2", {}, restarted ? "The host was restarted" : "The host stopped — restarting it"),
    el(
      "p",
      {},
      `At ${when} ${LOSS[loss.reason] ?? loss.reason}${loss.detail ? ` (${loss.detail})` : ""}. `,
      `${calls} answered `,
      el("code", {}, "host-restarted"),
      loss.pending
        ? `: whether ${one ? "it" : "they"} took effect is unknown, so check before repeating ${one ? "it" : "them"}.`
        : ".",
    ),
    el(
      "p",
      { class: "muted" },
      "Everything written before is kept: every write is all or nothing.",
    ),
    restarted
      ? el(
          "button",
          {
            type: "button",
            class: "link",
            onclick: () => {
              node.replaceChildren();
              node.hidden = true;
            },
          },
          "Dismiss",
        )
      : null,
  );
  const bar = el("div", { class: "host-restart-progress" });
  if (progress) renderBoot(bar, progress);
  replace(node, notice, progress ? bar : null);
}
