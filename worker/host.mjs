// The host worker (E1 placement, SPEC §1–§2): boots Pyodide from this site, installs the
// pinned wheels with integrity checks, starts the Python host and relays page messages to it.
// Thin glue: every decision about a request is made in Python (core/host/dispatcher.py).
//
// Page → worker: {kind: "call", id, text, body?: ArrayBuffer, attachment?: FileSystemDirectoryHandle}
// Worker → page: {kind: "boot", stage, loaded, total}  progress while booting
//                {kind: "ready", versions}             the host answers calls from now on
//                {kind: "fatal", code, message, file?}  boot failed; nothing will answer
//                {kind: "chunk", id, data}             streaming answers, before their answer
//                {kind: "answer", text, body?, attachment?}  exactly one per call

import { installFetchGuard } from "./fetch-guard.mjs";
import * as idb from "./idb.mjs";

const SITE = new URL("../", import.meta.url);
const PYODIDE_TIMEOUT_MS = 90_000;
const LOCK_NAME = "voicebox-host";

let bridge = null;
const pending = [];

function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

function fatal(code, message, file = null) {
  post({ kind: "fatal", code, message, file });
}

self.onmessage = (event) => {
  const data = event.data;
  if (!data || data.kind !== "call" || typeof data.text !== "string") return;
  if (bridge) relay(data);
  else pending.push(data);
};

async function relay({ id, text, body, attachment }) {
  const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : null;
  // A streaming answer's chunks go to the page as they come (transferred, not copied).
  const emit = (chunk) => {
    const buffer = chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength);
    post({ kind: "chunk", id, data: buffer }, [buffer]);
  };
  const [answer, out, handed] = await bridge.handle(text, bytes ?? undefined, attachment ?? undefined, emit);
  const buffer = out ? out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) : null;
  post({ kind: "answer", text: answer, body: buffer, attachment: handed ?? null }, buffer ? [buffer] : []);
}

function holdStorageLock() {
  // One host owns the storage at a time (SPEC §3). The lock is held for the worker's life.
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    navigator.locks.request(LOCK_NAME, { ifAvailable: true }, (lock) => {
      resolve(lock !== null);
      return lock ? new Promise(() => {}) : undefined;
    });
  });
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function sha256Hex(buffer) {
  const digest = await crypto.subtle.digest("SHA-256", buffer);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// loadPackage never rejects (PLATFORM.md): find which wheel failed and why, by name.
async function diagnoseWheel(realFetch, lockPackages, name) {
  const entry = lockPackages[name];
  if (!entry) return { file: name, message: `package ${name} is not in the site's lock file` };
  const url = new URL(`pyodide/${entry.file_name}`, SITE);
  try {
    const response = await realFetch(url, { cache: "no-store" });
    if (!response.ok) return { file: entry.file_name, message: `HTTP ${response.status} fetching ${entry.file_name}` };
    const actual = await sha256Hex(await response.arrayBuffer());
    if (actual !== entry.sha256) {
      return {
        file: entry.file_name,
        message: `${entry.file_name} failed its integrity check: its sha256 is ${actual}, the lock pins ${entry.sha256}`,
      };
    }
    return { file: entry.file_name, message: `${entry.file_name} could not be installed` };
  } catch (err) {
    return { file: entry.file_name, message: `${entry.file_name} could not be fetched: ${err.message}` };
  }
}

async function boot() {
  post({ kind: "boot", stage: "lock", loaded: 0, total: 0 });
  if (!(await holdStorageLock())) {
    fatal("host-active-elsewhere", "The host is already running in another tab of this site; close it to use this one.");
    return;
  }
  const manifestResponse = await fetch(new URL("site-manifest.json", SITE), { cache: "no-cache" });
  if (!manifestResponse.ok) {
    fatal("boot-failed", `site-manifest.json: HTTP ${manifestResponse.status}`, "site-manifest.json");
    return;
  }
  const manifest = await manifestResponse.json();
  const sizes = new Map(manifest.files.map((f) => [new URL(f.path, SITE).href, f.size]));
  const counted = ["pyodide/pyodide.asm.wasm", "pyodide/python_stdlib.zip", "pyodide/pyodide-lock.json"];
  const lockNames = manifest.files.filter((f) => f.path.startsWith("pyodide/") && f.path.endsWith(".whl"));
  const total = [...counted.map((p) => sizes.get(new URL(p, SITE).href) ?? 0), ...lockNames.map((f) => f.size)]
    .reduce((a, b) => a + b, 0);
  let loaded = 0;
  let stage = "runtime";
  let lastPost = 0;
  const realFetch = installFetchGuard(SITE.origin, (_url, n) => {
    loaded += n;
    const now = Date.now();
    if (now - lastPost > 50) {
      lastPost = now;
      post({ kind: "boot", stage, loaded, total });
    }
  });

  post({ kind: "boot", stage, loaded, total });
  let pyodide;
  try {
    const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", SITE).href);
    pyodide = await withTimeout(
      loadPyodide({
        indexURL: new URL("pyodide/", SITE).href,
        lockFileURL: new URL("pyodide/pyodide-lock.json", SITE).href,
        stdout: (line) => console.log(line),
        stderr: (line) => console.warn(line),
      }),
      PYODIDE_TIMEOUT_MS,
      "Loading pyodide.asm.wasm",
    );
  } catch (err) {
    fatal("boot-failed", `Python runtime failed to load: ${err.message}`, "pyodide/pyodide.asm.wasm");
    return;
  }

  stage = "packages";
  post({ kind: "boot", stage, loaded, total });
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
    const lock = JSON.parse(await (await realFetch(new URL("pyodide/pyodide-lock.json", SITE))).text()).packages;
    const suspects = missing.length ? missing : wanted;
    for (const name of suspects) {
      const why = await diagnoseWheel(realFetch, lock, name);
      if (why.message.includes("integrity") || why.message.includes("HTTP") || missing.includes(name)) {
        fatal("wheel-refused", `${why.message}. The host refuses to start with it.`, why.file);
        return;
      }
    }
    fatal("wheel-refused", `Installing packages failed: ${errors.join("; ")}`, null);
    return;
  }

  stage = "host";
  post({ kind: "boot", stage, loaded: total, total });
  try {
    const main = pyodide.pyimport("browser_host.main");
    bridge = await main.start(idb);
    const versions = JSON.parse(bridge.versions());
    versions.build = manifest.build;
    post({ kind: "ready", versions });
  } catch (err) {
    fatal("boot-failed", `The host failed to start: ${String(err.message ?? err).split("\n").slice(-2).join(" ")}`, null);
    return;
  }
  for (const call of pending.splice(0)) relay(call);
}

boot().catch((err) => fatal("boot-failed", `Boot failed: ${err.message}`, null));
