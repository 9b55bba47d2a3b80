// Boot progress: what is loading and bytes so far, then ready or a clear, actionable error.

import { el, formatBytes, replace } from "../dom.mjs";

const STAGES = {
  lock: "Claiming this site's storage",
  runtime: "Loading the Python runtime",
  packages: "Installing pinned Python packages",
  host: "Starting the host",
};

export function renderBoot(node, event) {
  const label = STAGES[event.stage] ?? event.stage;
  const bar = el("progress", { id: "boot-progress", max: String(Math.max(event.total, 1)), value: String(Math.min(event.loaded, event.total || 0)), "aria-labelledby": "boot-label" });
  replace(node,
    el("p", { id: "boot-label" }, `${label}…`),
    bar,
    el("p", { class: "muted" }, event.total ? `${formatBytes(event.loaded)} of ${formatBytes(event.total)}` : ""),
  );
}

export function renderBootFailure(node, failure) {
  replace(node,
    el("div", { class: "alert alert-error", role: "alert" },
      el("h2", {}, "The host could not start"),
      el("p", {}, el("code", { class: "refusal-code" }, failure.code), " — ", failure.message),
      failure.file ? el("p", {}, "File: ", el("code", { id: "boot-failed-file" }, failure.file)) : null,
      el("p", { class: "muted" }, "Reload to try again. If it keeps failing, rebuild the site (nox -s build) and check the file named above."),
    ),
  );
}
