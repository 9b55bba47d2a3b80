// Unsaved edits in the editor (issue 33 item 6): leaving the file — another file, surface,
// project, Back — asks with three answers: Cancel (stay), Save (then go) and Discard changes
// (go; the file stays as stored). "Discard changes" on the toolbar asks first too. Built on
// <dialog> like page/ui/dialog.mjs: Cancel is first, so Enter on open never discards.

import { el } from "../dom.mjs";

/** Ask what to do with unsaved changes to `path`; resolves "cancel", "save" or "discard".
 * `canSave` false (SAFE mode) leaves Save out. */
export function askUnsaved(path, { canSave = true } = {}) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const dialog = el("dialog", { class: "dialog", id: "unsaved-dialog", "aria-labelledby": "unsaved-title", "aria-describedby": "unsaved-desc" },
      el("form", { method: "dialog" },
        el("h2", { id: "unsaved-title" }, "Discard your changes?"),
        el("div", { id: "unsaved-desc", class: "dialog-body" },
          el("p", {}, `Your changes to ${path} are not saved. ${canSave ? "Save them first, or discard them" : "Discarding them"} keeps the file as it is stored${canSave ? " when you discard" : ""}.`)),
        el("div", { class: "actions" },
          el("button", { value: "cancel", type: "submit", class: "dialog-cancel" }, "Cancel"),
          canSave ? el("button", { value: "save", type: "submit", class: "primary dialog-save", id: "unsaved-save" }, "Save") : null,
          el("button", { value: "discard", type: "submit", class: "dialog-confirm danger" }, "Discard changes"))));
    dialog.addEventListener("close", () => {
      const answer = ["save", "discard"].includes(dialog.returnValue) ? dialog.returnValue : "cancel";
      dialog.remove();
      if (opener?.isConnected && typeof opener.focus === "function") opener.focus();
      resolve(answer);
    }, { once: true });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
