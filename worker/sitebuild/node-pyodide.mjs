// Build steps' shared start (Node, never shipped): the pinned Pyodide runtime loaded from a
// built `dist/pyodide/` folder, its wheels resolved from that folder's own pyodide-lock.json
// (so installing one is sha256-checked as in the browser, and nothing is fetched).
// Used by worker/sitebuild/bytecode.mjs and worker/sitebuild/snapshot.mjs.

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** `loadPyodide` on the runtime in `dir` (a path to a built `dist/pyodide/`), Python's stdout
 * silenced; `extra` adds loader options (e.g. `env`, `_makeSnapshot`). Resolves the Pyodide API
 * object; rejects as `loadPyodide` does when the runtime cannot start. */
export async function loadPinnedPyodide(dir, extra = {}) {
  const indexURL = resolve(dir) + "/";
  const { loadPyodide } = await import(pathToFileURL(`${indexURL}pyodide.mjs`).href);
  return loadPyodide({
    indexURL,
    lockFileURL: `${indexURL}pyodide-lock.json`,
    packageBaseUrl: indexURL,
    stdout: () => {},
    ...extra,
  });
}
