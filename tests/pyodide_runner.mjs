// Run the pure core suite inside real Pyodide (the pinned npm runtime) under Node:
//   python -m tests.pyodide_wheels && node tests/pyodide_runner.mjs [pytest args]
// micropip (itself loaded from a pinned local wheel) installs the runtime wheels, our own
// wheel and the test tools from local files; the repository is mounted so pytest reads the
// same tests CPython runs. Exit code: pytest's.

import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const wheelDir = join(root, ".cache", "pyodide-tests");
const list = JSON.parse(readFileSync(join(wheelDir, "wheels.json"), "utf8"));
const suites = ["tests/core", "tests/contracts", "tests/missions", "tests/archive", "tests/ui"];
const args = process.argv.slice(2);

const started = Date.now();
const pyodide = await loadPyodide({ indexURL: join(root, "node_modules", "pyodide") + "/" });
pyodide.mountNodeFS("/wheels", wheelDir);
pyodide.mountNodeFS("/repo", root);
await pyodide.loadPackage(join(wheelDir, list.micropip), { messageCallback: () => {} });
const micropip = pyodide.pyimport("micropip");
await micropip.install(
  list.install.map((w) => `emfs:/wheels/${w}`),
  { deps: false },
);
const booted = Date.now();

const code = await pyodide.runPythonAsync(`
import os, sys, time
os.chdir("/repo")
sys.path.insert(0, "/repo")
# our wheel is installed too; the tests must import the checkout's copy (same bytes)
import core
assert core.__file__.startswith("/repo/core"), core.__file__
import pytest
start = time.monotonic()
code = pytest.main(${JSON.stringify([...suites, "-q", "-p", "no:cacheprovider", "-m", "not cpython_only", ...args])})
print(f"pytest inside Pyodide {sys.version.split()[0]}: {time.monotonic() - start:.1f} s")
int(code)
`);
console.log(
  `Pyodide boot + installs ${((booted - started) / 1000).toFixed(1)} s, total ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
process.exit(code);
