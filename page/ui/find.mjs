// Finding things on the Files surface (issue 33 item 1; docs/search.md, docs/ui.md "Keyboard
// shortcuts"): search in files (Ctrl/⌘+Shift+F), quick open (Ctrl/⌘+P) and the tree's filter
// box. What matches, in which files and within which bounds is the host's rule
// (core/projects/search.py, the file.search operation, which streams its results); this module
// shows them. Quick open and the filter rank the file list the host gave (file.walk) with
// page/ui/fuzzy.mjs.

import { el, name, replace } from "../dom.mjs";
import { baseName, folderLabel, parentOf } from "./explorer.mjs";
import { rankPaths } from "./fuzzy.mjs";

const TIME_LIMIT_MS = 10_000;
const TYPE_DELAY_MS = 250;
const FILTER_SHOWN = 200;

function plural(n, one, many = `${one}s`) {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

function globs(text) {
  return text
    .split(",")
    .map((g) => g.trim())
    .filter(Boolean);
}

/** Move the editor's cursor to `line` (1-based) and select `length` characters from `column`
 * (both in Unicode characters, as the host counts them), scrolled into view. */
export function goToLine(editor, line, column = 0, length = 0) {
  const view = editor?.view;
  if (!view) return;
  const doc = view.state.doc;
  const row = doc.line(Math.max(1, Math.min(line, doc.lines)));
  const chars = [...row.text];
  const from = row.from + chars.slice(0, column).join("").length;
  const to = from + chars.slice(column, column + length).join("").length;
  view.dispatch({ selection: { anchor: from, head: Math.min(to, row.to) }, scrollIntoView: true });
  editor.focus();
}

/** The file list of the project (file.walk), fetched when first needed after `stale()`. */
class FileList {
  constructor(files) {
    this.files = files;
    this.paths = null;
  }

  stale() {
    this.paths = null;
  }

  async get() {
    if (!this.paths) {
      const walk = await this.files.call("file.walk", { folder: "" });
      this.paths = walk.result.files.map((f) => f.path);
    }
    return this.paths;
  }
}

/**
 * Search in files, quick open and the tree filter of one Files surface (`files`, a FilesView).
 * `panel` is placed above the file layout, `filterBox` above the tree; `keys(event)` handles
 * the shortcuts; `destroy()` stops a running search.
 */
export class Finder {
  constructor(files) {
    this.files = files;
    this.list = new FileList(files);
    this.seq = 0;
    this.current = null;
    this.warming = null; // the warm-up running (file.search_warm), by its name
    this.warmed = null; // the project last warmed
    this.filterOpened = null; // the file last opened from the tree's filter, shown when it clears
    this.#buildPanel();
    this.#buildFilter();
  }

  // ---------------------------------------------------------------- search in files

  #buildPanel() {
    const field = (id, label, attrs = {}) => [
      el("label", { for: id }, label),
      el("input", { id, type: "text", autocomplete: "off", spellcheck: "false", ...attrs }),
    ];
    const check = (id, label) =>
      el(
        "span",
        { class: "field-check" },
        el("input", { type: "checkbox", id, onchange: () => this.#typed(0) }),
        el("label", { for: id }, label),
      );
    const [qLabel, query] = field("search-query", "Search in files", {
      type: "search",
      "aria-keyshortcuts": "Control+Shift+F",
      placeholder: "Text to find",
    });
    const [iLabel, include] = field("search-include", "Files to include", {
      placeholder: "e.g. *.py, src/**/*.mjs",
    });
    const [xLabel, exclude] = field("search-exclude", "Files to exclude", {
      placeholder: "e.g. node_modules, *.min.js",
    });
    this.query = query;
    this.include = include;
    this.exclude = exclude;
    for (const input of [query, include, exclude]) {
      input.addEventListener("input", () => this.#typed(TYPE_DELAY_MS));
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          this.#typed(0);
        }
        if (e.key === "Escape") {
          e.preventDefault();
          this.close();
        }
      });
    }
    this.stopButton = el(
      "button",
      { type: "button", id: "search-stop", disabled: true, onclick: () => this.stop() },
      "Stop",
    );
    this.status = el("p", {
      id: "search-status",
      class: "muted",
      role: "status",
      "aria-live": "polite",
    });
    this.results = el("ul", {
      id: "search-results",
      class: "search-results",
      "aria-label": "Search results",
    });
    this.panel = el(
      "section",
      {
        id: "search-panel",
        class: "search-panel",
        hidden: true,
        "aria-labelledby": "search-title",
      },
      el(
        "div",
        { class: "search-head" },
        el("h3", { id: "search-title" }, "Search in files"),
        el(
          "button",
          { type: "button", id: "search-close", onclick: () => this.close() },
          "Close search",
        ),
      ),
      el(
        "div",
        { class: "search-fields" },
        el("div", { class: "search-field search-main" }, qLabel, query),
        el(
          "div",
          { class: "search-switches", role: "group", "aria-label": "Search options" },
          check("search-case", "Match case"),
          check("search-word", "Whole word"),
          check("search-regex", "Regular expression"),
        ),
      ),
      // folded by default (issue 34: the panel is a side column; the results stay in sight)
      el(
        "details",
        { class: "search-filters", id: "search-filters" },
        el("summary", {}, "Files to include or exclude"),
        el(
          "div",
          { class: "search-fields" },
          el("div", { class: "search-field" }, iLabel, include),
          el("div", { class: "search-field" }, xLabel, exclude),
        ),
      ),
      el(
        "p",
        { class: "muted hint", id: "search-replace-note" },
        "Replace in files is not available yet: use Find (Ctrl+F) in a file.",
      ),
      el("div", { class: "toolbar" }, this.stopButton, this.status),
      this.results,
    );
  }

  /** Show the search panel and put the cursor in its text field (the selection's text, when
   * the editor has one on a single line, becomes the query). */
  open() {
    this.panel.hidden = false;
    const view = this.files.editor?.view;
    const picked = view
      ? view.state.sliceDoc(view.state.selection.main.from, view.state.selection.main.to)
      : "";
    if (picked && !picked.includes("\n") && picked.length <= 200) {
      this.query.value = picked;
      this.#typed(0);
    }
    this.query.focus();
    this.query.select();
    this.#warm();
  }

  /** Ask the host to read the project's files into its kept bytes while the person types
   * (file.search_warm, issue 33: the first search then reads memory, not storage). Once per
   * project and panel opening; the host decides what is kept and stops at its bound. */
  #warm() {
    const project = this.files.project?.id;
    if (!project || this.warming || this.warmed === project) return;
    const id = `w${++this.seq}`;
    this.warming = id;
    this.panel.dataset.warm = "running";
    this.files
      .call("file.search_warm", { search: id })
      .then(
        (answer) => {
          this.warmed = project;
          this.panel.dataset.warm = answer?.result?.stopped ?? "done";
          this.panel.dataset.warmKept = String(answer?.result?.kept_bytes ?? 0);
        },
        () => {
          this.panel.dataset.warm = "failed";
        },
      )
      .finally(() => {
        if (this.warming === id) this.warming = null;
      });
  }

  close() {
    this.stop();
    if (this.warming) {
      this.files.app.host.call("file.search_cancel", { search: this.warming }).catch(() => {});
      this.warmed = null;
    }
    this.panel.hidden = true;
    this.files.node.querySelector("#open-search")?.focus();
  }

  #typed(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), delay);
  }

  /** Stop the running search (the host stops before its next file and says so). */
  stop() {
    clearTimeout(this.timer);
    if (!this.current) return;
    const id = this.current;
    this.files.app.host.call("file.search_cancel", { search: id }).catch(() => {});
  }

  /** Search for what the fields say; results stream in as the host finds them. */
  async run() {
    const text = this.query.value;
    if (this.current) this.stop();
    const id = `s${++this.seq}`;
    this.current = null;
    replace(this.results);
    delete this.results.dataset.firstMs;
    this.results.dataset.run = id;
    this.results.dataset.searched = this.#fields();
    if (!text) {
      this.status.textContent = "";
      this.stopButton.disabled = true;
      return;
    }
    this.current = id;
    this.stopButton.disabled = false;
    this.status.textContent = "Searching…";
    const started = performance.now();
    const decoder = new TextDecoder();
    let pending = "";
    let shown = 0;
    const onChunk = (_received, data) => {
      if (this.current !== id || !(data instanceof ArrayBuffer)) return;
      pending += decoder.decode(new Uint8Array(data), { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines)
        if (line) {
          this.#showFile(JSON.parse(line));
          shown += 1;
        }
      if (shown && !this.results.dataset.firstMs)
        this.results.dataset.firstMs = String(Math.round(performance.now() - started));
      this.status.textContent = `Searching… ${plural(shown, "file")} with matches so far.`;
    };
    const args = {
      search: id,
      query: text,
      case_sensitive: this.panel.querySelector("#search-case").checked,
      whole_word: this.panel.querySelector("#search-word").checked,
      regex: this.panel.querySelector("#search-regex").checked,
      include: globs(this.include.value),
      exclude: globs(this.exclude.value),
      time_limit_ms: TIME_LIMIT_MS,
    };
    let answer = null;
    let refusal = null;
    try {
      answer = await this.files.call("file.search", args, { onChunk });
    } catch (err) {
      refusal = err;
    }
    if (this.current !== id) return;
    this.current = null;
    this.stopButton.disabled = true;
    this.results.dataset.done = id; // the last search that ended (tests and the bench wait on it)
    this.results.dataset.doneMs = String(Math.round(performance.now() - started));
    if (refusal) {
      this.status.textContent = refusal.message ?? String(refusal);
      this.status.dataset.code = refusal.code ?? "";
      return;
    }
    delete this.status.dataset.code;
    this.status.textContent = this.#summary(answer.result);
  }

  /** What the fields ask now, as one text (a finished search for the same ends the wait of a
   * test or the bench). */
  #fields() {
    const f = (id) => this.panel.querySelector(id);
    return JSON.stringify([
      this.query.value,
      f("#search-case").checked,
      f("#search-word").checked,
      f("#search-regex").checked,
      this.include.value,
      this.exclude.value,
    ]);
  }

  #summary(s) {
    const found = s.matches
      ? `${plural(s.matches, "match", "matches")} in ${plural(s.files_matched, "file")}`
      : "No matches";
    const skipped = [
      s.skipped_binary ? `${plural(s.skipped_binary, "binary file")} skipped` : "",
      s.skipped_large
        ? `${plural(s.skipped_large, "file")} over ${Math.round(s.max_file_bytes / 1048576)} MB skipped`
        : "",
      s.skipped_names
        ? `${plural(s.skipped_names, "file")} with a name the host cannot open skipped`
        : "",
    ].filter(Boolean);
    const why = {
      done: "",
      limit: " Stopped at the most matches one search shows: narrow it with files to include.",
      time: ` Stopped at the time bound (${TIME_LIMIT_MS / 1000} s): not every file was searched.`,
      cancelled: " Stopped: not every file was searched.",
    }[s.stopped];
    return `${found} (${plural(s.files, "file")} searched${skipped.length ? `; ${skipped.join(", ")}` : ""}).${why}`;
  }

  #showFile(file) {
    const hits = file.hits.map((h) =>
      el(
        "li",
        {},
        el(
          "button",
          {
            type: "button",
            class: "search-hit",
            "data-path": file.path,
            "data-line": String(h.line),
            onclick: () => this.#openAt(file.path, h),
          },
          el("span", { class: "visually-hidden" }, `${file.path}, line `),
          el("span", { class: "search-line muted" }, `${h.line}`),
          el("span", { class: "visually-hidden" }, ": "),
          el(
            "span",
            { class: "search-preview" },
            h.preview.slice(0, h.start),
            el("mark", {}, h.preview.slice(h.start, h.end)),
            h.preview.slice(h.end),
          ),
        ),
      ),
    );
    const count = `${plural(file.hits.length, "match", "matches")}${file.more ? " (more not shown)" : ""}`;
    this.results.append(
      el(
        "li",
        { class: "search-file", "data-path": file.path },
        el(
          "p",
          { class: "search-file-path" },
          name(baseName(file.path), { class: "search-file-name" }),
          " ",
          el(
            "span",
            { class: "muted" },
            parentOf(file.path) ? folderLabel(parentOf(file.path)) : "/",
            " · ",
            count,
          ),
        ),
        el("ul", { class: "search-hits", "aria-label": `Matches in ${file.path}` }, hits),
      ),
    );
  }

  async #openAt(path, hit) {
    if (!(await this.files.app.mayLeave())) return;
    await this.files.explorer.reveal(path);
    if (this.files.file !== path) await this.files.open(path);
    goToLine(this.files.editor, hit.line, hit.column, hit.length);
  }

  // ---------------------------------------------------------------- quick open

  /** The quick-open dialog: type part of a file's name, arrows to choose, Enter opens. */
  async quickOpen() {
    if (document.querySelector("#quick-open")) return;
    const input = el("input", {
      id: "quick-open-input",
      type: "text",
      role: "combobox",
      autocomplete: "off",
      spellcheck: "false",
      "aria-expanded": "true",
      "aria-controls": "quick-open-list",
      "aria-autocomplete": "list",
      placeholder: "File name",
    });
    const listbox = el("ul", { id: "quick-open-list", role: "listbox", "aria-label": "Files" });
    const note = el(
      "p",
      { id: "quick-open-note", class: "muted", role: "status", "aria-live": "polite" },
      "Listing the project's files…",
    );
    const dialog = el(
      "dialog",
      { class: "dialog quick-open", id: "quick-open", "aria-labelledby": "quick-open-title" },
      el("h2", { id: "quick-open-title" }, "Open a file"),
      el(
        "label",
        { for: "quick-open-input" },
        "Go to file (type part of its name; ↑/↓ choose, Enter opens)",
      ),
      input,
      note,
      listbox,
    );
    let shown = [];
    let active = 0;
    const paint = () => {
      replace(
        listbox,
        shown.map((path, i) =>
          el(
            "li",
            {
              role: "option",
              id: `quick-open-${i}`,
              "aria-selected": String(i === active),
              class: i === active ? "active" : null,
              onmousedown: (e) => {
                e.preventDefault();
                choose(path);
              },
            },
            name(baseName(path), { class: "quick-name" }),
            " ",
            el("span", { class: "muted" }, parentOf(path) ? folderLabel(parentOf(path)) : "/"),
          ),
        ),
      );
      if (shown.length) input.setAttribute("aria-activedescendant", `quick-open-${active}`);
      else input.removeAttribute("aria-activedescendant");
      listbox.querySelector(".active")?.scrollIntoView({ block: "nearest" });
    };
    let paths = [];
    const update = () => {
      shown = input.value.trim() ? rankPaths(input.value, paths, 50) : paths.slice(0, 50);
      active = 0;
      note.textContent =
        input.value.trim() && !shown.length
          ? "No file name matches."
          : `${plural(paths.length, "file")} in the project.`;
      paint();
    };
    const choose = async (path) => {
      dialog.close();
      if (!(await this.files.app.mayLeave())) return;
      await this.files.explorer.reveal(path);
      await this.files.open(path, { focusEditor: true });
    };
    input.addEventListener("input", update);
    input.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        if (shown.length)
          active = (active + (e.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
        paint();
      } else if (e.key === "Enter") {
        e.preventDefault();
        if (shown[active]) choose(shown[active]);
      }
    });
    dialog.addEventListener("close", () => dialog.remove(), { once: true });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    try {
      paths = await this.list.get();
    } catch (err) {
      note.textContent = err?.message ?? String(err);
      return;
    }
    update();
  }

  // ---------------------------------------------------------------- the tree's filter

  #buildFilter() {
    this.filterInput = el("input", {
      id: "tree-filter",
      type: "search",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: "Filter files by name",
    });
    this.filterNote = el("p", {
      id: "tree-filter-note",
      class: "muted",
      role: "status",
      "aria-live": "polite",
    });
    this.filterList = el("ul", {
      id: "tree-filter-results",
      class: "tree-filter-results",
      "aria-label": "Files whose name matches",
      hidden: true,
    });
    this.filterBox = el(
      "div",
      { class: "tree-filter", role: "search" },
      el("label", { for: "tree-filter", class: "visually-hidden" }, "Filter files by name"),
      this.filterInput,
      this.filterNote,
      this.filterList,
    );
    this.filterInput.addEventListener("input", () => this.#filter());
    this.filterInput.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.filterInput.value) {
        e.preventDefault();
        this.filterInput.value = "";
        this.#filter();
      }
    });
  }

  async #filter() {
    const text = this.filterInput.value.trim();
    const tree = this.files.explorer.element;
    if (!text) {
      this.filterList.hidden = true;
      replace(this.filterList);
      this.filterNote.textContent = "";
      tree.hidden = false;
      this.list.stale(); // the next filter lists again: files may have come and gone
      // the file opened from the filter is the tree's place now: its row, scrolled to and
      // selected (Explorer.show did it while the tree was hidden, where nothing scrolls —
      // stop 45's tryout: the tree came back where it was, the file nowhere in it)
      const opened = this.filterOpened;
      this.filterOpened = null;
      if (opened && this.files.file === opened) this.files.explorer.show(opened);
      return;
    }
    let paths;
    try {
      paths = await this.list.get();
    } catch (err) {
      this.filterNote.textContent = err?.message ?? String(err);
      return;
    }
    if (this.filterInput.value.trim() !== text) return;
    const needle = text.toLowerCase();
    const matching = paths.filter(
      (p) => baseName(p).toLowerCase().includes(needle) || p.toLowerCase().includes(needle),
    );
    const ranked = rankPaths(text, matching, FILTER_SHOWN);
    tree.hidden = true;
    this.filterList.hidden = false;
    replace(
      this.filterList,
      ranked.map((path) =>
        el(
          "li",
          {},
          el(
            "button",
            {
              type: "button",
              class: "filter-hit",
              "data-path": path,
              onclick: () => this.#openFiltered(path),
            },
            name(baseName(path)),
            " ",
            el("span", { class: "muted" }, parentOf(path) ? folderLabel(parentOf(path)) : "/"),
          ),
        ),
      ),
    );
    this.filterNote.textContent =
      matching.length > ranked.length
        ? `${plural(matching.length, "file")} match; the first ${ranked.length} are shown.`
        : matching.length
          ? `${plural(matching.length, "file")} match.`
          : "No file name matches.";
  }

  async #openFiltered(path) {
    if (!(await this.files.app.mayLeave())) return;
    this.filterOpened = path;
    await this.files.open(path);
  }

  /** The tree changed (a write, move, delete): the file list is fetched again when needed. */
  changed() {
    this.list.stale();
  }

  // ---------------------------------------------------------------- keys

  /** Ctrl/⌘+Shift+F opens search in files, Ctrl/⌘+P quick open; true when handled. */
  keys(event) {
    if (!(event.ctrlKey || event.metaKey) || event.altKey) return false;
    const key = event.key.toLowerCase();
    if (key === "f" && event.shiftKey) {
      event.preventDefault();
      this.open();
      return true;
    }
    if (key === "p" && !event.shiftKey) {
      event.preventDefault();
      this.quickOpen();
      return true;
    }
    return false;
  }

  destroy() {
    this.stop();
    clearTimeout(this.timer);
    document.querySelector("#quick-open")?.close();
  }
}
