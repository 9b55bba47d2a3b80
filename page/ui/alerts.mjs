// Errors and notices. A refusal always shows the host's sentence and its code (SPEC §11):
// the sentence first, for the person; the code after it, for a bug report (issue 33).

import { el, replace } from "../dom.mjs";

let region = null;

/** The one way the page words a refusal (issue 33: a person reads the sentence first).
 * `refusal`: {code, message} (a host Refusal, or any error: no code → `fallback`). Returns
 * nodes to place in a paragraph or an alert: `<span class="refusal-message">sentence</span>`
 * then ` (code <code class="refusal-code">the-code</code>)` — so a screen reader reads
 * "sentence (code the-code)". `codeId` puts an id on the code element (tests and bug reports
 * find it there). */
export function refusalParts(refusal, { fallback = "error", codeId = null } = {}) {
  const code = refusal?.code ?? fallback;
  const message = refusal?.message ?? String(refusal);
  return [
    el("span", { class: "refusal-message" }, message),
    el(
      "span",
      { class: "refusal-code-note", title: "The refusal's code, for a bug report" },
      " (code ",
      el("code", { class: "refusal-code", id: codeId }, code),
      ")",
    ),
  ];
}

export function mountAlerts(node) {
  region = node;
  // A new attempt the browser itself stops (a field it finds invalid, with its own message)
  // makes the error left from the previous attempt stale: it goes (stop 46's tryout: "Please
  // enter a URL" showed under an old "environment-unreachable"). `invalid` does not bubble.
  document.addEventListener("invalid", () => clearError(), true);
}

export function showRefusal(err, context = "") {
  if (!region) return;
  replace(
    region,
    el(
      "div",
      { class: "alert alert-error" },
      el("strong", {}, context ? `${context}: ` : ""),
      refusalParts(err, { fallback: "internal-error" }),
      el(
        "button",
        { type: "button", class: "link", onclick: clearAlerts, "aria-label": "Dismiss message" },
        "Dismiss",
      ),
    ),
  );
}

/** A failure inside the page itself (not a host refusal, so no refusal code): `context` and
 * what went wrong, in words. */
export function showProblem(context, text) {
  if (!region) return;
  replace(
    region,
    el(
      "div",
      { class: "alert alert-error" },
      el("strong", {}, context ? `${context}: ` : ""),
      el("span", { class: "refusal-message" }, text),
      el(
        "button",
        { type: "button", class: "link", onclick: clearAlerts, "aria-label": "Dismiss message" },
        "Dismiss",
      ),
    ),
  );
}

export function showNotice(text) {
  if (!region) return;
  replace(
    region,
    el(
      "div",
      { class: "alert alert-info" },
      el("span", {}, text),
      el(
        "button",
        { type: "button", class: "link", onclick: clearAlerts, "aria-label": "Dismiss message" },
        "Dismiss",
      ),
    ),
  );
}

export function clearAlerts() {
  if (region) region.replaceChildren();
}

/** Clear an error left on screen (a notice stays). */
export function clearError() {
  if (region?.querySelector(".alert-error")) region.replaceChildren();
}

/** Run `fn`; show its refusal (if any) with `context`. Resolves to fn's value or null. */
export async function guarded(context, fn) {
  try {
    return await fn();
  } catch (err) {
    showRefusal(err, context);
    return null;
  }
}

/** A person's act (create, save, move, delete…): like `guarded`, and when it succeeds an error
 * left by an earlier act is cleared, so a stale refusal never sits next to a success. */
export async function acted(context, fn) {
  const done = await guarded(context, fn);
  if (done !== null) clearError();
  return done;
}

/** A form's submit that makes a host call: `button` is disabled while the call is in flight,
 * so a double click or a second Enter sends it once. Resolves like `acted` (null when a call
 * was already in flight). */
export async function submitting(button, context, fn) {
  if (button.disabled) return null;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    return await acted(context, fn);
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}
