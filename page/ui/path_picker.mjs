// Picking a file of the project instead of typing its path (issue 33 item 5): a dialog with
// the project's tree (its folders open, files as buttons) and a filter box that ranks the
// file names as quick open does (page/ui/fuzzy.mjs). The files are the host's answer
// (file.walk); which arguments take a path is core's rule (plugin.list `pathArgs`), never
// decided here.

import { el, name, replace } from "../dom.mjs";
import { guarded } from "./alerts.mjs";
import { rankPaths } from "./fuzzy.mjs";

const TREE_MAX = 2000; // more files than this: the filter only (a tree of buttons that long helps nobody)
const SHOWN = 200;

function treeOf(paths) {
  const root = { dirs: new Map(), files: [] };
  for (const path of paths) {
    const parts = path.split("/");
    let at = root;
    for (const part of parts.slice(0, -1)) {
      if (!at.dirs.has(part)) at.dirs.set(part, { dirs: new Map(), files: [] });
      at = at.dirs.get(part);
    }
    at.files.push(path);
  }
  return root;
}

/**
 * Ask for one file of the project. `walk()` resolves the project's file paths (file.walk);
 * `title` names the dialog; `current` is preselected in the filter when given. Resolves the
 * chosen path, or null when cancelled.
 */
export async function pickPath({ walk, title, current = "" }) {
  const paths = await guarded("Listing the project's files", walk);
  if (!paths) return null;
  return new Promise((resolve) => {
    let chosen = null;
    const list = el("div", {
      class: "path-picker-list",
      id: "path-picker-list",
      role: "group",
      "aria-label": "Files of the project",
    });
    const count = el("p", { class: "muted", id: "path-picker-count", role: "status" });
    const filter = el("input", {
      type: "search",
      id: "path-picker-filter",
      autocomplete: "off",
      placeholder: "Type part of a file name",
      "aria-describedby": "path-picker-count",
      oninput: () => show(),
      onkeydown: (event) => {
        // Enter picks the first file shown (implicit submission would Cancel)
        if (event.key !== "Enter") return;
        event.preventDefault();
        list.querySelector("button[data-path]")?.click();
      },
    });
    const dialog = el(
      "dialog",
      { class: "dialog path-picker", id: "path-picker", "aria-labelledby": "path-picker-title" },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: "path-picker-title" }, title),
        el("label", { for: "path-picker-filter" }, "Filter"),
        filter,
        count,
        list,
        el(
          "div",
          { class: "actions" },
          el("button", { value: "cancel", type: "submit" }, "Cancel"),
        ),
      ),
    );
    const fileButton = (path, label) =>
      el(
        "button",
        {
          type: "button",
          class: "link path-picker-file",
          "data-path": path,
          onclick: () => {
            chosen = path;
            dialog.close("ok");
          },
        },
        name(label),
      );
    const folder = (node, prefix) =>
      el(
        "ul",
        { class: "path-picker-tree" },
        [...node.dirs.entries()]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([dir, sub]) =>
            el(
              "li",
              {},
              el(
                "details",
                { open: true },
                el("summary", {}, name(`${dir}/`)),
                folder(sub, `${prefix}${dir}/`),
              ),
            ),
          ),
        node.files.map((path) => el("li", {}, fileButton(path, path.slice(prefix.length)))),
      );
    const show = () => {
      const query = filter.value.trim();
      if (!paths.length) {
        count.textContent = "This project has no file yet.";
        replace(list);
      } else if (query) {
        const found = rankPaths(query, paths, SHOWN);
        count.textContent = found.length
          ? `${found.length === SHOWN ? `The first ${SHOWN}` : found.length} of ${paths.length} files match.`
          : "No file matches.";
        replace(
          list,
          el(
            "ul",
            { class: "path-picker-tree" },
            found.map((p) => el("li", {}, fileButton(p, p))),
          ),
        );
      } else if (paths.length > TREE_MAX) {
        count.textContent = `${paths.length} files: type part of a name to find one.`;
        replace(list);
      } else {
        count.textContent = `${paths.length} ${paths.length === 1 ? "file" : "files"}.`;
        replace(list, folder(treeOf(paths), ""));
      }
    };
    filter.value = current;
    show();
    document.body.appendChild(dialog);
    const opener = document.activeElement;
    dialog.addEventListener(
      "close",
      () => {
        dialog.remove();
        if (opener?.isConnected) opener.focus();
        resolve(dialog.returnValue === "ok" ? chosen : null);
      },
      { once: true },
    );
    dialog.showModal();
    filter.focus();
  });
}

/**
 * An argument that takes a path: a text box (a new file's name can still be typed, e.g. a
 * write target) and "Choose…", which opens the picker. `walk` as for pickPath.
 * Returns {node, read(), set(path)}.
 */
export function pathField({ id, label, hint = null, value = "", required = false, walk }) {
  const input = el("input", {
    id,
    type: "text",
    value,
    required: required || null,
    autocomplete: "off",
    "aria-describedby": hint ? `${id}-hint` : null,
  });
  const choose = el(
    "button",
    {
      type: "button",
      class: "path-choose",
      "data-path-for": id,
      "aria-label": `Choose ${label}`,
      onclick: async () => {
        const path = await pickPath({ walk, title: `Choose ${label}` });
        if (path !== null) input.value = path;
        input.focus();
      },
    },
    "Choose…",
  );
  return {
    node: el(
      "div",
      { class: "field" },
      el("label", { for: id }, label),
      el("div", { class: "path-field" }, input, choose),
      hint ? el("span", { class: "muted hint", id: `${id}-hint` }, hint) : null,
    ),
    read: () => (input.value === "" && !required ? undefined : input.value),
    set: (path) => {
      input.value = path;
    },
  };
}
