// Modal dialogs built on <dialog> (focus handling and Escape come from the browser). Every
// confirm says exactly what will happen; Cancel is first, so Enter on open never confirms a
// destructive act by accident.

import { el, replace } from "../dom.mjs";
import { refusalParts } from "./alerts.mjs";

function open(dialog, onClose) {
  document.body.appendChild(dialog);
  const opener = document.activeElement;
  dialog.addEventListener(
    "close",
    () => {
      onClose(dialog.returnValue);
      dialog.remove();
      if (opener && opener.isConnected && typeof opener.focus === "function") opener.focus();
    },
    { once: true },
  );
  dialog.showModal();
}

let counter = 0;
const nextId = () => `dlg-${++counter}`;

/**
 * Ask a yes/no question; resolves true when confirmed. `text` (a string) or `body` (nodes)
 * says exactly what happens; `confirmLabel` names the act.
 */
export function confirmDialog({
  title,
  text = null,
  body = null,
  confirmLabel = "Confirm",
  danger = false,
  id = null,
}) {
  return new Promise((resolve) => {
    const titleId = nextId();
    const descId = `${titleId}-desc`;
    const dialog = el(
      "dialog",
      { class: "dialog", id, "aria-labelledby": titleId, "aria-describedby": descId },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: titleId }, title),
        el(
          "div",
          { id: descId, class: "dialog-body" },
          text !== null ? el("p", {}, text) : null,
          body,
        ),
        el(
          "div",
          { class: "actions" },
          el("button", { value: "cancel", type: "submit", class: "dialog-cancel" }, "Cancel"),
          el(
            "button",
            {
              value: "ok",
              type: "submit",
              class: `dialog-confirm ${danger ? "danger" : "primary"}`,
            },
            confirmLabel,
          ),
        ),
      ),
    );
    open(dialog, (value) => resolve(value === "ok"));
  });
}

/**
 * Ask for one line of text; resolves the text, or null when cancelled.
 * `act(text)` (optional) does the act in the dialog (issue 33 item 9: a refusal never arrives
 * after the dialog closed): it resolves `{problem}` — the host's refusal, shown in the dialog as
 * its sentence and its code (alerts.mjs `refusalParts`; a plain string as it is), which stays
 * open with the typed text — or `{done}`, and the dialog then closes and resolves
 * `done`. While it runs the buttons wait. `check(text)` (optional, with `act`): the sentence of
 * the rule the text breaks, or "" — said under the field as it is typed (from the generated
 * contract, `brokenRule` of validate.mjs; issue 34), and a broken text is not sent.
 */
export function promptDialog({
  title,
  label,
  value = "",
  confirmLabel = "Save",
  multiline = false,
  act = null,
  check = null,
}) {
  return new Promise((resolve) => {
    const titleId = nextId();
    const inputId = `${titleId}-input`;
    const ruleId = `${inputId}-problem`;
    const input = multiline
      ? el("textarea", { id: inputId, rows: "6", autocomplete: "off" })
      : el("input", { id: inputId, type: "text", value, required: true, autocomplete: "off" });
    if (multiline) input.value = value;
    const problem = act
      ? el("p", { class: "field-rule dialog-problem", id: ruleId, role: "alert" })
      : null;
    if (act) input.setAttribute("aria-describedby", ruleId);
    const ok = el("button", { value: "ok", type: "submit", class: "primary" }, confirmLabel);
    const dialog = el(
      "dialog",
      { class: "dialog", "aria-labelledby": titleId },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: titleId }, title),
        el("label", { for: inputId }, label),
        input,
        problem,
        el(
          "div",
          { class: "actions" },
          el("button", { value: "cancel", type: "submit", formnovalidate: true }, "Cancel"),
          ok,
        ),
      ),
    );
    let done = null;
    let running = false;
    const confirm = async () => {
      if (!act) {
        dialog.close("ok");
        return;
      }
      if (running) return;
      if (!multiline && !input.value) {
        input.reportValidity();
        return;
      }
      const broken = check?.(input.value);
      if (broken) {
        problem.textContent = broken;
        input.setAttribute("aria-invalid", "true");
        input.focus();
        return;
      }
      running = true;
      ok.disabled = true;
      const outcome = await act(input.value);
      running = false;
      ok.disabled = false;
      if (outcome && "problem" in outcome) {
        // the host's refusal is worded as everywhere: its sentence, then its code (docs/ui.md)
        if (typeof outcome.problem === "string") problem.textContent = outcome.problem;
        else replace(problem, ...refusalParts(outcome.problem, { fallback: "internal-error" }));
        input.setAttribute("aria-invalid", "true");
        input.focus();
        return;
      }
      done = outcome && "done" in outcome ? outcome.done : input.value;
      dialog.close("ok");
    };
    input.addEventListener("input", () => {
      const broken = (input.value && check?.(input.value)) || "";
      if (!problem || problem.textContent === broken) return;
      problem.textContent = broken;
      if (broken) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    });
    // Enter in a one-line field confirms (implicit submission would pick Cancel, the first button)
    if (!multiline)
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          confirm();
        }
      });
    dialog.querySelector("form").addEventListener("submit", (event) => {
      if (event.submitter === ok) {
        event.preventDefault();
        confirm();
      }
    });
    dialog.addEventListener("cancel", (event) => {
      if (running) event.preventDefault();
    });
    open(dialog, (result) => resolve(result === "ok" ? (act ? done : input.value) : null));
    input.select();
  });
}

/**
 * Ask which of several acts to take; resolves `{choice, all}` — `choice` the chosen value, or
 * "cancel" (Cancel, Escape) — and `all` true when the person ticked "do the same for the rest"
 * (offered when `rest` > 0: how many more of the same question would follow, or when `more`:
 * more may follow that are not known yet — an upload's later batches).
 * `choices`: [{value, label, primary?, id?, className?}] in the order shown after Cancel
 * (`className`: more classes for the button, e.g. "danger").
 */
export function choiceDialog({
  title,
  text = null,
  body = null,
  choices,
  rest = 0,
  more = false,
  id = null,
}) {
  return new Promise((resolve) => {
    const titleId = nextId();
    const descId = `${titleId}-desc`;
    const allId = `${titleId}-all`;
    const all = rest > 0 || more ? el("input", { type: "checkbox", id: allId }) : null;
    const dialog = el(
      "dialog",
      { class: "dialog", id, "aria-labelledby": titleId, "aria-describedby": descId },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: titleId }, title),
        el(
          "div",
          { id: descId, class: "dialog-body" },
          text !== null ? el("p", {}, text) : null,
          body,
        ),
        all
          ? el(
              "p",
              { class: "field-check" },
              all,
              el(
                "label",
                { for: allId },
                more
                  ? "Do the same for every other name already taken in this upload"
                  : `Do the same for the ${rest} other${rest === 1 ? "" : "s"}`,
              ),
            )
          : null,
        el(
          "div",
          { class: "actions" },
          el("button", { value: "cancel", type: "submit", class: "dialog-cancel" }, "Cancel"),
          choices.map((c) =>
            el(
              "button",
              {
                value: c.value,
                type: "submit",
                id: c.id ?? null,
                class: ["dialog-choice", c.primary ? "primary" : "", c.className ?? ""]
                  .filter(Boolean)
                  .join(" "),
                "data-choice": c.value,
              },
              c.label,
            ),
          ),
        ),
      ),
    );
    open(dialog, (value) =>
      resolve({ choice: value && value !== "" ? value : "cancel", all: Boolean(all?.checked) }),
    );
  });
}

/** Show a text the person may want to copy (a link), selected in a read-only field. */
export function showTextDialog({ title, label, value }) {
  return new Promise((resolve) => {
    const titleId = nextId();
    const inputId = `${titleId}-input`;
    const input = el("input", {
      id: inputId,
      type: "text",
      value,
      readonly: true,
      autocomplete: "off",
    });
    const dialog = el(
      "dialog",
      { class: "dialog", "aria-labelledby": titleId },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: titleId }, title),
        el("label", { for: inputId }, label),
        input,
        el(
          "div",
          { class: "actions" },
          el("button", { value: "ok", type: "submit", class: "primary" }, "Close"),
        ),
      ),
    );
    open(dialog, () => resolve());
    input.select();
  });
}
