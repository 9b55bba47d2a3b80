// The editor bundle's entry (docs/ui.md, "The editor"). The site build bundles this file with
// the pinned CodeMirror 6 packages into ONE module, dist/vendor/codemirror.mjs (esbuild,
// worker/sitebuild/bundle.py); page/ui/editor.mjs imports that module when a text file opens.
// Nothing here comes from a CDN, and nothing here is a rule: presentation only.
//
// The view is always mounted inside an OPEN SHADOW ROOT. CodeMirror's style injector
// (style-mod) then uses a constructable stylesheet (adoptedStyleSheets) instead of writing a
// <style> element, which the page's CSP (style-src 'self') would block — so the editor runs
// under the page's CSP and Trusted Types unchanged (docs/security.md).

import { Compartment, EditorState } from "@codemirror/state";
import {
  EditorView,
  crosshairCursor,
  drawSelection,
  dropCursor,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
  rectangularSelection,
} from "@codemirror/view";
import {
  defaultKeymap,
  history,
  historyKeymap,
  indentWithTab,
  redo,
  undo,
} from "@codemirror/commands";
import {
  closeSearchPanel,
  findNext,
  highlightSelectionMatches,
  openSearchPanel,
  search,
  searchKeymap,
} from "@codemirror/search";
import {
  HighlightStyle,
  LanguageDescription,
  StreamLanguage,
  bracketMatching,
  foldGutter,
  foldKeymap,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
import { css } from "@codemirror/lang-css";
import { html } from "@codemirror/lang-html";
import { javascript } from "@codemirror/lang-javascript";
import { json } from "@codemirror/lang-json";
import { markdown } from "@codemirror/lang-markdown";
import { python } from "@codemirror/lang-python";
import { c, cpp, java, kotlin } from "@codemirror/legacy-modes/mode/clike";
import { diff } from "@codemirror/legacy-modes/mode/diff";
import { dockerFile } from "@codemirror/legacy-modes/mode/dockerfile";
import { go } from "@codemirror/legacy-modes/mode/go";
import { properties } from "@codemirror/legacy-modes/mode/properties";
import { ruby } from "@codemirror/legacy-modes/mode/ruby";
import { rust } from "@codemirror/legacy-modes/mode/rust";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { standardSQL } from "@codemirror/legacy-modes/mode/sql";
import { toml } from "@codemirror/legacy-modes/mode/toml";
import { xml } from "@codemirror/legacy-modes/mode/xml";
import { yaml } from "@codemirror/legacy-modes/mode/yaml";
import { tags as t } from "@lezer/highlight";
import { palettes } from "./palettes.mjs";

// ------------------------------------------------------------------ accessible themes
// Every token colour is >= 4.5:1 against every background it can sit on (plain, active line,
// selection, matches); `node page/editor/contrast.mjs` checks the palettes, axe checks the page.
function accessibleTheme(p, dark) {
  const k = p.tokens;
  return [
    EditorView.theme(
      {
        "&": { color: p.fg, backgroundColor: p.bg, height: "100%" },
        "&.cm-focused": { outline: `3px solid ${p.focus}`, outlineOffset: "1px" },
        ".cm-scroller": {
          overflow: "auto",
          fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
        },
        ".cm-content": { caretColor: p.fg },
        ".cm-cursor, .cm-dropCursor": { borderLeftColor: p.fg },
        ".cm-gutters": {
          backgroundColor: p.pairs.gutter[1],
          color: p.pairs.gutter[0],
          borderRight: "1px solid #767676",
        },
        ".cm-activeLine": { backgroundColor: p.activeLine },
        ".cm-activeLineGutter": {
          backgroundColor: p.pairs.gutterActive[1],
          color: p.pairs.gutterActive[0],
        },
        "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection":
          { backgroundColor: p.overlays.selection },
        ".cm-selectionMatch": { backgroundColor: p.overlays.selectionMatch },
        ".cm-searchMatch": {
          backgroundColor: p.overlays.searchMatch,
          outline: "1px solid #767676",
        },
        ".cm-searchMatch.cm-searchMatch-selected": { backgroundColor: p.overlays.searchSelected },
        "&.cm-focused .cm-matchingBracket": { backgroundColor: p.overlays.matchingBracket },
        ".cm-foldPlaceholder": { backgroundColor: p.pairs.fold[1], color: p.pairs.fold[0] },
        ".cm-panels": {
          backgroundColor: p.pairs.panel?.[1] ?? "#f5f5f5",
          color: p.pairs.panel?.[0] ?? p.fg,
        },
        ".cm-panels.cm-panels-top": { borderBottom: "1px solid #767676" },
        ".cm-textfield": { backgroundColor: p.bg, color: p.fg, border: "1px solid #767676" },
        ".cm-button": {
          backgroundImage: "none",
          backgroundColor: p.pairs.button?.[1] ?? "#eeeeee",
          color: p.pairs.button?.[0] ?? p.fg,
          border: "1px solid #767676",
        },
        ".cm-panel button[name=close]": { color: p.fg },
        ".cm-textfield:focus-visible, .cm-button:focus-visible, .cm-panel input[type=checkbox]:focus-visible, .cm-panel button:focus-visible":
          { outline: `3px solid ${p.focus}`, outlineOffset: "1px" },
      },
      { dark },
    ),
    syntaxHighlighting(
      HighlightStyle.define([
        { tag: t.meta, color: k.meta },
        { tag: t.link, textDecoration: "underline", color: k.link },
        { tag: t.heading, textDecoration: "underline", fontWeight: "bold", color: k.heading },
        { tag: t.emphasis, fontStyle: "italic" },
        { tag: t.strong, fontWeight: "bold" },
        { tag: t.strikethrough, textDecoration: "line-through" },
        { tag: t.keyword, color: k.keyword },
        { tag: [t.atom, t.bool, t.url, t.contentSeparator, t.labelName], color: k.atom },
        { tag: [t.literal, t.inserted, t.number], color: k.literal },
        { tag: [t.string, t.deleted], color: k.string },
        { tag: [t.regexp, t.escape, t.special(t.string)], color: k.special },
        { tag: t.definition(t.variableName), color: k.definition },
        { tag: t.local(t.variableName), color: k.local },
        { tag: [t.typeName, t.namespace], color: k.type },
        { tag: t.className, color: k.className },
        { tag: [t.special(t.variableName), t.macroName], color: k.macro },
        { tag: t.definition(t.propertyName), color: k.property },
        { tag: t.comment, color: k.comment },
        { tag: t.invalid, color: k.invalid },
      ]),
    ),
  ];
}
const THEMES = {
  light: accessibleTheme(palettes.light, false),
  dark: accessibleTheme(palettes.dark, true),
};

// ------------------------------------------------------------------ languages, by file name
const stream = (mode) => () => StreamLanguage.define(mode);
const LANGS = {
  js: () => javascript(),
  jsx: () => javascript({ jsx: true }),
  ts: () => javascript({ typescript: true }),
  tsx: () => javascript({ typescript: true, jsx: true }),
  py: () => python(),
  json: () => json(),
  md: () => markdown({ codeLanguages: codeLanguages() }),
  html: () => html(),
  css: () => css(),
  sh: stream(shell),
  yaml: stream(yaml),
  toml: stream(toml),
  c: stream(c),
  cpp: stream(cpp),
  java: stream(java),
  kotlin: stream(kotlin),
  go: stream(go),
  rust: stream(rust),
  ruby: stream(ruby),
  sql: stream(standardSQL),
  diff: stream(diff),
  dockerfile: stream(dockerFile),
  ini: stream(properties),
  xml: stream(xml),
};
const EXT = {
  mjs: "js",
  cjs: "js",
  pyi: "py",
  htm: "html",
  bash: "sh",
  zsh: "sh",
  yml: "yaml",
  markdown: "md",
  h: "c",
  hpp: "cpp",
  cc: "cpp",
  cxx: "cpp",
  kt: "kotlin",
  rs: "rust",
  rb: "ruby",
  patch: "diff",
  cfg: "ini",
  conf: "ini",
  properties: "ini",
  svg: "xml",
  jsonl: "json",
  ipynb: "json",
};
const NAMES = { dockerfile: "dockerfile", makefile: "sh", ".bashrc": "sh", ".profile": "sh" };

function codeLanguages() {
  const d = (name, alias, key) => LanguageDescription.of({ name, alias, support: LANGS[key]() });
  return [
    d("javascript", ["js"], "js"),
    d("typescript", ["ts"], "ts"),
    d("python", ["py"], "py"),
    d("json", [], "json"),
    d("html", [], "html"),
    d("css", [], "css"),
    d("shell", ["sh", "bash"], "sh"),
    d("yaml", ["yml"], "yaml"),
    d("toml", [], "toml"),
    d("sql", [], "sql"),
    d("diff", [], "diff"),
  ];
}

/** The language key for a file name (`"py"`, `"md"`, …), or `""` for plain text. */
export function languageKey(name) {
  const base = String(name).split("/").pop().toLowerCase();
  if (NAMES[base]) return NAMES[base];
  const dot = base.lastIndexOf(".");
  const ext = dot > 0 ? base.slice(dot + 1) : "";
  const key = EXT[ext] ?? ext;
  return LANGS[key] ? key : "";
}

// ------------------------------------------------------------------ typing over a selection
// Typing (or the browser's own Delete) over a selection that spans lines lets the browser's
// editing code merge the line elements, and Chromium keeps their look by writing inline style
// attributes — which the page's CSP refuses (style-src-attr), one violation per keystroke.
// So a selection is replaced by a transaction instead, as CodeMirror does for its own keys:
// same text, same undo history ("input.type" groups like typing), no DOM edit by the browser.
//
// The selection replaced must be the one the browser holds NOW. CodeMirror learns of a new
// selection on the next `selectionchange` event, a task the browser may run only after the text
// has arrived (a script that selects the content and then inserts — Playwright's fill, an
// assistive tool — on a busy machine). Its state then still says "nothing selected" while the
// browser replaces every selected line itself. CodeMirror reads the DOM selection first before
// handling a key, a mousedown or a paste (`view.observer.forceFlush()`), not before beforeinput;
// this handler makes it do so. `observer` is CodeMirror's own DOM observer, not declared public:
// the pinned version has it, and e2e/test_workspace.py fails if an upgrade loses it.
const replaceSelectionByTransaction = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.isComposing || view.state.readOnly) return false;
    let insert;
    let userEvent;
    if (event.inputType === "insertText" || event.inputType === "insertReplacementText") {
      insert = event.data ?? event.dataTransfer?.getData("text/plain") ?? "";
      userEvent = "input.type";
    } else if (event.inputType.startsWith("delete")) {
      insert = "";
      userEvent = "delete.selection";
    } else {
      return false;
    }
    view.observer?.forceFlush?.(); // the browser's selection, read as CodeMirror would on keydown
    if (view.state.selection.ranges.every((r) => r.empty)) return false;
    event.preventDefault();
    view.dispatch({ ...view.state.replaceSelection(insert), userEvent, scrollIntoView: true });
    return true;
  },
});

// ------------------------------------------------------------------ the editor

/**
 * Mount an editor in `host`'s open shadow root (created if missing).
 * opts: {doc, name (for the language), label (the content's accessible name), readOnly,
 *        onSave(text), onChange(text), indentFor(languageKey) → spaces per indent level,
 *        tabWidth, wrap, fontSize (px), theme ("system" | "light" | "dark")}.
 * Returns {view, text(), setReadOnly(bool), focus(), openSearch(), configure(opts), destroy()}.
 * The theme follows prefers-color-scheme, live, unless the settings choose light or dark.
 */
export function createEditor(host, opts = {}) {
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const theme = new Compartment();
  const editable = new Compartment();
  const scheme = matchMedia("(prefers-color-scheme: dark)");
  let chosen = opts.theme ?? "system";
  const pick = () =>
    THEMES[chosen === "light" || chosen === "dark" ? chosen : scheme.matches ? "dark" : "light"];
  const key = languageKey(opts.name ?? "");
  const look = new Compartment();
  const lookOf = (o) => [
    indentUnit.of(" ".repeat(o.indentFor?.(key) ?? 2)),
    EditorState.tabSize.of(o.tabWidth ?? 4),
    o.wrap ? EditorView.lineWrapping : [],
    EditorView.theme({ "&": { fontSize: `${o.fontSize ?? 14}px` } }),
  ];
  const state = EditorState.create({
    doc: opts.doc ?? "",
    extensions: [
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightSpecialChars(),
      history(),
      foldGutter(),
      drawSelection(),
      dropCursor(),
      EditorState.allowMultipleSelections.of(true),
      indentOnInput(),
      bracketMatching(),
      rectangularSelection(),
      crosshairCursor(),
      highlightActiveLine(),
      highlightSelectionMatches(),
      search({ top: true }),
      keymap.of([
        {
          key: "Mod-s",
          preventDefault: true,
          run: (v) => {
            opts.onSave?.(v.state.doc.toString());
            return true;
          },
        },
        ...defaultKeymap,
        ...searchKeymap,
        ...historyKeymap,
        ...foldKeymap,
        indentWithTab,
      ]),
      replaceSelectionByTransaction,
      EditorView.contentAttributes.of({ "aria-label": opts.label ?? "File contents" }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) opts.onChange?.(update.state.doc.toString());
      }),
      key ? LANGS[key]() : [],
      // the indent of this language, the tab's width, wrap and font size: core's defaults
      // (core/editor_prefs.py) or the person's settings, passed in by the page (issue 33 item 6)
      look.of(lookOf(opts)),
      editable.of(EditorState.readOnly.of(Boolean(opts.readOnly))),
      theme.of(pick()),
    ],
  });
  const view = new EditorView({ state, parent: root, root });
  const follow = () => view.dispatch({ effects: theme.reconfigure(pick()) });
  scheme.addEventListener("change", follow);
  return {
    view,
    language: key,
    text: () => view.state.doc.toString(),
    setReadOnly: (on) =>
      view.dispatch({ effects: editable.reconfigure(EditorState.readOnly.of(Boolean(on))) }),
    focus: () => view.focus(),
    openSearch: () => openSearchPanel(view),
    closeSearch: () => closeSearchPanel(view),
    findNext: () => findNext(view),
    undo: () => undo(view),
    redo: () => redo(view),
    /** Apply new settings ({indentFor, tabWidth, wrap, fontSize, theme}) to the open view. */
    configure: (o) => {
      chosen = o.theme ?? "system";
      view.dispatch({ effects: [look.reconfigure(lookOf(o)), theme.reconfigure(pick())] });
    },
    destroy: () => {
      scheme.removeEventListener("change", follow);
      view.destroy();
    },
  };
}

// Markdown as a syntax tree, for a plugin's result rendered as text nodes (issue 33 item 5;
// page/ui/markdown.mjs): the same pinned @lezer/markdown (CommonMark) the editor's Markdown
// mode already bundles — never HTML from a string.
export { parser as markdownParser } from "@lezer/markdown";
