// Modal dialogs built on <dialog> (focus handling and Escape come from the browser).

import { el } from "../dom.mjs";

function open(dialog, onClose) {
  document.body.appendChild(dialog);
  dialog.addEventListener("close", () => { onClose(dialog.returnValue); dialog.remove(); }, { once: true });
  dialog.showModal();
}

/** Ask a yes/no question; resolves true when confirmed. `text` says exactly what happens. */
export function confirmDialog({ title, text, confirmLabel = "Confirm", danger = false }) {
  return new Promise((resolve) => {
    const titleId = `dlg-${Math.random().toString(36).slice(2)}`;
    const dialog = el("dialog", { class: "dialog", "aria-labelledby": titleId },
      el("form", { method: "dialog" },
        el("h2", { id: titleId }, title),
        el("p", {}, text),
        el("div", { class: "actions" },
          el("button", { value: "cancel", type: "submit" }, "Cancel"),
          el("button", { value: "ok", type: "submit", class: danger ? "danger" : "primary" }, confirmLabel),
        ),
      ),
    );
    open(dialog, (value) => resolve(value === "ok"));
  });
}

/** Ask for one line of text; resolves the text, or null when cancelled. */
export function promptDialog({ title, label, value = "", confirmLabel = "Save" }) {
  return new Promise((resolve) => {
    const titleId = `dlg-${Math.random().toString(36).slice(2)}`;
    const inputId = `${titleId}-input`;
    const input = el("input", { id: inputId, type: "text", value, required: true, autocomplete: "off" });
    const dialog = el("dialog", { class: "dialog", "aria-labelledby": titleId },
      el("form", { method: "dialog" },
        el("h2", { id: titleId }, title),
        el("label", { for: inputId }, label),
        input,
        el("div", { class: "actions" },
          el("button", { value: "cancel", type: "submit", formnovalidate: true }, "Cancel"),
          el("button", { value: "ok", type: "submit", class: "primary" }, confirmLabel),
        ),
      ),
    );
    open(dialog, (result) => resolve(result === "ok" ? input.value : null));
    input.select();
  });
}
