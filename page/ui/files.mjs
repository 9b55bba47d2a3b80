// Files surface: lazy tree, upload (files and whole folders), view text and images, edit and
// save text, download, rename, delete (SPEC §11). Folders load when opened — never the whole
// project at once.

import { el, flagHidden, formatBytes, literal, replace } from "../dom.mjs";
import { acted, clearAlerts, guarded, showNotice } from "./alerts.mjs";
import { confirmDialog, promptDialog } from "./dialog.mjs";

const IMAGE_TYPES = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", svg: "image/svg+xml" };
const TEXT_VIEW_LIMIT = 2 * 1024 * 1024;

function joinPath(folder, name) {
  return folder ? `${folder}/${name}` : name;
}

function extension(name) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

export class FilesView {
  constructor(node, app, project) {
    this.node = node;
    this.app = app;
    this.project = project;
    this.folder = "";
    this.objectUrls = [];
  }

  call(op, args = {}, options = {}) {
    return this.app.host.call(op, { project: this.project.id, ...args }, options);
  }

  async render() {
    this.targetLabel = el("span", { id: "target-folder" }, "/");
    this.progress = el("div", { class: "upload-progress", hidden: true });
    this.tree = el("ul", { class: "tree", id: "file-tree", "aria-label": "Project files" });
    this.viewer = el("section", { class: "viewer", id: "file-viewer", "aria-label": "Selected file" },
      el("p", { class: "empty" }, "Choose a file to view it."));
    const uploadFiles = el("input", { id: "upload-files", type: "file", multiple: true, class: "visually-hidden-input",
      onchange: (e) => this.upload([...e.target.files], false).finally(() => { e.target.value = ""; }) });
    const uploadFolder = el("input", { id: "upload-folder", type: "file", webkitdirectory: true, multiple: true, class: "visually-hidden-input",
      onchange: (e) => this.upload([...e.target.files], true).finally(() => { e.target.value = ""; }) });
    replace(this.node,
      el("div", { class: "surface-head" },
        flagHidden(el("h2", { id: "project-title" }, this.project.name)),
        el("button", { type: "button", onclick: () => this.app.go("projects") }, "All projects"),
      ),
      el("div", { class: "toolbar", role: "group", "aria-label": "File actions" },
        el("span", { class: "muted" }, "Folder: ", this.targetLabel),
        el("button", { type: "button", onclick: () => this.setFolder("") }, "Project root"),
        el("label", { for: "upload-files", class: "button" }, "Upload files"), uploadFiles,
        el("label", { for: "upload-folder", class: "button" }, "Upload a folder"), uploadFolder,
        el("button", { type: "button", onclick: () => this.newFile() }, "New text file"),
        el("button", { type: "button", onclick: () => this.newFolder() }, "New folder"),
      ),
      this.progress,
      el("div", { class: "files-layout" },
        el("nav", { class: "tree-pane", "aria-label": "File tree" }, this.tree),
        this.viewer,
      ),
    );
    await this.loadFolder("", this.tree);
  }

  setFolder(folder) {
    this.folder = folder;
    this.targetLabel.textContent = `/${folder}`;
  }

  async loadFolder(folder, list) {
    const listing = await guarded("Listing the folder", () => this.call("file.list", { folder }));
    if (!listing) return;
    const items = listing.result.entries.map((entry) => {
      const path = joinPath(folder, entry.name);
      if (entry.kind === "dir") {
        const children = el("ul", { class: "tree" });
        const details = el("details", { "data-path": path },
          el("summary", {}, el("span", { class: "icon", "aria-hidden": "true" }, "▸ "), literal(entry.name), "/"));
        details.addEventListener("toggle", () => {
          if (details.open) {
            this.setFolder(path);
            if (!details.dataset.loaded) {
              details.dataset.loaded = "1";
              this.loadFolder(path, children);
            }
          }
        });
        details.appendChild(children);
        return el("li", { class: "tree-dir" }, details);
      }
      return el("li", { class: "tree-file" },
        flagHidden(el("button", { type: "button", class: "link file-entry literal", "data-path": path, onclick: async () => { if (await this.app.mayLeave()) await this.open(path); } }, entry.name)),
        el("span", { class: "muted size" }, ` ${formatBytes(entry.size)}`));
    });
    replace(list, items.length ? items : el("li", { class: "muted" }, "(empty folder)"));
  }

  async refreshTree() {
    await this.loadFolder("", this.tree);
  }

  async upload(files, asFolder) {
    if (!files.length) return;
    clearAlerts();
    const total = files.reduce((n, f) => n + f.size, 0);
    let sent = 0;
    let done = 0;
    const bar = el("progress", { max: String(Math.max(total, 1)), value: "0", id: "upload-bar", "aria-label": "Upload progress" });
    const label = el("span", {}, "");
    replace(this.progress, label, bar);
    this.progress.hidden = false;
    let failed = 0;
    for (const file of files) {
      const relative = asFolder && file.webkitRelativePath ? file.webkitRelativePath : file.name;
      const path = joinPath(this.folder, relative);
      label.textContent = `Uploading ${done + 1} of ${files.length}: ${relative} `;
      const ok = await guarded(`Uploading ${relative}`, async () => this.call("file.write", { path }, { body: await file.arrayBuffer() }));
      if (!ok) failed += 1;
      done += 1;
      sent += file.size;
      bar.value = sent;
    }
    label.textContent = `Uploaded ${done - failed} of ${files.length} files (${formatBytes(total)}). `;
    if (!failed) showNotice(`Uploaded ${files.length} file${files.length === 1 ? "" : "s"}.`);
    await this.refreshTree();
  }

  revokeUrls() {
    for (const url of this.objectUrls.splice(0)) URL.revokeObjectURL(url);
  }

  async open(path) {
    const read = await guarded(`Opening ${path}`, () => this.call("file.read", { path }));
    if (!read) return;
    clearAlerts();
    this.revokeUrls();
    const { size, sha256 } = read.result;
    const bytes = new Uint8Array(read.body ?? new ArrayBuffer(0));
    const name = path.split("/").pop();
    const type = IMAGE_TYPES[extension(name)];
    let text = null;
    if (!type && bytes.byteLength <= TEXT_VIEW_LIMIT) {
      try { text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); } catch { text = null; }
    }
    const download = () => {
      const url = URL.createObjectURL(new Blob([bytes], { type: type ?? "application/octet-stream" }));
      const a = el("a", { href: url, download: name, hidden: true });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    };
    let content;
    if (type) {
      const url = URL.createObjectURL(new Blob([bytes], { type }));
      this.objectUrls.push(url);
      content = el("img", { src: url, alt: `Image ${name}`, class: "preview" });
    } else if (text !== null) {
      content = el("pre", { class: "text-view", id: "text-view", tabindex: "0", role: "region", "aria-label": `Content of ${name}` }, text);
    } else {
      content = el("p", { class: "muted" }, `Binary file (${formatBytes(size)}) — download it to open it.`);
    }
    replace(this.viewer,
      flagHidden(el("h3", { id: "viewer-path", class: "literal" }, path)),
      el("p", { class: "muted" }, `${formatBytes(size)} · sha256 `, el("code", { id: "viewer-sha256" }, sha256)),
      el("div", { class: "toolbar", role: "group", "aria-label": "Selected file actions" },
        text !== null ? el("button", { type: "button", onclick: () => this.edit(path, text) }, "Edit") : null,
        el("button", { type: "button", onclick: download }, "Download"),
        el("button", { type: "button", onclick: () => this.rename(path) }, "Rename or move"),
        el("button", { type: "button", class: "danger", onclick: () => this.remove(path) }, "Delete"),
      ),
      content,
    );
  }

  edit(path, text) {
    const area = el("textarea", { id: "editor", rows: "20", spellcheck: "false", "aria-label": `Edit ${path}` });
    area.value = text;
    // Unsaved edits are never dropped in silence: opening another file, another surface or
    // project, or leaving the page asks first (app.mayLeave, and beforeunload in app.mjs).
    this.app.leaving = {
      unsaved: () => area.isConnected && area.value !== text,
      confirmLeave: () => confirmDialog({
        title: "Discard your changes?", danger: true, confirmLabel: "Discard changes",
        text: `Your changes to ${path} are not saved. Discarding them keeps the file as it is stored.`,
      }),
    };
    replace(this.viewer,
      el("h3", {}, "Editing ", literal(path)),
      area,
      el("div", { class: "toolbar" },
        el("button", { type: "button", class: "primary", id: "save-file", onclick: async () => {
          const body = new TextEncoder().encode(area.value).buffer;
          const saved = await acted(`Saving ${path}`, () => this.call("file.write", { path }, { body }));
          if (saved) { this.app.leaving = null; await this.open(path); await this.refreshTree(); showNotice(`Saved ${path} (${formatBytes(saved.result.size)}).`); }
        } }, "Save"),
        el("button", { type: "button", onclick: () => { this.app.leaving = null; this.open(path); } }, "Cancel"),
      ),
    );
    area.focus();
  }

  async newFile() {
    if (!(await this.app.mayLeave())) return;
    const name = await promptDialog({ title: "New text file", label: `File path (inside /${this.folder})`, confirmLabel: "Create" });
    if (!name) return;
    const path = joinPath(this.folder, name);
    const made = await acted(`Creating ${path}`, () => this.call("file.write", { path, if_absent: true }, { body: new ArrayBuffer(0) }));
    if (made) { await this.refreshTree(); this.edit(path, ""); }
  }

  async newFolder() {
    const name = await promptDialog({ title: "New folder", label: `Folder path (inside /${this.folder})`, confirmLabel: "Create" });
    if (!name) return;
    const path = joinPath(this.folder, name);
    if (await acted(`Creating ${path}`, () => this.call("file.mkdir", { path }))) await this.refreshTree();
  }

  async rename(path) {
    const dst = await promptDialog({ title: "Rename or move", label: "New path (from the project root)", value: path, confirmLabel: "Move" });
    if (!dst || dst === path) return;
    if (await acted(`Moving ${path}`, () => this.call("file.move", { src: path, dst }))) {
      await this.refreshTree();
      await this.open(dst);
    }
  }

  async remove(path) {
    const sure = await confirmDialog({ title: "Delete file", danger: true, confirmLabel: "Delete", text: `This deletes ${path} from the project. It cannot be undone.` });
    if (!sure) return;
    if (await acted(`Deleting ${path}`, () => this.call("file.delete", { path }))) {
      replace(this.viewer, el("p", { class: "empty" }, `Deleted ${path}.`));
      await this.refreshTree();
    }
  }
}
