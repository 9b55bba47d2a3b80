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
    const dialog = el(
      "dialog",
      {
        class: "dialog",
        id: "unsaved-dialog",
        "aria-labelledby": "unsaved-title",
        "aria-describedby": "unsaved-desc",
      },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: "unsaved-title" }, "Discard your changes?"),
        el(
          "div",
          { id: "unsaved-desc", class: "dialog-body" },
          el(
            "p",
            {},
            `Your changes to ${path} are not saved. ${canSave ? "Save them first, or discard them" : "Discarding them"} keeps the file as it is stored${canSave ? " when you discard" : ""}.`,
          ),
        ),
        el(
          "div",
          { class: "actions" },
          el("button", { value: "cancel", type: "submit", class: "dialog-cancel" }, "Cancel"),
          canSave
            ? el(
                "button",
                { value: "save", type: "submit", class: "primary dialog-save", id: "unsaved-save" },
                "Save",
              )
            : null,
          el(
            "button",
            { value: "discard", type: "submit", class: "dialog-confirm danger" },
            "Discard changes",
          ),
        ),
      ),
    );
    dialog.addEventListener(
      "close",
      () => {
        const answer = ["save", "discard"].includes(dialog.returnValue)
          ? dialog.returnValue
          : "cancel";
        dialog.remove();
        if (opener?.isConnected && typeof opener.focus === "function") opener.focus();
        resolve(answer);
      },
      { once: true },
    );
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}

/** A save was refused `file-changed` (issue 33 item 2; the rule: core/projects/edit_version.py):
 * the file changed since the editor opened it. Resolves "cancel" (keep editing), "reload"
 * (show the file as it is now; your text goes, Undo can bring it back), "overwrite" (write
 * yours over theirs, on purpose) or "saveas" (write yours under another name). `message` is
 * the host's sentence. Cancel is first, so Enter on open loses nothing. */
export function askConflict(path, message) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const dialog = el(
      "dialog",
      {
        class: "dialog",
        id: "conflict-dialog",
        "aria-labelledby": "conflict-title",
        "aria-describedby": "conflict-desc",
      },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: "conflict-title" }, "The file changed since you opened it"),
        el(
          "div",
          { id: "conflict-desc", class: "dialog-body" },
          el("p", {}, message),
          el(
            "p",
            {},
            `Nothing was saved. Your text is still in the editor: reload ${path} as it is now, overwrite it with yours, or save yours as another file.`,
          ),
        ),
        el(
          "div",
          { class: "actions" },
          el("button", { value: "cancel", type: "submit", class: "dialog-cancel" }, "Cancel"),
          el("button", { value: "reload", type: "submit", id: "conflict-reload" }, "Reload"),
          el("button", { value: "saveas", type: "submit", id: "conflict-saveas" }, "Save as…"),
          el(
            "button",
            { value: "overwrite", type: "submit", class: "danger", id: "conflict-overwrite" },
            "Overwrite",
          ),
        ),
      ),
    );
    dialog.addEventListener(
      "close",
      () => {
        const answer = ["reload", "overwrite", "saveas"].includes(dialog.returnValue)
          ? dialog.returnValue
          : "cancel";
        dialog.remove();
        if (opener?.isConnected && typeof opener.focus === "function") opener.focus();
        resolve(answer);
      },
      { once: true },
    );
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
