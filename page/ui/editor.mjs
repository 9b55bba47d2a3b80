// The text editor (docs/ui.md, "The editor"): CodeMirror 6, pinned in package-lock.json and
// bundled by the site build into vendor/codemirror.mjs (worker/sitebuild/bundle.py). The bundle
// (≈700 KB) loads the first time a text file opens, from the site itself — never a CDN — and
// the offline cache holds it like every other file.

let bundle = null;

/** The editor module, loaded once. */
export function loadEditor() {
  bundle ??= import("../vendor/codemirror.mjs");
  return bundle;
}

/**
 * Mount an editor in `host` (an element; the editor lives in its open shadow root, so its
 * styles need no CSP change). opts: {doc, name, label, readOnly, onSave(text), onChange(text)}.
 * Resolves {text(), setReadOnly(on), focus(), openSearch(), destroy(), view, language}.
 */
export async function mountEditor(host, opts) {
  const { createEditor } = await loadEditor();
  return createEditor(host, opts);
}
