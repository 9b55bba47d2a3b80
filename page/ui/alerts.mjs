// Errors and notices. A refusal always shows its code and the host's sentence (SPEC §11).

import { el, replace } from "../dom.mjs";

let region = null;

export function mountAlerts(node) {
  region = node;
}

export function showRefusal(err, context = "") {
  if (!region) return;
  const code = err?.code ?? "internal-error";
  const message = err?.message ?? String(err);
  replace(
    region,
    el("div", { class: "alert alert-error" },
      el("strong", {}, context ? `${context}: ` : ""),
      el("code", { class: "refusal-code" }, code),
      " — ",
      el("span", { class: "refusal-message" }, message),
      el("button", { type: "button", class: "link", onclick: clearAlerts, "aria-label": "Dismiss message" }, "Dismiss"),
    ),
  );
}

export function showNotice(text) {
  if (!region) return;
  replace(region, el("div", { class: "alert alert-info" }, el("span", {}, text),
    el("button", { type: "button", class: "link", onclick: clearAlerts, "aria-label": "Dismiss message" }, "Dismiss")));
}

export function clearAlerts() {
  if (region) region.replaceChildren();
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
