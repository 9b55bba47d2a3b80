// Build step (Node, never shipped): the memory snapshot of a freshly started Python that every
// boot restores instead of starting Python itself (worker/snapshot.mjs; issue 18, cold boot).
//
//   node worker/sitebuild/snapshot.mjs <dist/pyodide/> <out.bin>
//
// Starts the pinned runtime from <dist/pyodide/> in snapshot mode, imports the standard library
// the host needs (PRELOAD) and writes `makeMemorySnapshot()` to <out.bin>. Nothing of the site is
// loaded: no wheel, no host code, no storage — the snapshot holds the interpreter and the
// standard library, nothing secret and nothing of any person's.
//
// Reproducible: the same runtime gives the same bytes on every run and machine. What would
// differ between runs is fixed for this process only: the randomness Python and its allocator
// draw while starting (a counter stream instead of the CSPRNG), the clock (the build's
// SOURCE_DATE_EPOCH), Python's string-hash key (PYTHONHASHSEED=0), the program's name and
// arguments (a browser's). None of
// it is a secret of anyone's: the snapshot is a public file of the site. After a restore,
// every draw of randomness reaches the browser's CSPRNG again (os.urandom, secrets) and
// `random` is reseeded from it (AFTER_RESTORE_CODE); tests/build/test_snapshot.py checks both.

import { writeFileSync } from "node:fs";
import { PRELOAD_CODE } from "../snapshot.mjs";
import { loadPinnedPyodide } from "./node-pyodide.mjs";

const [dir, out, epoch] = process.argv.slice(2);
if (!dir || !out || !epoch) {
  console.error(
    "usage: node worker/sitebuild/snapshot.mjs <dist/pyodide/> <out.bin> <SOURCE_DATE_EPOCH>",
  );
  process.exit(2);
}

// Emscripten takes the program's name (sys.executable, sys.argv) and arguments from Node's
// argv: give it what a browser's start has, so no path of the build machine is in the memory.
process.argv = [process.argv[0], "./this.program"];

// This process only: a fixed clock and a counter in place of the CSPRNG while Python starts.
const fixedMs = Number(epoch) * 1000;
Date.now = () => fixedMs;
performance.now = () => 0;
let counter = 0;
const fill = (view) => {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (counter++ * 151 + 17) & 0xff;
  return view;
};
globalThis.crypto.getRandomValues = fill;
(await import("node:crypto")).default.randomFillSync = fill;

const pyodide = await loadPinnedPyodide(dir, {
  env: { PYTHONHASHSEED: "0", _: "./this.program" },
  _makeSnapshot: true,
});
pyodide.runPython(PRELOAD_CODE);
// the key was for starting only; `random` is reseeded from the CSPRNG after every restore
pyodide.runPython("import os, random\nos.environ.pop('PYTHONHASHSEED', None)\nrandom.seed(0)\n");
const snapshot = pyodide.makeMemorySnapshot();
writeFileSync(out, snapshot);
console.log(JSON.stringify({ bytes: snapshot.length }));
