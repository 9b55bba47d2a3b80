// The open project was deleted in another tab (issue 33 item 2, `projects.changed` "removed"):
// this tab closes it and says so in plain words. Unsaved editor text is never lost in
// silence: it stays on screen in a dialog until the person saves it into another project,
// copies it, or says twice that it may go.

import { el } from "../dom.mjs";
import { acted, showNotice } from "./alerts.mjs";
import { choiceDialog, confirmDialog } from "./dialog.mjs";

/** Say that project `name` is gone; with `unsaved` ({path, text}) offer to keep the text.
 * `app` gives `host` (the host client). Resolves when the person is done. */
export async function projectRemoved(app, name, unsaved) {
  showNotice(
    unsaved
      ? `The project “${name}” was deleted in another tab, so it was closed here. Your unsaved text of ${unsaved.path} is kept until you save it elsewhere or copy it.`
      : `The project “${name}” was deleted in another tab, so it was closed here.`,
  );
  if (!unsaved) return;
  const projects = await app.host
    .call("project.list")
    .then((r) => r.result.projects)
    .catch(() => []);
  for (;;) {
    const form = keepForm(name, unsaved, projects);
    const { choice } = await choiceDialog({
      id: "orphan-dialog",
      title: "Keep your unsaved text",
      body: form.node,
      choices: projects.length
        ? [{ value: "save", label: "Save into that project", primary: true, id: "orphan-save" }]
        : [],
    });
    if (choice === "save") {
      const project = form.project.value;
      const path = form.path.value.trim() || unsaved.path;
      const body = new TextEncoder().encode(unsaved.text).buffer;
      const done = await acted(`Saving ${path}`, () =>
        app.host.call("file.write", { project, path, keep_both: true }, { body }),
      );
      if (done) {
        const into = projects.find((p) => p.id === project)?.name ?? project;
        showNotice(
          `The project “${name}” was deleted in another tab. Your unsaved text was saved as ${done.result.path} in “${into}”.`,
        );
        return;
      }
      continue; // refused (said by acted): the text is offered again
    }
    const gone = await confirmDialog({
      title: "Discard your unsaved text?",
      text: `Your changes to ${unsaved.path} exist nowhere else: the project they belonged to was deleted.`,
      confirmLabel: "Discard the text",
      danger: true,
    });
    if (gone) return;
  }
}

/** The dialog's body: the text itself (read-only, selectable), a Copy button, and where to
 * save it. */
function keepForm(name, unsaved, projects) {
  const said = el("span", { role: "status", class: "muted", id: "orphan-copied" });
  const text = el("textarea", {
    id: "orphan-text",
    readonly: true,
    rows: 8,
    spellcheck: "false",
  });
  text.value = unsaved.text;
  const copy = el(
    "button",
    {
      type: "button",
      id: "orphan-copy",
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(unsaved.text);
          said.textContent = "Copied.";
        } catch {
          text.select();
          said.textContent = "Selected: press Ctrl+C (⌘+C) to copy it.";
        }
      },
    },
    "Copy the text",
  );
  const project = el(
    "select",
    { id: "orphan-project" },
    projects.map((p) => el("option", { value: p.id }, p.name)),
  );
  const path = el("input", {
    id: "orphan-path",
    type: "text",
    autocomplete: "off",
    "aria-describedby": "orphan-path-hint",
  });
  path.value = unsaved.path;
  // A sentence, then each control under its own label, then (from choiceDialog) the buttons:
  // nothing runs into the next line (issue 33, the fresh tryout).
  const node = el(
    "div",
    { class: "orphan-form" },
    el(
      "p",
      { id: "orphan-sentence" },
      `“${name}” was deleted in another tab before your changes to ${unsaved.path} were saved.`,
    ),
    el(
      "div",
      { class: "field" },
      el("label", { for: "orphan-text" }, `Your text of ${unsaved.path}`),
      text,
    ),
    el("p", { class: "orphan-copy-row" }, copy, " ", said),
    projects.length
      ? el(
          "fieldset",
          { class: "orphan-save" },
          el("legend", {}, "Or save it into another project"),
          el("div", { class: "field" }, el("label", { for: "orphan-project" }, "Project"), project),
          el(
            "div",
            { class: "field" },
            el("label", { for: "orphan-path" }, "Path in that project"),
            path,
            el(
              "p",
              { class: "muted field-hint", id: "orphan-path-hint" },
              "A file already at that path is kept; yours is saved beside it.",
            ),
          ),
        )
      : el("p", {}, "There is no other project to save it into: copy it before you close this."),
  );
  return { node, project, path };
}
