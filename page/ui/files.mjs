// Files surface (SPEC §11; docs/ui.md, "The file explorer" and "The editor"): the project's
// tree (page/ui/explorer.mjs), the upload target — always shown, changed only by an explicit
// choice —, uploads of files and whole folders (buttons, or a drop from the desktop), the open
// file (text in the editor, images, long texts in pages, anything else as a download), and
// every act on files and folders, each one host call. Where the person is (the upload folder,
// the open file) is recorded in the URL (app.place), so reload, Back/Forward and links follow.

import { LIMITS } from "../contract.gen.mjs";
import { downloadBlob, el, formatBytes, name, replace } from "../dom.mjs";
import { formatRoute } from "../router.mjs";
import { acted, clearAlerts, guarded, showNotice, showProblem, showRefusal } from "./alerts.mjs";
import { exportProject } from "./archive.mjs";
import { confirmDialog, promptDialog, showTextDialog } from "./dialog.mjs";
import { mountEditor } from "./editor.mjs";
import { PythonPanel, isPython } from "./python.mjs";
import { Finder } from "./find.mjs";
import { editPrefs, editorOptions, loadPrefs } from "./editor_prefs.mjs";
import { Explorer, baseName, folderLabel, joinPath, parentOf } from "./explorer.mjs";
import { openMenu } from "./menu.mjs";
import { blocked, guard, safeNotice } from "./safe.mjs";
import { moveAsking, readDrop, writeAsking } from "./transfer.mjs";
import { StatusLine } from "./status_line.mjs";
import { restoreEntries, showTrash } from "./trash.mjs";
import { runWith } from "./run_with.mjs";
import { keepPosition } from "./position.mjs";
import { askConflict, askUnsaved } from "./unsaved.mjs";

const IMAGE_TYPES = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
};
/** Texts up to this size open in the editor; longer ones are shown in pages (core's
 * EDITOR_TEXT_BYTES, core/host/file_ops.py, through the generated contract module). */
const EDITOR_BYTES = LIMITS.editor_text_bytes;
const PAGE_BYTES = 1024 * 1024;
const SNIFF_BYTES = 8192;

function extension(leaf) {
  const dot = leaf.lastIndexOf(".");
  return dot > 0 ? leaf.slice(dot + 1).toLowerCase() : "";
}

/** UTF-8 text, by content: valid UTF-8 (the decoder is fatal) and no NUL in the first 8 KB.
 * Resolves the text, or null for anything else. */
function decodeText(bytes) {
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Page `n` (0-based) of a long text: about PAGE_BYTES, both ends moved past any UTF-8
 * continuation byte so no character is cut. Resolves the text, or null if not UTF-8. */
function textPage(bytes, n) {
  const edge = (i) => {
    let j = Math.min(i, bytes.length);
    while (j < bytes.length && (bytes[j] & 0xc0) === 0x80) j += 1;
    return j;
  };
  return decodeText(bytes.subarray(edge(n * PAGE_BYTES), edge((n + 1) * PAGE_BYTES)));
}

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** What the status line says when the host stored `n` names in Unicode NFC that were sent in
 * NFD (file.write / file.mkdir / file.move answer composed_from; core/paths.py rule d). */
function composedNote(n) {
  return `${n === 1 ? "One name was" : `${n} names were`} written in decomposed Unicode (NFD, as macOS writes names) and ${n === 1 ? "is" : "are"} stored composed (NFC): ${n === 1 ? "it looks" : "they look"} the same.`;
}

export class FilesView {
  constructor(node, app, project) {
    this.node = node;
    this.app = app;
    this.project = project;
    this.folder = "";
    this.file = null; // the path open in the viewer
    this.editor = null;
    this.objectUrls = [];
    this.alive = true;
    this.openSeq = 0;
    this.uploadInto = null; // a one-off target ("Upload files here…")
    this.keys = (event) => this.#keys(event);
  }

  call(op, args = {}, options = {}) {
    return this.app.host.call(op, { project: this.project.id, ...args }, options);
  }

  can(op) {
    return !blocked(this.app, op);
  }

  // ------------------------------------------------------------------ layout

  async render(params = {}) {
    const app = this.app;
    this.targetLabel = el("strong", { id: "target-folder", class: "target-folder" }, "/");
    this.progress = el("div", { class: "upload-progress", id: "upload-progress", hidden: true });
    this.statusLine = el("p", {
      class: "files-status muted",
      id: "files-status",
      role: "status",
      "aria-live": "polite",
    });
    this.status?.destroy();
    this.status = new StatusLine(this.statusLine, this.progress); // lines that never outlive what they say
    this.viewer = el(
      "section",
      { class: "viewer", id: "file-viewer", "aria-label": "Selected file" },
      el("p", { class: "empty" }, "Choose a file to view it."),
    );
    this.finder?.destroy();
    this.explorer = new Explorer({
      list: async (folder, offset, limit) =>
        (
          await guarded("Listing the folder", () =>
            this.call("file.list", { folder, offset, limit }),
          )
        )?.result ?? null,
      on: {
        open: async (path) => {
          if (await this.app.mayLeave()) await this.open(path);
        },
        menu: (selected, x, y, opener) => this.menu(selected, x, y, opener),
        drop: (folder, dataTransfer) => this.drop(folder, dataTransfer),
        move: (paths, folder) => this.moveMany(paths, folder),
        rename: (path) => this.rename(path),
        remove: (selected) => this.remove(selected),
        status: (text) => this.say(text),
        selection: (selected) => this.#selectionChanged(selected),
        expanded: () => this.#rememberFolders(),
      },
    });
    this.finder = new Finder(this); // search in files, quick open, the tree's filter (find.mjs)
    this.uploadFiles = el("input", {
      id: "upload-files",
      type: "file",
      multiple: true,
      class: "visually-hidden-input",
      onchange: (e) => this.uploadPicked(e.target, false),
    });
    this.uploadFolder = el("input", {
      id: "upload-folder",
      type: "file",
      webkitdirectory: true,
      multiple: true,
      class: "visually-hidden-input",
      onchange: (e) => this.uploadPicked(e.target, true),
    });
    this.useSelected = el(
      "button",
      {
        type: "button",
        id: "use-selected-folder",
        disabled: true,
        onclick: () => {
          const one = this.explorer.selected();
          if (one.length === 1 && one[0].kind === "dir") this.setTarget(one[0].path);
        },
      },
      "Use selected folder",
    );
    replace(
      this.node,
      el(
        "div",
        { class: "surface-head" },
        el(
          "h2",
          { id: "project-title-row", class: "one-line" },
          name(this.project.name, { id: "project-title" }),
        ),
        el("button", { type: "button", onclick: () => app.go("projects") }, "All projects"),
      ),
      safeNotice(el, app),
      el(
        "div",
        { class: "toolbar files-toolbar", role: "group", "aria-label": "File actions" },
        el(
          "span",
          { class: "target-line" },
          el("span", { class: "muted" }, "Upload into "),
          this.targetLabel,
        ),
        this.useSelected,
        el(
          "button",
          { type: "button", id: "target-root", onclick: () => this.setTarget("") },
          "Project root",
        ),
        guard(
          app,
          "file.write",
          el("label", { for: "upload-files", class: "button" }, "Upload files"),
        ),
        this.uploadFiles,
        guard(
          app,
          "file.write",
          el("label", { for: "upload-folder", class: "button" }, "Upload a folder"),
        ),
        this.uploadFolder,
        guard(
          app,
          "file.write",
          el(
            "button",
            { type: "button", id: "new-file", onclick: () => this.newFile(this.folder) },
            "New text file",
          ),
        ),
        guard(
          app,
          "file.mkdir",
          el(
            "button",
            { type: "button", id: "new-folder", onclick: () => this.newFolder(this.folder) },
            "New folder",
          ),
        ),
        el(
          "button",
          {
            type: "button",
            id: "download-project",
            onclick: () => this.exportArchive(),
          },
          "Download project (.zip)",
        ),
        el("button", { type: "button", id: "show-trash", onclick: () => this.trash() }, "Trash"),
        el(
          "button",
          {
            type: "button",
            id: "open-search",
            "aria-keyshortcuts": "Control+Shift+F",
            onclick: () => this.finder.open(),
          },
          "Search in files",
        ),
        el(
          "button",
          {
            type: "button",
            id: "open-quick",
            "aria-keyshortcuts": "Control+P",
            onclick: () => this.finder.quickOpen(),
          },
          "Go to file",
        ),
      ),
      this.progress,
      this.statusLine,
      el(
        "div",
        { class: "files-layout" },
        el(
          "div",
          { class: "files-side" },
          // the search is a side column over the tree (issue 34: above the layout it pushed the
          // editor below the fold at 1280×800); its results scroll inside their own box
          this.finder.panel,
          el(
            "nav",
            { class: "tree-nav", "aria-label": "File tree" },
            this.finder.filterBox,
            this.explorer.countNote, // above the pane: under it, it was below the fold
            this.explorer.element,
          ),
        ),
        this.viewer,
      ),
    );
    document.addEventListener("keydown", this.keys);
    if (!(await this.explorer.start())) return false;
    await this.#restoreFolders();
    await this.follow(params);
    return false;
  }

  /** Open the folders the host remembers open in this project (shallowest first; one that is
   * gone is skipped and forgotten at the next report). */
  async #restoreFolders() {
    this.restoring = true;
    try {
      const layout = await this.call("files.layout", {}).catch(() => null);
      this.rememberedFolders = layout?.result.expanded ?? [];
      for (const folder of this.rememberedFolders) {
        if (!this.alive) return;
        const parent = folder.includes("/") ? folder.slice(0, folder.lastIndexOf("/")) : "";
        if (parent && this.explorer.kind(parent) !== "dir") continue; // its parent stayed closed
        await this.explorer.expand(folder);
      }
    } finally {
      this.restoring = false;
    }
    this.#rememberFolders();
  }

  /** Tell the host which folders are open now (presentation state: a failure only means a
   * reload opens fewer folders). */
  #rememberFolders() {
    if (this.restoring || !this.alive) return;
    const expanded = this.explorer.expandedFolders();
    if (JSON.stringify(expanded) === JSON.stringify(this.rememberedFolders)) return;
    this.rememberedFolders = expanded;
    this.call("files.layout", { expanded }).catch(() => {});
  }

  destroy() {
    this.alive = false;
    document.removeEventListener("keydown", this.keys);
    this.finder?.destroy();
    this.explorer?.destroy();
    this.status?.destroy();
    this.editor?.destroy();
    this.editor = null;
    this.revokeUrls();
  }

  /** Say `text` on the status line (page/ui/status_line.mjs: a success line clears itself;
   * `lasting` for one that needs the person, e.g. why an act is not possible now). */
  say(text, { lasting = false, kept = false } = {}) {
    this.status?.say(text, { lasting, kept });
  }

  #selectionChanged(selected) {
    if (!this.useSelected) return;
    const one = selected.length === 1 && selected[0].kind === "dir" ? selected[0].path : null;
    this.useSelected.disabled = one === null || one === this.folder;
    this.useSelected.title =
      one === null
        ? "Select one folder in the tree to upload into it."
        : one === this.folder
          ? "This folder is already the upload target."
          : `Upload into ${folderLabel(one)} from now on.`;
  }

  /** Ctrl/⌘+S anywhere on this surface saves the open file (inside the editor, its own key
   * binding does it first and marks the event handled). */
  #keys(event) {
    if (!this.alive || this.finder?.keys(event) || event.defaultPrevented) return;
    if (
      (event.ctrlKey || event.metaKey) &&
      !event.altKey &&
      event.key.toLowerCase() === "s" &&
      this.editor
    ) {
      event.preventDefault();
      this.save();
    }
  }

  // ------------------------------------------------------------------ where the person is

  /** Go to the place the URL names: {folder, file} (either may be missing). */
  async follow({ folder = "", file = null } = {}) {
    let target = folder ?? "";
    if (target && !((await this.explorer.reveal(target)) && this.explorer.kind(target) === "dir")) {
      showNotice(
        `The folder ${folderLabel(target)} in this address is not in the project; uploads go to the project root.`,
      );
      target = "";
    }
    this.setTarget(target, { record: false });
    if (target) await this.explorer.expand(target);
    if (file) {
      await this.explorer.reveal(file);
      // the tree shows the open file, however far down (issue 33 item 6: a reload, a link)
      this.explorer.scrollTo(file);
      await this.open(file, { record: false });
    } else {
      this.closeViewer();
    }
    if (this.alive && (target !== (folder ?? "") || (file && this.file !== file))) {
      this.app.place({ folder: target || null, file: this.file }, { push: false });
    }
  }

  /** Make `folder` the upload target (an explicit choice; shown in the toolbar and the tree). */
  setTarget(folder, { record = true } = {}) {
    this.folder = folder;
    this.targetLabel.textContent = folderLabel(folder);
    this.targetLabel.title = folderLabel(folder);
    this.explorer.setTarget(folder);
    this.#selectionChanged(this.explorer.selected());
    if (record) {
      this.app.place({ folder: folder || null });
      this.say(`Uploads and new files now go to ${folderLabel(folder)}.`);
    }
  }

  /** After the tree changed: a target folder that is gone falls back to the project root,
   * so the label never names a folder that is not there. */
  async afterChange() {
    this.finder?.changed();
    await this.explorer.refresh();
    if (
      this.folder &&
      this.explorer.kind(this.folder) !== "dir" &&
      !(await this.explorer.reveal(this.folder))
    ) {
      this.say(
        `The upload folder ${folderLabel(this.folder)} is gone; uploads go to the project root.`,
      );
      this.setTarget("", { record: false });
      this.app.place({ folder: null }, { push: false });
    }
  }

  // ------------------------------------------------------------------ the context menu

  menu(selected, x, y, opener) {
    const app = this.app;
    const why = (op) => blocked(app, op);
    const files = selected.filter((s) => s.kind === "file");
    const dirs = selected.filter((s) => s.kind === "dir");
    let items;
    if (!selected.length) {
      items = [
        {
          id: "upload-files",
          label: "Upload files…",
          disabled: why("file.write"),
          run: () => this.pick(this.uploadFiles, this.folder),
        },
        {
          id: "upload-folder",
          label: "Upload a folder…",
          disabled: why("file.write"),
          run: () => this.pick(this.uploadFolder, this.folder),
        },
        {
          id: "new-file",
          label: "New text file…",
          disabled: why("file.write"),
          run: () => this.newFile(this.folder),
        },
        {
          id: "new-folder",
          label: "New folder…",
          disabled: why("file.mkdir"),
          run: () => this.newFolder(this.folder),
        },
        "-",
        {
          id: "download-project",
          label: "Download project (.zip)",
          run: () => this.exportArchive(),
        },
        { id: "show-trash", label: "Trash…", run: () => this.trash() },
      ];
    } else if (selected.length === 1 && files.length === 1) {
      const path = files[0].path;
      items = [
        {
          id: "open",
          label: "Open",
          shortcut: "Enter",
          run: async () => {
            if (await app.mayLeave()) await this.open(path);
          },
        },
        ...(isPython(path) ? [{ id: "run", label: "Run", run: () => this.runFile(path) }] : []),
        { id: "run-with", label: "Run with…", run: () => runWith(this, path) }, // a plugin's operation (issue 33 item 5)
        {
          id: "rename",
          label: "Rename or move…",
          shortcut: "F2",
          disabled: why("file.move"),
          run: () => this.rename(path),
        },
        {
          id: "move-to",
          label: "Move to folder…",
          shortcut: "Ctrl+X",
          disabled: why("file.move"),
          run: () => this.moveToPrompt([path]),
        },
        { id: "download", label: "Download", run: () => this.download(path) },
        { id: "copy-link", label: "Copy link", run: () => this.copyLink(path) },
        "-",
        {
          id: "delete",
          label: "Delete…",
          shortcut: "Delete",
          danger: true,
          disabled: why("file.delete"),
          run: () => this.remove(selected),
        },
      ];
    } else if (selected.length === 1) {
      const path = dirs[0].path;
      items = [
        {
          id: "toggle",
          label: this.explorer.nodes.get(path)?.expanded ? "Close folder" : "Open folder",
          shortcut: "Enter",
          run: () =>
            this.explorer.nodes.get(path)?.expanded
              ? this.explorer.collapse(path)
              : this.explorer.expand(path),
        },
        {
          id: "use-as-target",
          label: "Upload into this folder from now on",
          disabled: path === this.folder ? "This folder is already the upload target." : null,
          run: () => this.setTarget(path),
        },
        {
          id: "upload-files",
          label: "Upload files here…",
          disabled: why("file.write"),
          run: () => this.pick(this.uploadFiles, path),
        },
        {
          id: "upload-folder",
          label: "Upload a folder here…",
          disabled: why("file.write"),
          run: () => this.pick(this.uploadFolder, path),
        },
        {
          id: "new-file",
          label: "New text file here…",
          disabled: why("file.write"),
          run: () => this.newFile(path),
        },
        {
          id: "new-folder",
          label: "New folder here…",
          disabled: why("file.mkdir"),
          run: () => this.newFolder(path),
        },
        "-",
        {
          id: "rename",
          label: "Rename folder…",
          shortcut: "F2",
          disabled: why("file.move"),
          run: () => this.rename(path),
        },
        {
          id: "move-to",
          label: "Move folder to…",
          shortcut: "Ctrl+X",
          disabled: why("file.move"),
          run: () => this.moveToPrompt([path]),
        },
        {
          id: "download-folder",
          label: "Download folder (.zip)",
          run: () => this.exportArchive(path),
        },
        { id: "copy-link", label: "Copy link", run: () => this.copyLink(null, path) },
        "-",
        {
          id: "delete",
          label: "Delete folder…",
          shortcut: "Delete",
          danger: true,
          disabled: why("file.delete"),
          run: () => this.remove(selected),
        },
      ];
    } else {
      items = [
        {
          id: "move-to",
          label: `Move ${plural(selected.length, "item")} to folder…`,
          shortcut: "Ctrl+X",
          disabled: why("file.move"),
          run: () => this.moveToPrompt(selected.map((f) => f.path)),
        },
        "-",
        {
          id: "delete",
          label: `Delete ${plural(selected.length, "item")}…`,
          shortcut: "Delete",
          danger: true,
          disabled: why("file.delete"),
          run: () => this.remove(selected),
        },
      ];
    }
    const what = !selected.length
      ? "the project"
      : selected.length === 1
        ? baseName(selected[0].path)
        : plural(selected.length, "item");
    openMenu({ x, y, items, label: `Actions for ${what}`, opener });
  }

  /** Open a file picker that uploads into `folder` (just this once). */
  pick(input, folder) {
    this.uploadInto = folder;
    input.click();
  }

  // ------------------------------------------------------------------ uploads

  async uploadPicked(input, asFolder) {
    const files = [...input.files];
    const into = this.uploadInto ?? this.folder;
    this.uploadInto = null;
    input.value = "";
    await this.upload(
      files.map((file) => ({
        path: asFolder && file.webkitRelativePath ? file.webkitRelativePath : file.name,
        file,
      })),
      into,
    );
  }

  /** A drop from the desktop onto `folder`: read it NOW (inside the event), then upload. */
  drop(folder, dataTransfer) {
    if (blocked(this.app, "file.write")) {
      this.say(blocked(this.app, "file.write"), { lasting: true });
      return;
    }
    const reading = readDrop(dataTransfer);
    this.say(`Reading what was dropped on ${folderLabel(folder)}…`);
    reading.then(
      (items) => this.upload(items, folder),
      (err) =>
        showProblem("Uploading", `The dropped files could not be read (${err?.message ?? err}).`),
    );
  }

  /** Export the project, or its `folder`, into a download (page/ui/archive.mjs); a new act,
   * so the status line's last outcome (an upload's summary) goes first. */
  exportArchive(folder = "") {
    this.status.clear();
    return exportProject(this.app, this.project, this.progress, folder);
  }

  /** Upload `items` ([{path, file} | {path, dir}], paths relative to `into`): files go in
   * batches (`file.write_batch`, issue 34: each file atomic, one audit record a batch); a name
   * the host answers as taken asks Replace / Keep both / Cancel, one file at a time. Cancel
   * (the button beside the bar) stops before the next batch: what was written stays. */
  async upload(items, into) {
    if (!items.length) return;
    clearAlerts();
    this.status.clear();
    // in path order: a batch then holds a few folders, and the batches' order is the tree's
    const files = items
      .filter((i) => i.file)
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    // each file's size is asked once, as its batch is cut: a picked file's `size` is a
    // synchronous look at the disk each time it is read (issue 34, stop 42: four reads a file
    // cost 2.6 s of a 10,000-file upload before its first batch), so the bar counts files
    const sizeOf = (item) => (item.size ??= item.file.size);
    const bar = el("progress", {
      max: String(Math.max(files.length, 1)),
      value: "0",
      id: "upload-bar",
      "aria-label": "Upload progress",
    });
    const label = el("span", { class: "progress-label" }, "");
    let stopped = false;
    const cancel = el(
      "button",
      {
        type: "button",
        id: "upload-cancel",
        onclick: () => {
          stopped = true;
          cancel.disabled = true;
          label.textContent = "Stopping the upload… ";
        },
      },
      "Cancel",
    );
    replace(this.progress, label, bar, cancel);
    this.progress.hidden = false;
    const state = { all: null, left: 0 };
    let passed = 0; // files whose batch is answered (the bar)
    let written = 0;
    let writtenBytes = 0; // what the summary says was uploaded: the bytes written, not those picked
    let failed = 0;
    let renamed = 0;
    let composed = 0;
    for (const item of items.filter((i) => i.dir)) {
      const path = joinPath(into, item.path);
      const made = await guarded(`Creating ${path}`, () => this.call("file.mkdir", { path }));
      if (!made) failed += 1;
      else if (made.result.composed_from) composed += 1;
    }
    const one = async (item) => {
      // a file alone, asking when its name is taken
      const seen = [];
      const done = await writeAsking(
        (op, args, o) => this.call(op, args, o),
        joinPath(into, item.path),
        () => item.file.arrayBuffer(),
        { act: "uploading", state, seen },
      );
      if (done === null) return null;
      if (seen.at(-1)?.composed_from) composed += 1;
      else if (done !== joinPath(into, item.path)) renamed += 1;
      written += 1;
      writtenBytes += sizeOf(item);
      return done;
    };
    let next = 0;
    const cut = () => {
      // the next batch: up to LIMITS.upload_batch_files files and upload_batch_bytes bytes (a
      // larger file alone)
      const batch = [];
      let bytes = 0;
      while (
        next < files.length &&
        batch.length < LIMITS.upload_batch_files &&
        (!batch.length || bytes + sizeOf(files[next]) <= LIMITS.upload_batch_bytes)
      ) {
        bytes += sizeOf(files[next]);
        batch.push(files[next++]);
      }
      return batch;
    };
    const read = (batch) => Promise.all(batch.map((i) => i.file.arrayBuffer()));
    let batch = cut();
    let reading = batch.length ? read(batch) : null;
    for (; batch.length;) {
      if (stopped) break;
      const parts = await reading;
      label.textContent = `Uploading ${written + 1}–${written + batch.length} of ${files.length}: ${batch[0].path} `;
      const ask = [];
      const body = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
      let at = 0;
      for (const part of parts) {
        body.set(new Uint8Array(part), at);
        at += part.byteLength;
      }
      const listed = batch.map((item, n) => ({
        path: joinPath(into, item.path),
        size: parts[n].byteLength,
      }));
      const pending = this.call("file.write_batch", { files: listed }, { body: body.buffer });
      // the next batch is cut and read while this one is written
      const following = cut();
      reading = following.length ? read(following) : null;
      try {
        const answer = (await pending).result;
        written += answer.written.length;
        writtenBytes += answer.written.reduce((n, w) => n + w.size, 0);
        composed += answer.written.filter((w) => w.composed_from).length;
        for (const c of answer.conflicts) {
          if (c.code === "already-exists") ask.push(batch[c.index]);
          else {
            failed += 1;
            showRefusal(
              Object.assign(new Error(c.message), { code: c.code }),
              `Uploading ${batch[c.index].path}`,
            );
          }
        }
        if (answer.stopped) stopped = true;
      } catch (err) {
        showRefusal(err, `Uploading ${batch.length} files from ${batch[0].path}`);
        failed += batch.length;
      }
      for (const item of ask) {
        if (stopped) break;
        state.left = ask.length - 1;
        state.more = following.length > 0;
        try {
          if ((await one(item)) === null) {
            stopped = true;
            break;
          }
        } catch (err) {
          showRefusal(err, `Uploading ${item.path}`);
          failed += 1;
        }
      }
      passed += batch.length;
      bar.value = passed;
      batch = following;
    }
    cancel.remove();
    const count =
      written === files.length && !stopped
        ? plural(written, "file")
        : `${written} of ${plural(files.length, "file")}`;
    const summary = `${stopped ? "Stopped: uploaded" : "Uploaded"} ${count} (${formatBytes(writtenBytes)}) into ${folderLabel(into)}${renamed ? `, ${renamed} under a new name` : ""}${failed ? `; ${failed} not written (said above)` : ""}.${composed ? ` ${composedNote(composed)}` : ""}`;
    // said once, on the status line: the bar's own label and the messages region no longer
    // repeat it; and the bar goes as it is said (stop 44's tryout: a full bar left beside the
    // kept summary read as an upload still under way; the next upload draws a new, empty one)
    this.progress.hidden = true;
    replace(this.progress);
    this.say(summary, { kept: true }); // until the next act or Close (issue 34)
    await this.afterChange();
    if (into && (await this.explorer.reveal(into))) await this.explorer.expand(into);
  }

  // ------------------------------------------------------------------ creating

  async newFile(folder) {
    if (!(await this.app.mayLeave())) return;
    this.status.clear();
    const seen = [];
    const made = await promptDialog({
      title: "New text file",
      label: `File name (in ${folderLabel(folder)})`,
      confirmLabel: "Create",
      // the host's refusal of the name shows in the dialog, which keeps what was typed
      act: async (leaf) => {
        try {
          return {
            done: await writeAsking(
              (op, args, o) => this.call(op, args, o),
              joinPath(folder, leaf),
              async () => new ArrayBuffer(0),
              { act: "creating", state: { all: null, left: 0 }, seen },
            ),
          };
        } catch (err) {
          return { problem: err };
        }
      },
    });
    if (!made) return;
    clearAlerts();
    await this.afterChange();
    await this.explorer.reveal(made);
    await this.open(made, { focusEditor: true });
    this.say(`Created ${made}.${seen.at(-1)?.composed_from ? ` ${composedNote(1)}` : ""}`);
  }

  async newFolder(folder) {
    this.status.clear();
    const made = await promptDialog({
      title: "New folder",
      label: `Folder name (in ${folderLabel(folder)})`,
      confirmLabel: "Create",
      act: async (leaf) => {
        try {
          return { done: (await this.call("file.mkdir", { path: joinPath(folder, leaf) })).result };
        } catch (err) {
          return { problem: err };
        }
      },
    });
    if (!made) return;
    clearAlerts();
    await this.afterChange();
    if (await this.explorer.reveal(made.path)) {
      this.explorer.select([made.path]);
      this.say(
        `Created ${folderLabel(made.path)}.${made.composed_from ? ` ${composedNote(1)}` : ""}`,
      );
    }
  }

  // ------------------------------------------------------------------ moving

  /** Rename a file or folder (a file's new path may be in another folder): the move is made
   * in the dialog, so a refused name shows there with what was typed (issue 33 item 9). */
  async rename(path) {
    const dir = this.explorer.kind(path) === "dir";
    if (
      this.file &&
      (this.file === path || this.file.startsWith(`${path}/`)) &&
      !(await this.app.mayLeave())
    )
      return;
    this.status.clear();
    const moved = await promptDialog({
      ...(dir
        ? {
            title: "Rename folder",
            label: `New name for ${folderLabel(path)}`,
            value: baseName(path),
            confirmLabel: "Rename",
          }
        : {
            title: "Rename or move",
            label: "New path (from the project root)",
            value: path,
            confirmLabel: "Move",
          }),
      act: async (typed) => {
        const dst = dir ? joinPath(parentOf(path), typed) : typed;
        if (dst === path) return { done: null };
        try {
          const done = await moveAsking((op, args, o) => this.call(op, args, o), path, dst, {
            state: { all: null, left: 0 },
            kind: dir ? "dir" : "file",
          });
          return { done: done ? [[path, done.path, done]] : null };
        } catch (err) {
          return { problem: err };
        }
      },
    });
    if (moved) await this.#afterMoves(moved);
  }

  async moveToPrompt(paths) {
    const here = parentOf(paths[0]);
    const what =
      paths.length === 1 && this.explorer.kind(paths[0]) === "dir"
        ? `the folder ${folderLabel(paths[0])}`
        : plural(paths.length, "item");
    const to = await promptDialog({
      title: `Move ${what}`,
      label: "Into the folder (from the project root; empty for the root)",
      value: here,
      confirmLabel: "Move",
    });
    if (to === null) return;
    await this.moveMany(paths, to.replace(/^\/+|\/+$/g, ""));
  }

  /** Move files and folders into `folder` (a drop, Ctrl+V, "Move to folder…"); what lies
   * inside a folder that moves too is carried with it. */
  async moveMany(paths, folder) {
    if (blocked(this.app, "file.move")) {
      this.say(blocked(this.app, "file.move"), { lasting: true });
      return;
    }
    const top = paths.filter((p) => !paths.some((q) => q !== p && p.startsWith(`${q}/`)));
    const pairs = top
      .map((p) => [p, joinPath(folder, baseName(p))])
      .filter(([src, dst]) => src !== dst);
    if (!pairs.length) {
      this.say(`Already in ${folderLabel(folder)}.`);
      return;
    }
    await this.moveEach(pairs);
  }

  async moveEach(pairs) {
    const under = (p, src) => p === src || p.startsWith(`${src}/`);
    if (this.file && pairs.some(([src]) => under(this.file, src)) && !(await this.app.mayLeave()))
      return;
    this.status.clear();
    const state = { all: null, left: pairs.length - 1 };
    const moved = [];
    for (const [src, dst] of pairs) {
      try {
        const done = await moveAsking((op, args, o) => this.call(op, args, o), src, dst, {
          state,
          kind: this.explorer.kind(src) ?? "file",
        });
        if (done === null) break;
        moved.push([src, done.path, done]);
      } catch (err) {
        showRefusal(err, `Moving ${src}`);
        break;
      }
      state.left -= 1;
    }
    await this.#afterMoves(moved);
  }

  /** After files and folders moved (`moved`: [[src, dst, the host's answer]]): the upload
   * target and the open file follow them, the tree shows them, the line says so. */
  async #afterMoves(moved) {
    const under = (p, src) => p === src || p.startsWith(`${src}/`);
    if (!moved.length) return;
    clearAlerts();
    // the upload target and the open file follow what moved, so neither names a gone path
    const follow = (p) => {
      for (const [src, dst] of moved) if (under(p, src)) return dst + p.slice(src.length);
      return p;
    };
    const target = this.folder ? follow(this.folder) : "";
    if (target !== this.folder) {
      this.setTarget(target, { record: false });
      this.app.place({ folder: target || null }, { push: false });
    }
    const reopen = this.file ? follow(this.file) : null;
    await this.afterChange();
    for (const [, dst] of moved) await this.explorer.reveal(dst);
    this.explorer.select(moved.map(([, dst]) => dst));
    if (reopen && reopen !== this.file) await this.open(reopen, { push: false });
    const [src, dst, done] = moved[0];
    const composed = moved.filter(([, , d]) => d.composed_from).length;
    this.say(
      (moved.length > 1
        ? `Moved ${plural(moved.length, "item")}.`
        : done.kind === "dir"
          ? `Moved the folder ${folderLabel(src)} to ${folderLabel(dst)} (${plural(done.files, "file")}).`
          : `Moved ${src} to ${dst}.`) + (composed ? ` ${composedNote(composed)}` : ""),
    );
  }

  // ------------------------------------------------------------------ deleting

  async remove(selected) {
    if (!selected.length) return;
    if (blocked(this.app, "file.delete")) {
      this.say(blocked(this.app, "file.delete"), { lasting: true });
      return;
    }
    this.status.clear();
    selected = selected.filter(
      (s) => !selected.some((q) => q !== s && s.path.startsWith(`${q.path}/`)),
    );
    const dirs = selected.filter((s) => s.kind === "dir");
    const files = selected.filter((s) => s.kind === "file");
    let inside = 0;
    let bytes = 0;
    for (const d of dirs) {
      // the count the confirm states comes from the host
      const walk = await guarded(`Counting the files in ${d.path}`, () =>
        this.call("file.walk", { folder: d.path }),
      );
      if (!walk) return;
      inside += walk.result.files.length;
      bytes += walk.result.files.reduce((n, f) => n + f.size, 0);
    }
    const one = selected.length === 1 ? selected[0] : null;
    const undo =
      "It goes to the project's trash: Undo, or restore it from Trash, until the trash is emptied.";
    const text =
      one && one.kind === "file"
        ? `This deletes ${one.path} from the project. ${undo}`
        : one
          ? `This deletes the folder ${folderLabel(one.path)} and the ${plural(inside, "file")} in it (${formatBytes(bytes)}). ${undo}`
          : `This deletes ${plural(files.length, "file")}${dirs.length ? ` and ${plural(dirs.length, "folder")} holding ${plural(inside, "more file")} (${formatBytes(bytes)})` : ""}. ${undo}`;
    const sure = await confirmDialog({
      title:
        one?.kind === "dir"
          ? "Delete folder"
          : one
            ? "Delete file"
            : `Delete ${plural(selected.length, "item")}`,
      danger: true,
      confirmLabel: "Delete",
      text,
      id: "delete-dialog",
    });
    if (!sure) return;
    const trashed = [];
    for (const s of selected) {
      const done = await acted(`Deleting ${s.path}`, () =>
        this.call("file.delete", { path: s.path, recursive: s.kind === "dir" }),
      );
      if (!done) break;
      trashed.push(done.result);
    }
    const gone = (p) =>
      trashed.some((t) => p === t.path || (t.kind === "dir" && p.startsWith(`${t.path}/`)));
    if (this.file && gone(this.file)) {
      this.app.leaving = null;
      this.closeViewer(`Deleted ${this.file}.`);
      this.app.place({ file: null });
    }
    await this.afterChange();
    if (!trashed.length) return;
    const summary =
      trashed.length === 1
        ? `Deleted ${trashed[0].kind === "dir" ? folderLabel(trashed[0].path) : trashed[0].path} (${plural(trashed[0].files, "file")}) — it is in the trash.`
        : `Deleted ${plural(trashed.length, "item")} — they are in the trash.`;
    this.status.say(
      [
        summary,
        " ",
        el(
          "button",
          {
            type: "button",
            id: "undo-delete",
            onclick: () => this.undo(trashed.map((t) => t.trash_id)),
          },
          "Undo",
        ),
      ],
      { lasting: true },
    );
  }

  /** Put trash entries `ids` back (the "Undo" after a delete). */
  async undo(ids) {
    const back = await restoreEntries(this, ids);
    if (back.length)
      this.say(
        back.length === 1
          ? `Restored ${back[0].path}.`
          : `Restored ${plural(back.length, "item")}.`,
      );
  }

  /** The Trash view, in place of the viewer. */
  async trash() {
    if (!(await this.app.mayLeave())) return;
    if (this.file) {
      this.app.leaving = null;
      this.closeViewer();
      this.app.place({ file: null });
    }
    await showTrash(this);
  }

  // ------------------------------------------------------------------ the open file

  revokeUrls() {
    for (const url of this.objectUrls.splice(0)) URL.revokeObjectURL(url);
  }

  closeViewer(text = "Choose a file to view it.") {
    this.editor?.destroy();
    this.editor = null;
    this.revokeUrls();
    this.file = null;
    this.explorer.setActive(null);
    replace(this.viewer, el("p", { class: "empty" }, text));
  }

  async download(path) {
    const read = await guarded(`Reading ${path}`, () => this.call("file.read", { path }));
    if (read)
      downloadBlob(
        new Blob([read.body ?? new ArrayBuffer(0)], {
          type: IMAGE_TYPES[extension(baseName(path))] ?? "application/octet-stream",
        }),
        baseName(path),
      );
  }

  /** A link to `file` (or `folder`) in this project: this page's address with that place. */
  async copyLink(file, folder = null) {
    const url = new URL(
      formatRoute("files", {
        project: this.project.id,
        folder: (folder ?? this.folder) || null,
        file,
      }),
      location.href,
    ).href;
    try {
      await navigator.clipboard.writeText(url);
      this.say("Link copied.");
    } catch {
      await showTextDialog({ title: "Link to this place", label: "Copy the link", value: url });
    }
  }

  /** Open `path` in the viewer. `record`: put it in the URL (push unless `push` is false). */
  async open(path, { record = true, push = true, focusEditor = false } = {}) {
    const seq = ++this.openSeq;
    if (path !== this.file) this.status?.clear(); // what the line said was about another file
    const read = await guarded(`Opening ${path}`, () => this.call("file.read", { path }));
    if (!read || seq !== this.openSeq || !this.alive) {
      if (!read && seq === this.openSeq && !record) this.closeViewer();
      return;
    }
    clearAlerts();
    this.editor?.destroy();
    this.editor = null;
    this.revokeUrls();
    this.file = path;
    this.explorer.setActive(path);
    this.#showInTree(path, seq); // not awaited: the file shows while a far folder's pages come
    if (record) this.app.place({ file: path }, { push });
    const { size, sha256 } = read.result;
    this.version = sha256; // what a save says it opened (issue 33 item 2)
    const bytes = new Uint8Array(read.body ?? new ArrayBuffer(0));
    const leaf = baseName(path);
    const type = IMAGE_TYPES[extension(leaf)];
    const text = !type && bytes.byteLength <= EDITOR_BYTES ? decodeText(bytes) : null;
    const paged =
      !type && text === null && bytes.byteLength > EDITOR_BYTES && textPage(bytes, 0) !== null;
    this.meta = el(
      "p",
      { class: "muted viewer-meta" },
      el("span", { id: "viewer-size" }, formatBytes(size)),
      " · sha256 ",
      el("code", { id: "viewer-sha256", class: "hash" }, sha256),
    );
    this.saveState = el("span", {
      class: "save-state",
      id: "save-state",
      role: "status",
      "aria-live": "polite",
    });
    // a .py file gets Run / Stop, its output and the console (issue 32: page/ui/python.mjs)
    const python = (this.python =
      text !== null && isPython(leaf)
        ? new PythonPanel({
            app: this.app,
            path,
            call: (op, args, o) => this.call(op, args, o),
            // Run reads the file as stored: unsaved edits are saved first, and the run's status
            // says so (issue 34); a refused save runs nothing (as Run with…, run_with.mjs)
            beforeRun: async () => {
              if (!this.editor || this.file !== path || this.editor.text() === this.saved)
                return "clean";
              // what this save stores is what runs; words typed while it is under way stay
              // unsaved in the editor (the fresh tester's tryout, stop 42: they made the run
              // say "could not be saved" with no message)
              const text = this.editor.text();
              await this.save();
              return this.file === path && this.saved === text ? "saved" : "refused";
            },
            onChanged: () => this.explorer.refresh(),
          })
        : null);
    const actions = el(
      "div",
      { class: "toolbar", role: "group", "aria-label": "Selected file actions" },
      text !== null
        ? [
            guard(
              this.app,
              "file.write",
              el(
                "button",
                {
                  type: "button",
                  class: "primary",
                  id: "save-file",
                  disabled: true,
                  "aria-keyshortcuts": "Control+S",
                  onclick: () => this.save(),
                },
                "Save",
              ),
            ),
            el(
              "button",
              { type: "button", id: "revert-file", disabled: true, onclick: () => this.revert() },
              "Discard changes",
            ),
            el(
              "button",
              {
                type: "button",
                id: "find-in-file",
                "aria-keyshortcuts": "Control+F",
                onclick: () => this.editor?.openSearch(),
              },
              "Find",
            ),
            python?.buttons,
            el(
              "button",
              {
                type: "button",
                id: "editor-settings",
                onclick: async () => {
                  const prefs = await editPrefs(this.app.host);
                  if (prefs) this.editor?.configure(editorOptions(prefs));
                },
              },
              "Editor settings",
            ),
            this.saveState,
          ]
        : null,
      el(
        "button",
        { type: "button", id: "download-file", onclick: () => this.download(path) },
        "Download",
      ),
      guard(
        this.app,
        "file.move",
        el(
          "button",
          { type: "button", id: "rename-file", onclick: () => this.rename(path) },
          "Rename or move",
        ),
      ),
      guard(
        this.app,
        "file.delete",
        el(
          "button",
          {
            type: "button",
            class: "danger",
            id: "delete-file",
            onclick: () => this.remove([{ path, kind: "file" }]),
          },
          "Delete",
        ),
      ),
    );
    let content;
    if (type) {
      const url = URL.createObjectURL(new Blob([bytes], { type }));
      this.objectUrls.push(url);
      content = el("img", { src: url, alt: `Image ${leaf}`, class: "preview" });
    } else if (text !== null) {
      content = [
        el("div", { class: "editor-host", id: "editor" }),
        el(
          "p",
          { class: "muted hint editor-hint", id: "editor-hint" },
          this.app.readOnly
            ? "Read-only while SAFE mode is on. "
            : "Ctrl+S saves, Ctrl+Z undoes, Ctrl+F finds and replaces. ",
          "Tab indents; to leave the editor with the keyboard, press Esc, then Tab.",
        ),
      ];
    } else if (paged) {
      content = this.pages(path, bytes);
    } else {
      content = el(
        "p",
        { class: "muted", id: "binary-note" },
        `Not a text file (${formatBytes(size)}): download it to open it.`,
      );
    }
    replace(
      this.viewer,
      el("h3", { id: "viewer-path-row", class: "one-line" }, name(path, { id: "viewer-path" })),
      this.meta,
      actions,
      content,
      python?.node,
    );
    python?.bindKeys(this.viewer.querySelector("#editor"));
    if (text !== null) await this.startEditor(path, text, seq, focusEditor);
  }

  /** Bring the open file's row into the tree's view, selected (Explorer.show), once every
   * folder on its way is open and listed that far; nothing if another file was opened
   * meanwhile or the file is gone. */
  async #showInTree(path, seq) {
    if (!(await this.explorer.reveal(path))) return;
    if (this.alive && seq === this.openSeq && this.file === path) this.explorer.show(path);
  }

  /** Run a .py file from its context menu (issue 32): open it (the open file's unsaved edits
   * are saved by Run itself), then press its Run. */
  async runFile(path) {
    if (this.file !== path) {
      if (!(await this.app.mayLeave())) return;
      await this.open(path);
    }
    if (this.file === path) await this.python?.run();
  }

  async startEditor(path, text, seq, focus) {
    const host = this.viewer.querySelector("#editor");
    let editor;
    try {
      editor = await mountEditor(host, {
        doc: text,
        name: path,
        label: `Contents of ${path}`,
        readOnly: this.app.readOnly,
        onSave: () => this.save(),
        onChange: () => this.#dirty(),
        ...editorOptions(await loadPrefs(this.app.host)),
      });
    } catch (err) {
      showProblem(`Opening ${path}`, `The editor could not load (${err?.message ?? err}).`);
      return;
    }
    if (seq !== this.openSeq || !this.alive) {
      editor.destroy();
      return;
    }
    this.editor = editor;
    this.saved = text;
    await keepPosition(editor, path, (args) => this.call("files.position", args)).restore(); // issue 33 item 6
    if (seq !== this.openSeq || !this.alive) return;
    host.dataset.language = editor.language || "text";
    // Unsaved edits are never dropped in silence: another file, surface or project, Back, or
    // leaving the page asks first (app.mayLeave, and beforeunload in app.mjs).
    this.app.leaving = {
      unsaved: () =>
        Boolean(this.editor && this.file === path && this.editor.text() !== this.saved),
      confirmLeave: async () => {
        const answer = await askUnsaved(path, { canSave: !blocked(this.app, "file.write") });
        if (answer !== "save") return answer === "discard";
        await this.save();
        return Boolean(this.editor) && this.file === path && this.editor.text() === this.saved;
      },
    };
    if (focus) editor.focus();
  }

  /** The open project was renamed (by any tab; issue 33 item 2): its heading follows. */
  renamed(project) {
    this.project = project;
    this.node
      .querySelector("#project-title")
      ?.replaceWith(name(project.name, { id: "project-title" }));
  }

  /** The editor's text when it has unsaved changes: {path, text}, else null. */
  unsavedText() {
    if (!this.editor || !this.file || this.editor.text() === this.saved) return null;
    return { path: this.file, text: this.editor.text() };
  }

  #dirty() {
    const changed = Boolean(this.editor) && this.editor.text() !== this.saved;
    const save = this.viewer.querySelector("#save-file");
    const revert = this.viewer.querySelector("#revert-file");
    if (save && !blocked(this.app, "file.write")) save.disabled = !changed;
    if (revert) revert.disabled = !changed;
    if (this.saveState) this.saveState.textContent = changed ? "Unsaved changes" : "";
    this.app.reportUnsaved?.(); // the host knows which tab holds unsaved text (issue 33)
  }

  /** Save the editor's text. It names the version the editor opened (`if_sha256`): a file
   * changed since — another tab's save — is refused `file-changed` and the person chooses
   * (askConflict): reload, overwrite (`overwrite`: a write naming no version) or save as. */
  async save({ overwrite = false } = {}) {
    if (!this.editor || !this.file) return;
    const reason = blocked(this.app, "file.write");
    if (reason) {
      this.say(reason, { lasting: true });
      return;
    }
    const path = this.file;
    const text = this.editor.text();
    const body = new TextEncoder().encode(text).buffer;
    this.saveState.textContent = "Saving…";
    const args = overwrite || !this.version ? { path } : { path, if_sha256: this.version };
    let conflict = null;
    this.saving = path; // its own file.changed event is not another tab's
    const saved = await acted(`Saving ${path}`, async () => {
      try {
        return await this.call("file.write", args, { body });
      } catch (err) {
        if (err.code !== "file-changed") throw err;
        conflict = err;
        return null;
      } finally {
        this.saving = null;
      }
    });
    if (conflict && this.file === path) {
      await this.#conflict(path, text, conflict);
      return;
    }
    if (!saved || this.file !== path) {
      this.#dirty();
      return;
    }
    this.version = saved.result.sha256;
    this.saved = text;
    replace(
      this.meta,
      el("span", { id: "viewer-size" }, formatBytes(saved.result.size)),
      " · sha256 ",
      el("code", { id: "viewer-sha256", class: "hash" }, saved.result.sha256),
    );
    this.#dirty();
    // words typed while the save was under way stay "Unsaved changes" (stop 42's tryout)
    if (this.editor?.text() === text)
      this.saveState.textContent = `Saved (${formatBytes(saved.result.size)}).`;
    this.say(`Saved ${path}.`);
    await this.explorer.refresh();
  }

  /** The person's choice after a refused save (never a silent loss). */
  async #conflict(path, text, err) {
    this.#dirty();
    const choice = await askConflict(path, err.message);
    if (!this.editor || this.file !== path) return;
    if (choice === "overwrite") await this.save({ overwrite: true });
    else if (choice === "reload") await this.reload(path);
    else if (choice === "saveas") {
      const target = await promptDialog({
        title: "Save as",
        label: "New file name (path in the project)",
        value: path,
        confirmLabel: "Save",
        id: "saveas-dialog",
      });
      if (!target) return;
      const done = await acted(`Saving ${target}`, () =>
        this.call(
          "file.write",
          { path: target, if_absent: true },
          { body: new TextEncoder().encode(text).buffer },
        ),
      );
      if (!done) return;
      this.app.leaving = null;
      await this.explorer.refresh();
      await this.open(done.result.path);
      this.say(`Saved your text as ${done.result.path}; ${path} keeps the other tab's version.`);
    }
  }

  /** Show `path` as it is stored now, keeping the editor (Undo brings the old text back). */
  async reload(path) {
    const read = await guarded(`Reading ${path}`, () => this.call("file.read", { path }));
    if (!read || !this.editor || this.file !== path) return;
    const text = decodeText(new Uint8Array(read.body ?? new ArrayBuffer(0)));
    if (text === null) {
      await this.open(path, { record: false });
      return;
    }
    this.version = read.result.sha256;
    this.saved = text;
    const view = this.editor.view;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    replace(
      this.meta,
      el("span", { id: "viewer-size" }, formatBytes(read.result.size)),
      " · sha256 ",
      el("code", { id: "viewer-sha256", class: "hash" }, read.result.sha256),
    );
    this.#dirty();
  }

  /** The host says `paths` of this project were created, removed or moved — by any tab, or a
   * Python run (`files.changed`, issue 33 item 2): the tree lists again, keeping what is
   * open, selected, focused and scrolled as far as those rows still exist. */
  async filesChanged(paths) {
    if (!this.alive || !this.explorer) return;
    const pane = this.explorer.element;
    const scroll = pane?.scrollTop;
    await this.explorer.refresh(); // one at a time, folded (explorer.mjs)
    if (!this.alive) return;
    if (scroll !== undefined && pane.isConnected) pane.scrollTop = scroll;
    const gone = this.file && !this.explorer.exists(this.file) && paths.includes(this.file);
    if (gone) this.say(`${this.file} was moved or deleted.`, { lasting: true });
  }

  /** The host says `path` was written (by any tab): a clean editor shows the new version at
   * once; one with unsaved text keeps it, and its next save meets the conflict's choice. A
   * file the tree does not show yet (written in another tab) makes the tree list again. */
  async changed(path, sha256) {
    if (this.explorer && !this.explorer.exists(path)) this.filesChanged([path]);
    if (!this.editor || this.file !== path || sha256 === this.version || this.saving === path)
      return;
    if (this.editor.text() !== this.saved) {
      this.say(`${path} was changed in another tab; your unsaved text is kept.`, { lasting: true });
      return;
    }
    await this.reload(path);
  }

  async revert() {
    if (!this.editor || this.editor.text() === this.saved) return;
    const path = this.file;
    const sure = await confirmDialog({
      title: "Discard your changes?",
      danger: true,
      confirmLabel: "Discard changes",
      id: "revert-dialog",
      text: `Your changes to ${path} go, and the editor shows the file as it is stored. Undo (Ctrl+Z) can bring them back.`,
    });
    if (!sure || !this.editor || this.file !== path) return;
    const view = this.editor.view;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: this.saved } });
    this.#dirty();
  }

  /** A text too long for one editor view: read-only pages of about 1 MB, and a download. */
  pages(path, bytes) {
    const count = Math.ceil(bytes.byteLength / PAGE_BYTES);
    let n = 0;
    const pre = el("pre", {
      class: "text-view",
      id: "text-pages",
      tabindex: "0",
      role: "region",
      "aria-label": `Page 1 of ${count} of ${path}`,
    });
    const where = el("span", { id: "page-number", role: "status" });
    const prev = el(
      "button",
      { type: "button", id: "page-prev", onclick: () => show(n - 1) },
      "Previous page",
    );
    const next = el(
      "button",
      { type: "button", id: "page-next", onclick: () => show(n + 1) },
      "Next page",
    );
    const show = (k) => {
      n = Math.max(0, Math.min(count - 1, k));
      const text = textPage(bytes, n);
      pre.textContent =
        text ?? "This part of the file is not UTF-8 text: download the file to open it.";
      pre.setAttribute("aria-label", `Page ${n + 1} of ${count} of ${path}`);
      where.textContent = `Page ${n + 1} of ${count}`;
      prev.disabled = n === 0;
      next.disabled = n === count - 1;
    };
    show(0);
    return [
      el(
        "p",
        { class: "muted" },
        `Longer than the editor opens (${formatBytes(EDITOR_BYTES)}): shown read-only, about ${formatBytes(PAGE_BYTES)} at a time. Download it to edit it elsewhere.`,
      ),
      el("div", { class: "toolbar" }, prev, where, next),
      pre,
    ];
  }
}
