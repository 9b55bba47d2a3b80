// Build step (Node, never shipped): compile every module of the site's wheels to bytecode with
// the pinned Pyodide's own CPython, so the browser never compiles them at boot.
//
//   node worker/sitebuild/bytecode.mjs <dist/pyodide/> <out.zip.gz>
//
// Loads the pinned runtime from <dist/pyodide/>, installs the site's wheels by name from its
// pyodide-lock.json (sha256-checked as in the browser), compiles site-packages with
// py_compile's CHECKED_HASH mode (a .pyc is used only if its source's hash matches, so a stale
// one is ignored, never run), and writes the .pyc files as one zip with sorted names and fixed
// times: paths relative to site-packages, e.g. "jinja2/__pycache__/nodes.cpython-314.pyc".
// The entries are stored and the whole zip is gzipped (no time in its header): the worker
// inflates it in one pass while Python starts and then only slices the entries out
// (worker/zip-entries.mjs; issue 34, cold boot) — 321 separately deflated entries cost one
// inflate each.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadPinnedPyodide } from "./node-pyodide.mjs";

const [dir, out] = process.argv.slice(2);
if (!dir || !out) {
  console.error("usage: node worker/sitebuild/bytecode.mjs <dist/pyodide/> <out.zip.gz>");
  process.exit(2);
}
const pyodide = await loadPinnedPyodide(dir);
const lock = JSON.parse(readFileSync(join(dir, "pyodide-lock.json"), "utf8"));
const wanted = Object.keys(lock.packages);
const errors = [];
const installed = await pyodide.loadPackage(wanted, {
  messageCallback: () => {},
  errorCallback: (m) => errors.push(m),
});
if (errors.length || installed.length !== wanted.length) {
  console.error(`installing the wheels failed: ${errors.join("; ")}`);
  process.exit(1);
}
const count = pyodide.runPython(`
import gzip, os, py_compile, site, zipfile
root = site.getsitepackages()[0]
sources = sorted(
    os.path.join(folder, name)
    for folder, _, names in os.walk(root)
    for name in names
    if name.endswith(".py")
)
compiled = []
for path in sources:
    pyc = py_compile.compile(
        path, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH
    )
    compiled.append(pyc)
with zipfile.ZipFile("/tmp/bytecode.zip", "w", zipfile.ZIP_STORED) as zf:
    for pyc in sorted(compiled):
        info = zipfile.ZipInfo(os.path.relpath(pyc, root), date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        with open(pyc, "rb") as fh:
            zf.writestr(info, fh.read())
with open("/tmp/bytecode.zip", "rb") as fh, open("/tmp/bytecode.zip.gz", "wb") as gz:
    gz.write(gzip.compress(fh.read(), compresslevel=9, mtime=0))
len(compiled)
`);
writeFileSync(out, pyodide.FS.readFile("/tmp/bytecode.zip.gz"));
console.log(
  JSON.stringify({ compiled: count, bytes: pyodide.FS.stat("/tmp/bytecode.zip.gz").size }),
);
