// SAFE (read-only) mode, as the page shows it (docs/ui.md, "Honest states"). While the host's
// policy says read_only, every control whose host operation writes is disabled, and its
// tooltip says why — the host would refuse it with read-only-mode anyway; the page just does
// not offer what cannot work.
//
// WRITE_OPS is the set of operations core's registry marks `writes=True` (core/host/
// registry.py), imported from the generated contract module.

import { WRITE_OPERATIONS } from "../contract.gen.mjs";

export const WRITE_OPS = new Set(WRITE_OPERATIONS);

export const SAFE_REASON =
  "SAFE mode is on: the host refuses every write. Turn it off in Settings to use this.";

/** Why `op` cannot be offered right now, or null when it can. */
export function blocked(app, op) {
  return app.readOnly && WRITE_OPS.has(op) ? SAFE_REASON : null;
}

/** Mark `control` (a button, input or label-for-input) as calling `op`: disabled with the
 * reason as its tooltip while SAFE mode is on. Returns `control`. */
export function guard(app, op, control) {
  const reason = blocked(app, op);
  control.dataset.op = op;
  if (!reason) return control;
  if (control.tagName === "LABEL") {
    control.classList.add("disabled");
    control.setAttribute("aria-disabled", "true");
    const input = control.htmlFor
      ? (document.getElementById(control.htmlFor) ?? control.nextElementSibling)
      : null;
    if (input) input.disabled = true;
  } else {
    control.disabled = true;
  }
  control.title = reason;
  return control;
}

/** A one-line notice for a surface whose writes are switched off, or null. */
export function safeNotice(el, app) {
  return app.readOnly
    ? el(
        "p",
        { class: "safe-notice", role: "note" },
        "SAFE mode is on: controls that write are switched off (their tooltip says so). Reading, viewing and downloading still work.",
      )
    : null;
}
