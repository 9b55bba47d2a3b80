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

import { LIMITS } from "../contract.gen.mjs";
import { el, formatBytes, name } from "../dom.mjs";

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

/** Rows drawn beyond each edge of the tree's visible part (issue 34: the window). */
const OVERSCAN = 10;
/** A row's height (px) until one drawn row has been measured. */
const ROW_GUESS = 24;

export class Explorer {
  /**
   * `list(folder, offset, limit)` resolves one page of the host's listing of a folder from
   * `offset`, at most `limit` entries ({entries, total, next}: file.list), or null after showing
   * a refusal;
   * `on`: {open(path), menu(selected, x, y, opener), drop(folder, dataTransfer),
   * move(paths, folder), rename(path), remove(selected), status(text), selection(selected)}
   * — what the Files surface does for each act (`selected`: [{path, kind}]).
   *
   * Virtualized (issue 34): the tree is a flat list of the rows shown — every folder's entries
   * under it while it is open — of which only the rows in the scrolled-to part (and OVERSCAN
   * more each side, and the focused row) are in the DOM, each placed at its index; every row
   * says where it is (aria-level, aria-posinset, aria-setsize, aria-expanded), so a screen
   * reader hears the whole tree's shape although most rows are not drawn. A folder's first
   * listing asks only the rows the window can show (#firstPage): the tree models and draws
   * those, paints, and then takes the rest a page (LIMITS.listing_page) at a time — a
   * 10,000-entry folder is usable after the work of a 40-entry one.
   */
  constructor({ list, on, label = "Project files" }) {
    this.page = LIMITS.listing_page; // entries in each listing page after the first
    this.list = list;
    this.on = on;
    this.nodes = new Map(); // path -> {path, name, kind, size, children, loaded, expanded, empty}
    this.rows = []; // the rows shown, in order: [{node, level, pos, size}]
    this.index = new Map(); // path -> its index in rows
    this.drawn = new Map(); // path -> its <li> while drawn
    this.rowHeight = ROW_GUESS;
    this.measured = false;
    this.selection = new Set();
    this.anchor = null;
    this.focusPath = null;
    this.cut = [];
    this.dragging = null;
    this.target = "";
    this.active = null;
    this.busy = 0;
    this.tree = el("ul", {
      role: "tree",
      class: "tree",
      id: "file-tree",
      "aria-label": label,
      "aria-multiselectable": "true",
    });
    this.empty = el(
      "p",
      { class: "empty tree-empty", hidden: true },
      "No files yet — upload some, or drop files or folders here.",
    );
    this.dropNote = el("p", {
      class: "drop-note",
      id: "drop-note",
      role: "status",
      "aria-live": "polite",
    });
    // how many rows are selected, when more than one (stop 44's tryout: Ctrl+A selected every
    // row and nothing said how many; most of them are not even drawn). Above the pane (the
    // Files surface places it), its line kept from the first draw so nothing moves when it
    // speaks.
    this.countNote = el("p", {
      class: "tree-count muted",
      id: "tree-selection",
      role: "status",
      "aria-live": "polite",
    });
    this.element = el(
      "div",
      { class: "tree-pane", id: "tree-pane" },
      this.tree,
      this.empty,
      this.dropNote,
    );
    this.tree.addEventListener("click", (e) => this.#click(e));
    this.tree.addEventListener("keydown", (e) => this.#key(e));
    this.tree.addEventListener("contextmenu", (e) => this.#contextMenu(e));
    this.tree.addEventListener("dragstart", (e) => this.#dragStart(e));
    this.tree.addEventListener("dragend", () => {
      this.dragging = null;
      this.#clearDrop();
    });
    this.element.addEventListener("dragover", (e) => this.#dragOver(e));
    this.element.addEventListener("dragleave", (e) => {
      if (!this.element.contains(e.relatedTarget)) this.#clearDrop();
    });
    this.element.addEventListener("drop", (e) => this.#drop(e));
    this.element.addEventListener("contextmenu", (e) => {
      if (!e.target.closest("li[role=treeitem]")) this.#contextMenu(e);
    });
    this.element.addEventListener("scroll", () => this.#soon(), { passive: true });
    // shown again (after the filter hid it), or another height: other rows are in view
    this.resized = new ResizeObserver(() => this.#soon());
    this.resized.observe(this.element);
  }

  // ------------------------------------------------------------------ loading

  /** Load the root; resolves false when the host refused the listing. */
  async start() {
    this.nodes.set("", { path: "", kind: "dir", children: [], loaded: false, expanded: true });
    return this.#load("");
  }

  /** At most the rows the tree can show at once (issue 34): the whole window's height (the pane
   * is never taller; before the first rows it may be shorter than it will be) in rows, and
   * the overscan below them. */
  #firstPage() {
    const rows = Math.ceil(Math.max(window.innerHeight, 1) / this.rowHeight) + OVERSCAN;
    return Math.max(1, Math.min(this.page, rows));
  }

  /** List `folder` again: its first page is shown at once — on a first listing only the rows
   * the window can show (#firstPage), on a reload of a folder shown (a refresh, a folder that
   * changed while its pages came) LIMITS.listing_page entries — and the rest follow a page at
   * a time (`node.rest`, a promise; the tree is aria-busy meanwhile). Resolves false when the
   * host refused the first page. */
  async #load(folder, limit = this.#firstPage()) {
    const node = this.nodes.get(folder);
    const seq = (node.seq ?? 0) + 1;
    node.seq = seq;
    const first = await this.list(folder, 0, limit);
    if (!first || node.seq !== seq) return Boolean(first);
    for (const child of node.children) this.#forget(child);
    node.children = [];
    node.loaded = true;
    node.total = first.total;
    node.empty = first.total === 0;
    this.#add(node, first.entries);
    if (folder === "") this.empty.hidden = first.total > 0;
    this.#layout();
    node.rest =
      first.next === null || first.next === undefined ? null : this.#rest(node, first.next, seq);
    return true;
  }

  /** The pages of `node`'s folder from `offset` on (after the first is painted), each shown as
   * it comes; a folder that changed meanwhile (another total) is listed again from its start. */
  async #rest(node, offset, seq) {
    this.busy += 1;
    this.tree.setAttribute("aria-busy", "true");
    try {
      // the first page is painted before the next is asked: the tree is usable first
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      while (offset !== null && offset !== undefined) {
        if (this.gone) return;
        const page = await this.list(node.path, offset, this.page);
        if (!page || this.gone || node.seq !== seq || this.nodes.get(node.path) !== node) return;
        if (page.total !== node.total) {
          await this.#load(node.path, this.page);
          return;
        }
        this.#add(node, page.entries);
        this.#layout();
        offset = page.next;
      }
    } finally {
      this.busy -= 1;
      if (!this.busy) this.tree.removeAttribute("aria-busy");
    }
  }

  #add(node, entries) {
    for (const entry of entries) {
      const path = joinPath(node.path, entry.name);
      if (!this.nodes.has(path)) node.children.push(this.#node(path, entry));
    }
  }

  /** The surface is gone: no more listing pages are asked (a 10,000-entry folder's pages
   * would otherwise go on coming into a tree nobody sees, ahead of the next surface's calls). */
  destroy() {
    this.gone = true;
    this.resized.disconnect();
    if (this.pending) cancelAnimationFrame(this.pending);
  }

  /** Resolves when every folder shown has all its pages (End, a range, a reveal wait). */
  async complete() {
    for (;;) {
      const pending = [...this.nodes.values()].map((n) => n.rest).filter(Boolean);
      if (!pending.length) return;
      await Promise.all(pending);
      for (const n of this.nodes.values()) if (pending.includes(n.rest)) n.rest = null;
    }
  }

  #forget(path) {
    const node = this.nodes.get(path);
    if (!node) return;
    for (const child of node.children ?? []) this.#forget(child);
    this.nodes.delete(path);
  }

  #node(path, entry) {
    this.nodes.set(path, {
      path,
      name: entry.name,
      kind: entry.kind,
      size: entry.size ?? null,
      children: [],
      loaded: false,
      expanded: false,
    });
    return path;
  }

  /** The rows shown, again (after a folder was loaded, opened or closed), then drawn. */
  #layout() {
    const rows = [];
    const walk = (folder, level) => {
      const { children, total } = this.nodes.get(folder);
      const size = Math.max(total ?? 0, children.length); // its pages still coming count too
      for (let i = 0; i < children.length; i += 1) {
        const node = this.nodes.get(children[i]);
        rows.push({ node, level, pos: i + 1, size });
        if (node.kind === "dir" && node.expanded) walk(node.path, level + 1);
      }
    };
    walk("", 1);
    this.rows = rows;
    this.index = new Map(rows.map((row, i) => [row.node.path, i]));
    this.tree.style.height = `${rows.length * this.rowHeight}px`;
    this.#paint();
  }

  /** Open folder `path` (loading it the first time); resolves false if it could not be listed. */
  async expand(path) {
    const node = this.nodes.get(path);
    if (!node || node.kind !== "dir") return false;
    if (!node.loaded && !(await this.#load(path))) return false;
    if (path === "") return true;
    node.expanded = true;
    this.#layout();
    this.on.expanded?.();
    return true;
  }

  collapse(path) {
    const node = this.nodes.get(path);
    if (!node || node.kind !== "dir" || path === "") return;
    node.expanded = false;
    this.#layout();
    if (this.focusPath && this.focusPath.startsWith(`${path}/`)) this.#focus(path);
    this.on.expanded?.();
  }

  /** Open every folder on the way to `path` (a file or folder); resolves whether it exists. */
  async reveal(path) {
    if (!path) return true;
    const parts = path.split("/");
    for (let i = 0; i < parts.length; i += 1) {
      if (this.index.has(path)) return true; // shown already: no folder to open, no page to wait
      const folder = parts.slice(0, i).join("/");
      const node = this.nodes.get(folder);
      // a folder already open is not opened again (each open lays out every row and tells
      // the host the layout: a file opened from quick open would cost one per folder)
      if (!(node?.loaded && (node.expanded || folder === "")) && !(await this.expand(folder)))
        return false;
      await this.nodes.get(folder)?.rest; // its every page: `path` may be far down
    }
    return this.nodes.has(path);
  }

  /** Scroll the tree so that the row of `path` (shown) is in view, nearest edge; `home`: and
   * back to the left edge, where every name starts (a long name read sideways leaves the pane
   * scrolled right, hiding the short names after it). */
  scrollTo(path, { home = false } = {}) {
    const i = this.index.get(path);
    if (i === undefined) return;
    this.#draw({ keep: path });
    this.drawn.get(path)?.scrollIntoView({ block: "nearest" });
    if (home) this.element.scrollLeft = 0;
    this.#draw();
  }

  /** Show `path` (a row shown: after reveal) as the place a person is: scrolled into view
   * (the tree is virtual, so a row far down is not drawn until the list is scrolled to it),
   * the Tab stop, and selected — alone, unless it is already part of the selection (a move of
   * many that reopens the open file keeps the many selected). For a file opened from outside
   * the tree: quick open, a search hit, a new file, a link (stop 44's tryout: the tree stayed
   * where it was, the open file nowhere in it). */
  show(path) {
    if (!this.index.has(path)) return;
    if (!this.selection.has(path)) {
      this.selection = new Set([path]);
      this.anchor = path;
    }
    const moved = path !== this.focusPath;
    this.focusPath = path;
    // the pane alone scrolls (scrollIntoView would scroll the window too: on a narrow screen,
    // where the tree is above the viewer, away from the file just opened)
    const pane = this.element;
    const top =
      this.tree.getBoundingClientRect().top -
      pane.getBoundingClientRect().top +
      pane.scrollTop +
      this.index.get(path) * this.rowHeight;
    // a row out of view goes to the pane's middle: at its edge it could be below the
    // window's fold, the pane being taller than the part of it on screen
    if (top < pane.scrollTop || top + this.rowHeight > pane.scrollTop + pane.clientHeight)
      pane.scrollTop = top - (pane.clientHeight - this.rowHeight) / 2;
    if (moved) pane.scrollLeft = 0;
    this.#paint(); // draws the rows now in view
  }

  /** Which folders are open (the host remembers them per project: `files.layout`). */
  expandedFolders() {
    return [...this.nodes.values()]
      .filter((n) => n.expanded && n.path)
      .map((n) => n.path)
      .sort();
  }

  /** Reload every folder shown, keeping what was open, selected and focused where it still is.
   * One at a time: a refresh asked for while one runs (this tab's own act and another tab's
   * `files.changed`, issue 33 item 2) is folded into one more after it, and every caller's
   * promise settles when that one is done — two at once would read each other's half-loaded
   * folders as closed. */
  refresh() {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          await this.#refreshOnce();
        } while (this.refreshAgain);
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  async #refreshOnce() {
    const open = this.expandedFolders();
    const selection = [...this.selection];
    const focus = this.focusPath;
    this.nodes.get("").loaded = false;
    if (!(await this.#load("", this.page))) return;
    await this.nodes.get("")?.rest;
    for (const path of open.sort((a, b) => a.split("/").length - b.split("/").length)) {
      if (this.nodes.has(path)) {
        await this.expand(path);
        await this.nodes.get(path)?.rest;
      }
    }
    this.selection = new Set(selection.filter((p) => this.nodes.has(p)));
    this.#paint();
    if (focus && this.nodes.has(focus) && this.tree.contains(document.activeElement))
      this.#focus(focus);
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
    if (!this.selection.size) return [];
    return this.rows
      .filter((row) => this.selection.has(row.node.path))
      .map((row) => ({ path: row.node.path, kind: row.node.kind }));
  }

  select(paths) {
    this.selection = new Set(paths.filter((p) => this.nodes.has(p)));
    this.#paint();
  }

  /** The one Tab stop: the focused row while it is shown, else the first row. */
  #tabStop() {
    return this.focusPath && this.index.has(this.focusPath)
      ? this.focusPath
      : (this.rows[0]?.node.path ?? null);
  }

  #paint() {
    this.#draw();
    this.tree.classList.toggle("root-target", this.target === "");
    const selected = this.selected();
    const count = selected.length > 1 ? `${selected.length.toLocaleString("en")} selected` : "";
    if (this.countNote.textContent !== count) this.countNote.textContent = count;
    this.on.selection?.(selected);
  }

  /** Draw the rows in view (and OVERSCAN more each side), the Tab stop and `keep`; drop the
   * others from the DOM. The drawn rows stay in order, and one that stays is never moved.
   * The tree's first draw leaves the overscan out and draws it once the page is idle (at most
   * 0.5 s later): what a person sees first is only the rows in view (issue 34). */
  #draw({ keep = null } = {}) {
    let margin = OVERSCAN;
    if (!this.painted && this.rows.length) {
      this.painted = true;
      margin = 0;
      // when the page is idle (a scroll before that draws its own rows at once): the rows past
      // the pane's edge are for a scroll to come, no part of what a person sees first
      requestIdleCallback(() => this.gone || this.#draw(), { timeout: 500 });
    }
    const hadFocus = this.tree.contains(document.activeElement);
    const pane = this.element;
    const height = this.rowHeight;
    let first = 0;
    let end = 2 * margin;
    if (pane.clientHeight > 0) {
      const top =
        this.tree.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
      const inView = Math.floor((pane.scrollTop - top) / height); // the first row in view
      first = Math.max(0, inView - margin);
      end = Math.max(0, inView) + Math.ceil(pane.clientHeight / height) + margin;
    }
    const wanted = new Set();
    for (let i = first; i < Math.min(this.rows.length, end); i += 1) wanted.add(i);
    const tabStop = this.#tabStop();
    for (const path of [tabStop, keep])
      if (path !== null && this.index.has(path)) wanted.add(this.index.get(path));
    const order = [...wanted].sort((a, b) => a - b);
    const keepPaths = new Set(order.map((i) => this.rows[i].node.path));
    for (const [path, li] of this.drawn) {
      if (!keepPaths.has(path) || li.vbNode !== this.rows[this.index.get(path)].node) {
        li.remove();
        this.drawn.delete(path);
      }
    }
    let cursor = this.tree.firstElementChild;
    for (const i of order) {
      const row = this.rows[i];
      let li = this.drawn.get(row.node.path);
      if (!li) {
        li = this.#item(row.node);
        this.drawn.set(row.node.path, li);
      }
      this.#update(li, row, i, tabStop);
      if (li === cursor) cursor = cursor.nextElementSibling;
      else this.tree.insertBefore(li, cursor);
    }
    if (!this.measured && this.drawn.size) {
      const measured = this.drawn.values().next().value.offsetHeight;
      if (measured > 0) {
        this.measured = true;
        if (measured !== height) {
          this.rowHeight = measured;
          this.tree.style.height = `${this.rows.length * measured}px`;
          this.#draw({ keep });
          return;
        }
      }
    }
    if (hadFocus && !this.tree.contains(document.activeElement))
      this.drawn.get(tabStop)?.focus({ preventScroll: true });
  }

  /** Draw again on the next frame (after a scroll or a resize). */
  #soon() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.#draw();
    });
  }

  #item(node) {
    const dir = node.kind === "dir";
    const icon = el("span", { class: "tree-icon", "aria-hidden": "true" }, dir ? "▸" : "");
    const note = dir ? el("span", { class: "tree-note muted" }, "") : null;
    const badge = el("span", { class: "tree-badge", "aria-hidden": "true" });
    const li = el(
      "li",
      {
        role: "treeitem",
        class: `tree-item ${dir ? "tree-dir" : "tree-file"}`,
        "data-path": node.path,
        "data-kind": node.kind,
        "aria-selected": "false",
        tabindex: "-1",
        draggable: "true",
      },
      el(
        "div",
        { class: "tree-row" },
        icon,
        name(node.name, {
          class: `literal name ${dir ? "dir-entry" : "file-entry"}`,
          "data-path": node.path,
        }),
        dir ? el("span", { class: "tree-slash", "aria-hidden": "true" }, "/") : null,
        note ?? el("span", { class: "size muted" }, formatBytes(node.size)),
        badge,
      ),
    );
    li.vbNode = node;
    li.vbParts = { icon, note, badge }; // what #update sets on every draw, without a lookup
    return li;
  }

  /** Set what row `i` says and where it stands. */
  #update(li, row, i, tabStop) {
    const node = row.node;
    const dir = node.kind === "dir";
    const set = (attr, value) => {
      if (li.getAttribute(attr) !== value) li.setAttribute(attr, value);
    };
    li.style.top = `${i * this.rowHeight}px`;
    li.style.setProperty("--level", String(row.level));
    set("aria-level", String(row.level));
    set("aria-posinset", String(row.pos));
    set("aria-setsize", String(row.size));
    set("aria-selected", String(this.selection.has(node.path)));
    li.tabIndex = node.path === tabStop ? 0 : -1;
    li.classList.toggle("is-cut", this.cut.includes(node.path));
    li.classList.toggle("is-target", dir && node.path === this.target);
    const { icon, note, badge } = li.vbParts;
    const text = (part, value) => {
      if (part.textContent !== value) part.textContent = value;
    };
    text(badge, dir && node.path === this.target ? "upload target" : "");
    if (dir) {
      set("aria-expanded", String(node.expanded));
      li.classList.toggle("is-empty", Boolean(node.loaded && node.empty));
      text(icon, node.expanded ? "▾" : "▸");
      text(note, node.loaded && node.empty ? "empty" : "");
    }
    if (node.path === this.active) set("aria-current", "true");
    else li.removeAttribute("aria-current");
  }

  #focus(path) {
    if (!this.index.has(path)) return;
    const moved = path !== this.focusPath; // another row: the pane goes back to x = 0
    this.focusPath = path;
    this.#paint();
    this.scrollTo(path, { home: moved });
    this.drawn.get(path)?.focus({ preventScroll: true });
  }

  focusFirst() {
    const first = this.rows[0];
    if (first) this.#focus(first.node.path);
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
    const order = this.rows.map((row) => row.node.path);
    const a = order.indexOf(this.anchor);
    const b = order.indexOf(path);
    if (a === -1 || b === -1) {
      this.selection = new Set([path]);
      return;
    }
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
    const i = this.index.get(path) ?? -1;
    const mod = event.ctrlKey || event.metaKey;
    const shift = event.shiftKey;
    const go = (to) => {
      const next = this.rows[Math.max(0, Math.min(this.rows.length - 1, to))]?.node.path;
      if (!next) return;
      if (shift) {
        this.anchor ??= path;
        this.#range(next);
      } else if (!mod) {
        this.selection = new Set([next]);
        this.anchor = next;
      }
      this.#focus(next);
    };
    let handled = true;
    switch (event.key) {
      case "ArrowDown":
        go(i + 1);
        break;
      case "ArrowUp":
        go(i - 1);
        break;
      case "Home":
        go(0);
        break;
      case "End": // the last row once every page of the folders shown is in (issue 34)
        if (this.busy) this.complete().then(() => go(this.rows.length - 1));
        else go(this.rows.length - 1);
        break;
      case "ArrowRight":
        if (node.kind === "dir" && !node.expanded) this.expand(path);
        else if (node.kind === "dir" && node.children.length) go(i + 1);
        break;
      case "ArrowLeft":
        if (node.kind === "dir" && node.expanded) this.collapse(path);
        else if (parentOf(path)) go(this.index.get(parentOf(path)));
        break;
      case "Enter":
        this.#act(path);
        break;
      case " ":
        if (this.selection.has(path)) this.selection.delete(path);
        else this.selection.add(path);
        this.anchor = path;
        this.#paint();
        break;
      case "F2":
        this.on.rename(path);
        break;
      case "Delete":
        this.on.remove(this.selected().length ? this.selected() : [{ path, kind: node.kind }]);
        break;
      case "ContextMenu":
        this.#menuAt(li);
        break;
      case "Escape":
        if (!this.cut.length) {
          handled = false;
          break;
        }
        this.cut = [];
        this.on.status("Move cancelled.");
        this.#paint();
        break;
      default:
        handled = false;
    }
    if (!handled && event.key === "F10" && event.shiftKey) {
      this.#menuAt(li);
      handled = true;
    }
    if (!handled && mod && event.key.toLowerCase() === "a") {
      // every row of the folders shown, once their every page is in (issue 34: the first
      // page is only the rows in view)
      const all = () => {
        this.selection = new Set(this.rows.map((row) => row.node.path));
        this.#paint();
      };
      if (this.busy) this.complete().then(all);
      else all();
      handled = true;
    }
    if (!handled && mod && event.key.toLowerCase() === "x") {
      this.cut = (this.selected().length ? this.selected() : [{ path, kind: node.kind }]).map(
        (s) => s.path,
      );
      this.on.status(
        `${this.cut.length} item${this.cut.length === 1 ? "" : "s"} to move: go to a folder and press Ctrl+V (Escape cancels).`,
      );
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
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  }

  #menuAt(li) {
    if (!this.selection.has(li.dataset.path)) {
      this.selection = new Set([li.dataset.path]);
      this.#paint();
    }
    const box = li.querySelector(".tree-row").getBoundingClientRect();
    this.on.menu(this.selected(), box.left + 24, box.bottom, li);
  }

  // ------------------------------------------------------------------ drag and drop

  #dragStart(event) {
    const li = event.target.closest("li[role=treeitem]");
    if (!li) return;
    if (!this.selection.has(li.dataset.path)) {
      this.selection = new Set([li.dataset.path]);
      this.#paint();
    }
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
    this.#markDrop(
      folder,
      internal
        ? `Drop to move ${this.dragging.length} item${this.dragging.length === 1 ? "" : "s"} into ${folderLabel(folder)}`
        : `Drop to upload into ${folderLabel(folder)}`,
    );
  }

  #markDrop(folder, text) {
    for (const x of this.element.querySelectorAll(".drop-target"))
      x.classList.remove("drop-target");
    const li = folder ? this.drawn.get(folder) : null;
    (li ?? this.element).classList.add("drop-target");
    if (this.dropNote.textContent !== text) this.dropNote.textContent = text;
  }

  #clearDrop() {
    for (const x of this.element.querySelectorAll(".drop-target"))
      x.classList.remove("drop-target");
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
