// Projects surface: create, open, rename, delete, export as a .zip, import a .zip (SPEC §10,
// §11). Archives stream: the export arrives in chunks (progress bar) and is saved as a Blob.

import { el, formatTime, name, replace, tableBox } from "../dom.mjs";
import { guard, safeNotice } from "./safe.mjs";
import { acted, guarded, clearAlerts, clearError, showRefusal, submitting } from "./alerts.mjs";
import { LIMITS } from "../contract.gen.mjs";
import { confirmDialog, promptDialog } from "./dialog.mjs";
import { exportProject as exportZip, importArchive } from "./archive.mjs";
import { brokenRule, checkAsTyped, refusedAt } from "./validate.mjs";

export async function renderProjects(node, app) {
  const list = await guarded("Listing projects", () => app.host.call("project.list"));
  const projects = list?.result.projects ?? [];
  const nameInput = el("input", {
    id: "new-project-name",
    type: "text",
    required: true,
    autocomplete: "off",
    maxlength: String(LIMITS.name_chars),
  });
  const createButton = guard(
    app,
    "project.create",
    el("button", { type: "submit", class: "primary", id: "create-project" }, "Create project"),
  );
  const form = el(
    "form",
    {
      class: "inline-form",
      "aria-label": "Create a project",
      onsubmit: async (event) => {
        event.preventDefault();
        // a refusal of the name is said under the field (issue 34); any other in the alerts
        let refused = null;
        const created = await submitting(createButton, "Creating the project", async () => {
          try {
            return await app.host.call("project.create", { name: nameInput.value });
          } catch (err) {
            if (err?.field !== "name") throw err;
            refused = err;
            return null;
          }
        });
        if (refused) refusedAt(nameInput, refused);
        if (created) {
          clearAlerts();
          app.openProject(created.result.project.id);
        }
      },
    },
    el("label", { for: "new-project-name" }, "New project name"),
    nameInput,
    createButton,
    checkAsTyped(nameInput, "project.create", "name"),
  );

  const canPick = typeof globalThis.showDirectoryPicker === "function";
  const pickFolder = el(
    "button",
    {
      type: "button",
      id: "open-folder",
      disabled: !canPick,
      title: canPick
        ? null
        : "This browser cannot open folders on disk (File System Access API missing).",
      onclick: async () => {
        let handle;
        try {
          handle = await showDirectoryPicker({ mode: "readwrite" });
        } catch (err) {
          if (err?.name !== "AbortError")
            showRefusal(
              { code: "permission-denied", message: "The folder could not be opened." },
              "Opening a folder",
            );
          return;
        }
        const added = await acted("Opening the folder", () =>
          app.host.call(
            "project.add_folder",
            { name: handle.name },
            { attachment: handle, human: true },
          ),
        );
        if (added) {
          clearAlerts();
          app.openProject(added.result.project.id);
        }
      },
    },
    "Open a folder…",
  );

  const progress = el("div", { class: "upload-progress", id: "archive-progress", hidden: true });
  const exportProject = (p) => exportZip(app, p, progress);

  const importInput = el("input", {
    id: "import-archive",
    type: "file",
    accept: ".zip,application/zip",
    class: "visually-hidden-input",
    onchange: async (e) => {
      const file = e.target.files[0];
      e.target.value = "";
      if (!file) return;
      if (await importArchive(app, file, progress)) app.refresh();
    },
  });

  const rows = projects.map((p) =>
    el(
      "tr",
      {
        "data-project-id": p.id,
        "data-kind": p.kind,
        class: app.project?.id === p.id ? "current" : null,
      },
      el(
        "td",
        { class: "name-cell" },
        name(
          p.name,
          { type: "button", class: "link project-open", onclick: () => app.openProject(p.id) },
          "button",
        ),
      ),
      el("td", {}, p.kind === "opfs" ? "browser storage (OPFS)" : "folder on disk"),
      el("td", { class: "nowrap" }, formatTime(p.created_at)),
      el(
        "td",
        { class: "row-actions" },
        el(
          "button",
          {
            type: "button",
            "aria-label": `Export .zip of project ${p.name}`,
            class: "project-export",
            onclick: () => exportProject(p),
          },
          "Export .zip",
        ),
        guard(
          app,
          "project.rename",
          el(
            "button",
            {
              type: "button",
              "aria-label": `Rename project ${p.name}`,
              onclick: async () => {
                // the rename is made in the dialog: a refused name shows there, with what was typed
                let name = p.name;
                const renamed = await promptDialog({
                  title: "Rename project",
                  label: "New name",
                  value: p.name,
                  confirmLabel: "Rename",
                  check: (typed) => brokenRule("project.rename", "name", typed),
                  act: async (typed) => {
                    name = typed;
                    try {
                      return {
                        done: await app.host.call("project.rename", { project: p.id, name: typed }),
                      };
                    } catch (err) {
                      return { problem: err };
                    }
                  },
                });
                if (!renamed) return;
                clearError();
                if (app.project?.id === p.id)
                  app.setProject(renamed.result.project ?? { ...app.project, name });
                app.refresh();
              },
            },
            "Rename",
          ),
        ),
        guard(
          app,
          "project.delete",
          el(
            "button",
            {
              type: "button",
              class: "danger",
              "aria-label": `Delete project ${p.name}`,
              onclick: async () => {
                const others = await unsavedElsewhere(app, p.id);
                const sure =
                  p.kind === "directory"
                    ? await confirmDialog({
                        title: "Remove folder from the list",
                        confirmLabel: "Remove",
                        text: `This removes “${p.name}” from your projects and forgets the folder. Nothing on disk is deleted; open the folder again to bring it back.`,
                        body: others,
                      })
                    : await confirmDialog({
                        title: "Delete project",
                        danger: true,
                        confirmLabel: "Delete",
                        text: `This deletes the project “${p.name}” and every file in it from this browser's storage. It cannot be undone.`,
                        body: others,
                      });
                if (!sure) return;
                if (
                  !(await acted("Deleting the project", () =>
                    app.host.call("project.delete", { project: p.id }, { human: true }),
                  ))
                )
                  return;
                if (app.project?.id === p.id) app.setProject(null);
                app.refresh();
              },
            },
            p.kind === "directory" ? "Remove" : "Delete",
          ),
        ),
      ),
    ),
  );

  replace(
    node,
    el("h2", {}, "Projects"),
    safeNotice(el, app),
    form,
    el(
      "p",
      { class: "toolbar" },
      pickFolder,
      el(
        "span",
        { class: "muted" },
        canPick
          ? "Use a folder on your disk as a project; its files stay where they are."
          : "Folders on disk need a browser with the File System Access API.",
      ),
      guard(
        app,
        "project.import",
        el("label", { for: "import-archive", class: "button" }, "Import a .zip…"),
      ),
      importInput,
    ),
    progress,
    projects.length
      ? tableBox(
          el(
            "table",
            { class: "table", id: "project-table" },
            el("caption", { class: "visually-hidden" }, "Your projects"),
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                el("th", { scope: "col" }, "Name"),
                el("th", { scope: "col" }, "Stored in"),
                el("th", { scope: "col" }, "Created"),
                el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")),
              ),
            ),
            el("tbody", {}, rows),
          ),
        )
      : el("p", { class: "empty" }, "No projects yet — create one above."),
  );
}

/** What the delete confirmation says of other tabs' unsaved edits in project `id` (issue 33,
 * the fresh tester's tryout): a warning naming the files when the host knows of any
 * (`project.unsaved_elsewhere`, core/host/unsaved_ops.py), else nothing. A host that cannot
 * say leaves the confirmation as it was. */
async function unsavedElsewhere(app, id) {
  let got;
  try {
    got = (await app.host.call("project.unsaved_elsewhere", { project: id, page: app.host.pageId }))
      .result;
  } catch {
    return null;
  }
  if (!got.tabs) return null;
  return el(
    "p",
    { class: "unsaved-elsewhere", id: "unsaved-elsewhere", role: "alert" },
    el("strong", {}, "Another tab has unsaved changes in this project"),
    ` (${got.paths.join(", ")}). Deleting it now loses them unless that tab saves them elsewhere.`,
  );
}
