// The file tree of the Files surface (docs/ui.md, "The file explorer"): an ARIA tree that loads
// each folder when it is first opened (never the whole project), with multi-select, keyboard
// navigation, a context menu, drag to move and drop to upload. Presentation only: every act is
// handed to the Files surface (page/ui/files.mjs), which makes the host calls.
//
// Mouse: a click selects (a file also opens, a folder also opens or closes); Ctrl/⌘+click adds
// or removes one; Shift+click selects a range; right click opens the menu; drag selected files
// onto a folder to move them; drop files or folders from the desktop onto a folder (or the
// tree's empty space, for the project root) to upload them there.
// Keyboard (one Tab stop; the arrows move): ↑/↓ move and select, Shift+↑/↓ extend, Ctrl+↑/↓
// move without selecting, Space toggles, Ctrl+A selects all shown, →/← open/close a folder or
// go to its first child/its parent, Home/End, Enter opens, F2 renames (a folder too), Delete
// deletes (into the trash), Ctrl+X then Ctrl+V moves files and folders (the keyboard's drag),
// Shift+F10 or the Menu key opens the menu.

import { el, formatBytes, name, replace } from "../dom.mjs";

const INTERNAL = "application/x-voicebox-paths";

export function joinPath(folder, leaf) {
  return folder ? `${folder}/${leaf}` : leaf;
}

export function parentOf(path) {
  const i = path.lastIndexOf("/");
  return i === -1 ? "" : path.slice(0, i);
}

export function baseName(path) {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** `/src/` for "src", `/` for the root: how a folder is written for a person. */
export function folderLabel(folder) {
  return folder ? `/${folder}/` : "/";
}

export class Explorer {
  /**
   * `list(folder)` resolves the host's entries of a folder (or null after showing a refusal);
   * `on`: {open(path), menu(selected, x, y, opener), drop(folder, dataTransfer),
   * move(paths, folder), rename(path), remove(selected), status(text), selection(selected)}
   * — what the Files surface does for each act (`selected`: [{path, kind}]).
   */
  constructor({ list, on, label = "Project files" }) {
    this.list = list;
    this.on = on;
    this.nodes = new Map(); // path -> {path, name, kind, size, li, group, loaded, expanded, empty}
    this.selection = new Set();
    this.anchor = null;
    this.focusPath = null;
    this.cut = [];
    this.dragging = null;
    this.target = "";
    this.active = null;
    this.tree = el("ul", { role: "tree", class: "tree", id: "file-tree", "aria-label": label, "aria-multiselectable": "true" });
    this.empty = el("p", { class: "empty tree-empty", hidden: true }, "No files yet — upload some, or drop files or folders here.");
    this.dropNote = el("p", { class: "drop-note", id: "drop-note", role: "status", "aria-live": "polite" });
    this.element = el("div", { class: "tree-pane", id: "tree-pane" }, this.tree, this.empty, this.dropNote);
    this.tree.addEventListener("click", (e) => this.#click(e));
    this.tree.addEventListener("keydown", (e) => this.#key(e));
    this.tree.addEventListener("contextmenu", (e) => this.#contextMenu(e));
    this.tree.addEventListener("dragstart", (e) => this.#dragStart(e));
    this.tree.addEventListener("dragend", () => { this.dragging = null; this.#clearDrop(); });
    this.element.addEventListener("dragover", (e) => this.#dragOver(e));
    this.element.addEventListener("dragleave", (e) => { if (!this.element.contains(e.relatedTarget)) this.#clearDrop(); });
    this.element.addEventListener("drop", (e) => this.#drop(e));
    this.element.addEventListener("contextmenu", (e) => { if (!e.target.closest("li[role=treeitem]")) this.#contextMenu(e); });
  }

  // ------------------------------------------------------------------ loading

  /** Load the root; resolves false when the host refused the listing. */
  async start() {
    this.nodes.set("", { path: "", kind: "dir", group: this.tree, loaded: false, expanded: true });
    return this.#load("");
  }

  async #load(folder) {
    const node = this.nodes.get(folder);
    const entries = await this.list(folder);
    if (!entries) return false;
    for (const key of [...this.nodes.keys()]) if (key !== folder && parentOf(key) === folder && key !== "") this.#forget(key);
    const depth = folder ? folder.split("/").length + 1 : 1;
    const items = entries.map((entry) => this.#item(joinPath(folder, entry.name), entry, depth));
    replace(node.group, items);
    node.loaded = true;
    node.empty = entries.length === 0;
    if (folder === "") this.empty.hidden = entries.length > 0;
    else node.li.classList.toggle("is-empty", node.empty);
    this.#paint();
    return true;
  }

  #forget(path) {
    for (const key of [...this.nodes.keys()]) if (key === path || key.startsWith(`${path}/`)) this.nodes.delete(key);
  }

  #item(path, entry, depth) {
    const dir = entry.kind === "dir";
    const group = dir ? el("ul", { role: "group", hidden: true }) : null;
    const li = el("li", {
      role: "treeitem", class: `tree-item ${dir ? "tree-dir" : "tree-file"}`, "data-path": path, "data-kind": entry.kind,
      "aria-level": String(depth), "aria-selected": "false", "aria-expanded": dir ? "false" : null, tabindex: "-1", draggable: "true",
    },
    el("div", { class: "tree-row" },
      el("span", { class: "tree-icon", "aria-hidden": "true" }, dir ? "▸" : ""),
      name(entry.name, { class: `literal name ${dir ? "dir-entry" : "file-entry"}`, "data-path": path }),
      dir ? el("span", { class: "tree-slash", "aria-hidden": "true" }, "/") : null,
      dir ? el("span", { class: "tree-note muted" }, "") : el("span", { class: "size muted" }, formatBytes(entry.size)),
      el("span", { class: "tree-badge", "aria-hidden": "true" })),
    group);
    this.nodes.set(path, { path, name: entry.name, kind: entry.kind, size: entry.size ?? null, li, group, loaded: false, expanded: false });
    return li;
  }

  /** Open folder `path` (loading it the first time); resolves false if it could not be listed. */
  async expand(path) {
    const node = this.nodes.get(path);
    if (!node || node.kind !== "dir") return false;
    if (!node.loaded && !(await this.#load(path))) return false;
    if (path === "") return true;
    node.expanded = true;
    node.group.hidden = false;
    node.li.setAttribute("aria-expanded", "true");
    node.li.querySelector(":scope > .tree-row .tree-icon").textContent = "▾";
    this.on.expanded?.();
    return true;
  }

  collapse(path) {
    const node = this.nodes.get(path);
    if (!node || node.kind !== "dir" || path === "") return;
    node.expanded = false;
    node.group.hidden = true;
    node.li.setAttribute("aria-expanded", "false");
    node.li.querySelector(":scope > .tree-row .tree-icon").textContent = "▸";
    if (this.focusPath && this.focusPath.startsWith(`${path}/`)) this.#focus(path);
    this.on.expanded?.();
  }

  /** Open every folder on the way to `path` (a file or folder); resolves whether it exists. */
  async reveal(path) {
    if (!path) return true;
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i += 1) {
      if (!(await this.expand(parts.slice(0, i).join("/")))) return false;
    }
    return this.nodes.has(path);
  }

  /** Which folders are open (the host remembers them per project: `files.layout`). */
  expandedFolders() {
    return [...this.nodes.values()].filter((n) => n.expanded && n.path).map((n) => n.path).sort();
  }

  /** Reload every folder shown, keeping what was open, selected and focused where it still is. */
  async refresh() {
    const open = this.expandedFolders();
    const selection = [...this.selection];
    const focus = this.focusPath;
    this.nodes.get("").loaded = false;
    if (!(await this.#load(""))) return;
    for (const path of open.sort((a, b) => a.split("/").length - b.split("/").length)) {
      if (this.nodes.has(path)) await this.expand(path);
    }
    this.selection = new Set(selection.filter((p) => this.nodes.has(p)));
    this.#paint();
    if (focus && this.nodes.has(focus) && this.tree.contains(document.activeElement)) this.#focus(focus);
  }

  // ------------------------------------------------------------------ state shown

  /** The folder uploads go to (shown with a badge). */
  setTarget(folder) {
    this.target = folder;
    this.#paint();
  }

  /** The file open in the viewer (aria-current). */
  setActive(path) {
    this.active = path;
    this.#paint();
  }

  kind(path) {
    return this.nodes.get(path)?.kind ?? null;
  }

  exists(path) {
    return this.nodes.has(path);
  }

  /** The selected entries, in the order shown: [{path, kind}]. */
  selected() {
    return this.#visible().map((li) => li.dataset.path).filter((p) => this.selection.has(p))
      .map((path) => ({ path, kind: this.kind(path) }));
  }

  select(paths) {
    this.selection = new Set(paths.filter((p) => this.nodes.has(p)));
    this.#paint();
  }

  #paint() {
    let tabStop = this.focusPath && this.nodes.has(this.focusPath) ? this.focusPath : null;
    const visible = this.#visible();
    if (!tabStop || !visible.some((li) => li.dataset.path === tabStop)) tabStop = visible[0]?.dataset.path ?? null;
    for (const node of this.nodes.values()) {
      if (!node.li) continue;
      const li = node.li;
      li.setAttribute("aria-selected", String(this.selection.has(node.path)));
      li.tabIndex = node.path === tabStop ? 0 : -1;
      li.classList.toggle("is-cut", this.cut.includes(node.path));
      li.classList.toggle("is-target", node.kind === "dir" && node.path === this.target);
      const badge = li.querySelector(":scope > .tree-row .tree-badge");
      badge.textContent = node.kind === "dir" && node.path === this.target ? "upload target" : "";
      if (node.kind === "dir") li.querySelector(":scope > .tree-row .tree-note").textContent = node.loaded && node.empty ? "empty" : "";
      if (node.path === this.active) li.setAttribute("aria-current", "true");
      else li.removeAttribute("aria-current");
    }
    this.tree.classList.toggle("root-target", this.target === "");
    this.on.selection?.(this.selected());
  }

  #visible() {
    return [...this.tree.querySelectorAll("li[role=treeitem]")].filter((li) => !li.parentElement.closest("ul[role=group][hidden]"));
  }

  #focus(path) {
    const node = this.nodes.get(path);
    if (!node?.li) return;
    this.focusPath = path;
    this.#paint();
    node.li.focus();
    node.li.scrollIntoView({ block: "nearest" });
  }

  focusFirst() {
    const first = this.#visible()[0];
    if (first) this.#focus(first.dataset.path);
  }

  // ------------------------------------------------------------------ pointer

  #click(event) {
    const li = event.target.closest("li[role=treeitem]");
    if (!li) return;
    const path = li.dataset.path;
    if (event.shiftKey && this.anchor) this.#range(path);
    else if (event.ctrlKey || event.metaKey) {
      if (this.selection.has(path)) this.selection.delete(path);
      else this.selection.add(path);
      this.anchor = path;
    } else {
      this.selection = new Set([path]);
      this.anchor = path;
      this.#act(path);
    }
    this.#focus(path);
  }

  #range(path) {
    const order = this.#visible().map((li) => li.dataset.path);
    const a = order.indexOf(this.anchor);
    const b = order.indexOf(path);
    if (a === -1 || b === -1) { this.selection = new Set([path]); return; }
    this.selection = new Set(order.slice(Math.min(a, b), Math.max(a, b) + 1));
  }

  /** Enter / a plain click: a file opens, a folder opens or closes. */
  #act(path) {
    const node = this.nodes.get(path);
    if (node.kind === "dir") {
      if (node.expanded) this.collapse(path);
      else this.expand(path);
    } else this.on.open(path);
  }

  #contextMenu(event) {
    event.preventDefault();
    const li = event.target.closest("li[role=treeitem]");
    if (li && !this.selection.has(li.dataset.path)) {
      this.selection = new Set([li.dataset.path]);
      this.anchor = li.dataset.path;
    }
    if (!li) this.selection.clear();
    if (li) this.#focus(li.dataset.path);
    this.#paint();
    this.on.menu(this.selected(), event.clientX, event.clientY, li ?? this.tree);
  }

  // ------------------------------------------------------------------ keyboard

  #key(event) {
    const li = event.target.closest("li[role=treeitem]");
    if (!li) return;
    const path = li.dataset.path;
    const node = this.nodes.get(path);
    const order = this.#visible().map((x) => x.dataset.path);
    const i = order.indexOf(path);
    const mod = event.ctrlKey || event.metaKey;
    const go = (to) => {
      const next = order[Math.max(0, Math.min(order.length - 1, to))];
      if (!next) return;
      if (event.shiftKey) { this.anchor ??= path; this.#range(next); }
      else if (!mod) { this.selection = new Set([next]); this.anchor = next; }
      this.#focus(next);
    };
    let handled = true;
    switch (event.key) {
      case "ArrowDown": go(i + 1); break;
      case "ArrowUp": go(i - 1); break;
      case "Home": go(0); break;
      case "End": go(order.length - 1); break;
      case "ArrowRight":
        if (node.kind === "dir" && !node.expanded) this.expand(path);
        else if (node.kind === "dir" && node.group.firstElementChild) go(i + 1);
        break;
      case "ArrowLeft":
        if (node.kind === "dir" && node.expanded) this.collapse(path);
        else if (parentOf(path)) go(order.indexOf(parentOf(path)));
        break;
      case "Enter": this.#act(path); break;
      case " ":
        if (this.selection.has(path)) this.selection.delete(path);
        else this.selection.add(path);
        this.anchor = path;
        this.#paint();
        break;
      case "F2": this.on.rename(path); break;
      case "Delete": this.on.remove(this.selected().length ? this.selected() : [{ path, kind: node.kind }]); break;
      case "ContextMenu": this.#menuAt(li); break;
      case "Escape":
        if (!this.cut.length) { handled = false; break; }
        this.cut = [];
        this.on.status("Move cancelled.");
        this.#paint();
        break;
      default:
        handled = false;
    }
    if (!handled && event.key === "F10" && event.shiftKey) { this.#menuAt(li); handled = true; }
    if (!handled && mod && event.key.toLowerCase() === "a") {
      this.selection = new Set(order);
      this.#paint();
      handled = true;
    }
    if (!handled && mod && event.key.toLowerCase() === "x") {
      this.cut = (this.selected().length ? this.selected() : [{ path, kind: node.kind }]).map((s) => s.path);
      this.on.status(`${this.cut.length} item${this.cut.length === 1 ? "" : "s"} to move: go to a folder and press Ctrl+V (Escape cancels).`);
      this.#paint();
      handled = true;
    }
    if (!handled && mod && event.key.toLowerCase() === "v" && this.cut.length) {
      const into = node.kind === "dir" ? path : parentOf(path);
      const paths = this.cut;
      this.cut = [];
      this.#paint();
      this.on.move(paths, into);
      handled = true;
    }
    if (handled) { event.preventDefault(); event.stopPropagation(); }
  }

  #menuAt(li) {
    if (!this.selection.has(li.dataset.path)) { this.selection = new Set([li.dataset.path]); this.#paint(); }
    const box = li.querySelector(".tree-row").getBoundingClientRect();
    this.on.menu(this.selected(), box.left + 24, box.bottom, li);
  }

  // ------------------------------------------------------------------ drag and drop

  #dragStart(event) {
    const li = event.target.closest("li[role=treeitem]");
    if (!li) return;
    if (!this.selection.has(li.dataset.path)) { this.selection = new Set([li.dataset.path]); this.#paint(); }
    const paths = this.selected().map((s) => s.path);
    this.dragging = paths;
    event.dataTransfer.setData(INTERNAL, JSON.stringify(paths));
    event.dataTransfer.setData("text/plain", paths.join("\n"));
    event.dataTransfer.effectAllowed = "move";
  }

  /** The folder a drop at `event` goes to: a folder row, a file's folder, or the root. */
  #dropFolder(event) {
    const li = event.target.closest?.("li[role=treeitem]");
    if (!li) return "";
    return li.dataset.kind === "dir" ? li.dataset.path : parentOf(li.dataset.path);
  }

  #dragOver(event) {
    const types = [...(event.dataTransfer?.types ?? [])];
    const internal = this.dragging && types.includes(INTERNAL);
    if (!internal && !types.includes("Files")) return;
    event.preventDefault();
    const folder = this.#dropFolder(event);
    event.dataTransfer.dropEffect = internal ? "move" : "copy";
    this.#markDrop(folder, internal
      ? `Drop to move ${this.dragging.length} item${this.dragging.length === 1 ? "" : "s"} into ${folderLabel(folder)}`
      : `Drop to upload into ${folderLabel(folder)}`);
  }

  #markDrop(folder, text) {
    for (const x of this.element.querySelectorAll(".drop-target")) x.classList.remove("drop-target");
    const node = this.nodes.get(folder);
    (folder && node?.li ? node.li : this.element).classList.add("drop-target");
    if (this.dropNote.textContent !== text) this.dropNote.textContent = text;
  }

  #clearDrop() {
    for (const x of this.element.querySelectorAll(".drop-target")) x.classList.remove("drop-target");
    this.element.classList.remove("drop-target");
    this.dropNote.textContent = "";
  }

  #drop(event) {
    const types = [...(event.dataTransfer?.types ?? [])];
    const internal = this.dragging && types.includes(INTERNAL);
    if (!internal && !types.includes("Files")) return;
    event.preventDefault();
    const folder = this.#dropFolder(event);
    this.#clearDrop();
    if (internal) {
      const paths = this.dragging;
      this.dragging = null;
      this.on.move(paths, folder);
    } else {
      this.on.drop(folder, event.dataTransfer);
    }
  }
}
