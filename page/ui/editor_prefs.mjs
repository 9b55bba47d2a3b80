// Editor settings (issue 33 item 6; docs/ui.md, "The editor"): indent per language, tab width,
// font size, line wrap, theme (system / light / dark). The host keeps them (`editor.prefs`, in
// ui-state.json; the page stores nothing) and decides their bounds; the defaults (4 spaces for
// Python) are core's (core/editor_prefs.py, EDITOR_DEFAULTS in contract.gen.mjs).

import { el } from "../dom.mjs";
import { EDITOR_DEFAULTS } from "../contract.gen.mjs";
import { showRefusal } from "./alerts.mjs";

let kept = null;

/** The settings, asked of the host once per page (then kept in memory only). */
export async function loadPrefs(host) {
  if (kept) return kept;
  try {
    kept = (await host.call("editor.prefs", {})).result;
  } catch {
    kept = {
      indent: {},
      tab_width: EDITOR_DEFAULTS.tab_width,
      font_size: EDITOR_DEFAULTS.font_size,
      wrap: false,
      theme: "system",
    };
  }
  return kept;
}

/** The editor's options (page/ui/editor.mjs mountEditor) for `prefs`. */
export function editorOptions(prefs) {
  return {
    indentFor: (language) =>
      prefs.indent[language] ??
      EDITOR_DEFAULTS.indent[language] ??
      prefs.indent.other ??
      EDITOR_DEFAULTS.default_indent,
    tabWidth: prefs.tab_width,
    fontSize: prefs.font_size,
    wrap: prefs.wrap,
    theme: prefs.theme,
  };
}

function number(id, label, value, min, max) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: id }, label),
    el("input", {
      type: "number",
      id,
      min: String(min),
      max: String(max),
      step: "1",
      value: String(value),
      required: true,
    }),
  );
}

/** The settings dialog; resolves the saved settings, or null when cancelled or refused. */
export function editPrefs(host) {
  return new Promise((resolve) => {
    const p = kept ?? {
      indent: {},
      tab_width: EDITOR_DEFAULTS.tab_width,
      font_size: EDITOR_DEFAULTS.font_size,
      wrap: false,
      theme: "system",
    };
    const pyIndent = p.indent.py ?? EDITOR_DEFAULTS.indent.py ?? EDITOR_DEFAULTS.default_indent;
    const otherIndent = p.indent.other ?? EDITOR_DEFAULTS.default_indent;
    const opener = document.activeElement;
    const theme = el(
      "select",
      { id: "pref-theme" },
      ["system", "light", "dark"].map((t) =>
        el(
          "option",
          { value: t, selected: p.theme === t },
          t === "system" ? "Same as the system" : t === "light" ? "Light" : "Dark",
        ),
      ),
    );
    const dialog = el(
      "dialog",
      { class: "dialog", id: "editor-prefs-dialog", "aria-labelledby": "editor-prefs-title" },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: "editor-prefs-title" }, "Editor settings"),
        number("pref-indent-py", "Python: spaces per indent", pyIndent, 1, 8),
        number("pref-indent-other", "Other files: spaces per indent", otherIndent, 1, 8),
        number("pref-tab-width", "Tab width (columns)", p.tab_width, 1, 8),
        number("pref-font-size", "Font size (px)", p.font_size, 10, 28),
        el(
          "div",
          { class: "field field-check" },
          el("input", { type: "checkbox", id: "pref-wrap", checked: p.wrap }),
          el("label", { for: "pref-wrap" }, "Wrap long lines"),
        ),
        el("div", { class: "field" }, el("label", { for: "pref-theme" }, "Theme"), theme),
        el(
          "div",
          { class: "actions" },
          el(
            "button",
            { value: "cancel", type: "submit", formnovalidate: true, class: "dialog-cancel" },
            "Cancel",
          ),
          el(
            "button",
            { value: "ok", type: "submit", class: "primary dialog-confirm" },
            "Save settings",
          ),
        ),
      ),
    );
    dialog.addEventListener(
      "close",
      async () => {
        const ok = dialog.returnValue === "ok";
        const value = (id) => Number(dialog.querySelector(`#${id}`).value);
        const prefs = ok
          ? {
              indent: {
                ...p.indent,
                py: value("pref-indent-py"),
                other: value("pref-indent-other"),
              },
              tab_width: value("pref-tab-width"),
              font_size: value("pref-font-size"),
              wrap: dialog.querySelector("#pref-wrap").checked,
              theme: theme.value,
            }
          : null;
        dialog.remove();
        if (opener?.isConnected && typeof opener.focus === "function") opener.focus();
        if (!prefs) {
          resolve(null);
          return;
        }
        try {
          kept = (await host.call("editor.prefs", { prefs })).result;
          resolve(kept);
        } catch (err) {
          showRefusal(err, "Saving the editor settings");
          resolve(null);
        }
      },
      { once: true },
    );
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
