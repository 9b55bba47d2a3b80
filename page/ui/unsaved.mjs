// Unsaved edits in the editor (issue 33 item 6): leaving the file — another file, surface,
// project, Back — asks with three answers: Cancel (stay), Save (then go) and Discard changes
// (go; the file stays as stored). "Discard changes" on the toolbar asks first too. Both
// questions here are page/ui/dialog.mjs's choiceDialog: Cancel is first, so Enter on open
// never discards.

import { el } from "../dom.mjs";
import { choiceDialog } from "./dialog.mjs";

/** Ask what to do with unsaved changes to `path`; resolves "cancel", "save" or "discard".
 * `canSave` false (SAFE mode) leaves Save out. */
export async function askUnsaved(path, { canSave = true } = {}) {
  const { choice } = await choiceDialog({
    id: "unsaved-dialog",
    title: "Discard your changes?",
    text: `Your changes to ${path} are not saved. ${canSave ? "Save them first, or discard them" : "Discarding them"} keeps the file as it is stored${canSave ? " when you discard" : ""}.`,
    choices: [
      canSave
        ? {
            value: "save",
            label: "Save",
            primary: true,
            id: "unsaved-save",
            className: "dialog-save",
          }
        : null,
      { value: "discard", label: "Discard changes", className: "dialog-confirm danger" },
    ].filter(Boolean),
  });
  return choice;
}

/** A save was refused `file-changed` (issue 33 item 2; the rule: core/projects/edit_version.py):
 * the file changed since the editor opened it. Resolves "cancel" (keep editing), "reload"
 * (show the file as it is now; your text goes, Undo can bring it back), "overwrite" (write
 * yours over theirs, on purpose) or "saveas" (write yours under another name). `message` is
 * the host's sentence (it names the file and the ways out). Cancel is first, so Enter on open loses nothing. */
export async function askConflict(path, message) {
  const { choice } = await choiceDialog({
    id: "conflict-dialog",
    title: "The file changed since you opened it",
    body: [
      el("p", {}, message),
      // the host's sentence names the ways out already: this says only what was kept
      el("p", {}, "Nothing was saved. Your text is still in the editor."),
    ],
    choices: [
      { value: "reload", label: "Reload", id: "conflict-reload" },
      { value: "saveas", label: "Save as…", id: "conflict-saveas" },
      { value: "overwrite", label: "Overwrite", id: "conflict-overwrite", className: "danger" },
    ],
  });
  return choice;
}
