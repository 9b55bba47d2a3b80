// Booting Python in a worker from this site's own files (SPEC §2), shared by the host worker
// and the environment-server workers. Thin glue: it loads, checks and reports; it decides
// nothing about requests.
//
// bootPython({site, report}) resolves {pyodide, manifest, restored, kept} or throws a BootFailure {code,
// message, file}. `report({stage, loaded, total})` gets progress (bytes so far). Python starts
// from the site's memory snapshot (worker/snapshot.mjs) when the site ships one (`restored`;
// `kept`: from this build's inflated copy in Cache Storage).

import { egressGuard } from "./egress-guard.mjs";
import {
  AFTER_RESTORE_CODE,
  SNAPSHOT,
  dropInflated,
  fetchSnapshot,
  handOnce,
} from "./snapshot.mjs";
import { writeEntries, zipEntries } from "./zip-entries.mjs";

const PYODIDE_TIMEOUT_MS = 90_000;

export class BootFailure extends Error {
  constructor(code, message, file = null) {
    super(message);
    this.code = code;
    this.file = file;
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Precompiled bytecode of the wheels (worker/sitebuild/bytecode.py): a zip of stored entries,
// gzipped whole; absent from older builds.
const BYTECODE = "pyodide/site-bytecode.zip.gz";

function sri(hex) {
  const bytes = hex.match(/../g).map((h) => parseInt(h, 16));
  return `sha256-${btoa(String.fromCharCode(...bytes))}`;
}

/** The bytecode archive's files (`zipEntries`: [{name, bytes}]), or null when the site ships
 * none. Its bytes are checked by the browser against their pinned sha256 (SRI); fetched and
 * inflated (one pass, native) while Python starts, so that after it only writing them is left
 * (issue 34, cold boot: Pyodide's `unpackArchive` ran Python's zipfile over 321 entries). */
async function fetchBytecode(site, manifest) {
  const entry = manifest.files.find((f) => f.path === BYTECODE);
  if (!entry) return null;
  const response = await fetch(new URL(BYTECODE, site), { integrity: sri(entry.sha256) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const zip = response.body.pipeThrough(new DecompressionStream("gzip"));
  return zipEntries(await new Response(zip).arrayBuffer());
}

async function sha256Hex(buffer) {
  const digest = await crypto.subtle.digest("SHA-256", buffer);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// loadPackage never rejects (PLATFORM.md): find which wheel failed and why, by name.
async function diagnoseWheel(site, realFetch, lockPackages, name) {
  const entry = lockPackages[name];
  if (!entry) return { file: name, message: `package ${name} is not in the site's lock file` };
  const url = new URL(`pyodide/${entry.file_name}`, site);
  try {
    const response = await realFetch(url, { cache: "no-store" });
    if (!response.ok)
      return {
        file: entry.file_name,
        message: `HTTP ${response.status} fetching ${entry.file_name}`,
      };
    const actual = await sha256Hex(await response.arrayBuffer());
    if (actual !== entry.sha256) {
      return {
        file: entry.file_name,
        message: `${entry.file_name} failed its integrity check: its sha256 is ${actual}, the lock pins ${entry.sha256}`,
      };
    }
    return { file: entry.file_name, message: `${entry.file_name} could not be installed` };
  } catch (err) {
    return {
      file: entry.file_name,
      message: `${entry.file_name} could not be fetched: ${err.message}`,
    };
  }
}

export async function bootPython({ site, report }) {
  // Pyodide's loader module is fetched beside the manifest, not after it (issue 34, cold boot)
  const loader = import(new URL("pyodide/pyodide.mjs", site).href);
  loader.catch(() => {}); // awaited (and reported) below
  const manifestResponse = await fetch(new URL("site-manifest.json", site), { cache: "no-cache" });
  if (!manifestResponse.ok) {
    throw new BootFailure(
      "boot-failed",
      `site-manifest.json: HTTP ${manifestResponse.status}`,
      "site-manifest.json",
    );
  }
  const manifest = await manifestResponse.json();
  const sizes = new Map(manifest.files.map((f) => [f.path, f.size]));
  const counted = [
    "pyodide/pyodide.asm.wasm",
    "pyodide/python_stdlib.zip",
    "pyodide/pyodide-lock.json",
    BYTECODE,
    SNAPSHOT,
  ];
  const wheels = manifest.files.filter(
    (f) => f.path.startsWith("pyodide/") && f.path.endsWith(".whl"),
  );
  const total = [...counted.map((p) => sizes.get(p) ?? 0), ...wheels.map((f) => f.size)].reduce(
    (a, b) => a + b,
    0,
  );
  let loaded = 0;
  let stage = "runtime";
  let lastPost = 0;
  let booted = false;
  const guard = egressGuard(); // installed by the worker's own script, before anything ran
  const realFetch = guard.fetchUncounted;
  guard.countBytes((_url, n) => {
    if (booted) return; // later fetches (a tool module) are not boot progress
    loaded += n;
    const now = Date.now();
    if (now - lastPost > 50) {
      lastPost = now;
      report({ stage, loaded, total });
    }
  });

  report({ stage, loaded, total });
  // the snapshot and the wheels' precompiled bytecode, fetched while the runtime loads
  const seen = {};
  let snapshot = fetchSnapshot(site, manifest, seen);
  snapshot?.catch(() => {}); // awaited by the loader, or below when it was not
  const bytecode = fetchBytecode(site, manifest);
  bytecode.catch(() => {}); // awaited (and reported) after the packages
  let pyodide = null;
  let restored = false;
  try {
    const { loadPyodide } = await loader;
    const start = (extra) =>
      withTimeout(
        loadPyodide({
          indexURL: new URL("pyodide/", site).href,
          lockFileURL: new URL("pyodide/pyodide-lock.json", site).href,
          stdout: (line) => console.log(line),
          stderr: (line) => console.warn(line),
          ...extra,
        }),
        PYODIDE_TIMEOUT_MS,
        "Loading pyodide.asm.wasm",
      );
    if (snapshot) {
      const fetched = snapshot;
      snapshot = null; // the bytes belong to the loader alone (handOnce)
      try {
        pyodide = await start({ _loadSnapshot: handOnce(fetched) });
        pyodide.runPython(AFTER_RESTORE_CODE);
        restored = true;
      } catch (err) {
        // bytes that are not the pinned ones stop the boot; a snapshot that does not restore
        // (this browser, this memory) only costs the time of starting Python anew
        const settled = fetched.then(
          () => null,
          (fetchError) => fetchError,
        );
        const why = await Promise.race([
          settled,
          new Promise((resolve) => setTimeout(resolve, 1000, null)),
        ]);
        if (why) {
          throw new BootFailure(
            "boot-failed",
            `${SNAPSHOT} could not be used: ${why.message}. The host refuses to start with it.`,
            SNAPSHOT,
          );
        }
        console.warn(`The Python snapshot did not restore (${err.message}); starting Python anew.`);
        if (seen.kept) await dropInflated(manifest.build); // the next boot inflates the pinned file
        pyodide = null;
      }
    }
    pyodide ??= await start({});
  } catch (err) {
    if (err instanceof BootFailure) throw err;
    throw new BootFailure(
      "boot-failed",
      `Python runtime failed to load: ${err.message}`,
      "pyodide/pyodide.asm.wasm",
    );
  }

  stage = "packages";
  report({ stage, loaded, total });
  const errors = [];
  const wanted = manifest.packages;
  const installed = await pyodide.loadPackage(wanted, {
    checkIntegrity: true,
    messageCallback: () => {},
    errorCallback: (msg) => errors.push(String(msg)),
  });
  const installedNames = new Set((installed ?? []).map((p) => p.name));
  const missing = wanted.filter((name) => !installedNames.has(name));
  if (missing.length || errors.length) {
    const lock = JSON.parse(
      await (await realFetch(new URL("pyodide/pyodide-lock.json", site))).text(),
    ).packages;
    for (const name of missing.length ? missing : wanted) {
      const why = await diagnoseWheel(site, realFetch, lock, name);
      if (
        why.message.includes("integrity") ||
        why.message.includes("HTTP") ||
        missing.includes(name)
      ) {
        throw new BootFailure(
          "wheel-refused",
          `${why.message}. The host refuses to start with it.`,
          why.file,
        );
      }
    }
    throw new BootFailure("wheel-refused", `Installing packages failed: ${errors.join("; ")}`);
  }
  try {
    const files = await bytecode;
    if (files) {
      const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
      writeEntries(pyodide.FS, sitePackages, files);
      pyodide.runPython("import importlib; importlib.invalidate_caches()");
    }
  } catch (err) {
    throw new BootFailure(
      "wheel-refused",
      `${BYTECODE}: ${err.message}. The host refuses to start with it.`,
      BYTECODE,
    );
  }
  booted = true;
  report({ stage: "host", loaded: total, total });
  return { pyodide, manifest, restored, kept: restored && seen.kept === true };
}

/** Hold the Web Lock `name` for this worker's life; resolves false if another holds it. */
export function holdLock(name) {
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    navigator.locks.request(name, { ifAvailable: true }, (lock) => {
      resolve(lock !== null);
      return lock ? new Promise(() => {}) : undefined;
    });
  });
}
