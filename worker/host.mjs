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

import { BootFailure, bootPython, holdLock } from "./boot.mjs";
import { Database } from "./idb.mjs";
import { Sealer } from "./sealed.mjs";

const SITE = new URL("../", import.meta.url);
const LOCK_NAME = "voicebox-host";

let bridge = null;
const pending = [];

function post(message, transfer = []) {
  self.postMessage(message, transfer);
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

async function boot() {
  post({ kind: "boot", stage: "lock", loaded: 0, total: 0 });
  if (!(await holdLock(LOCK_NAME))) {
    post({ kind: "fatal", code: "host-active-elsewhere", message: "The host is already running in another tab of this site; close it to use this one.", file: null });
    return;
  }
  const { pyodide, manifest } = await bootPython({ site: SITE, report: (p) => post({ kind: "boot", ...p }) });
  const db = new Database("voicebox-host");
  const main = pyodide.pyimport("browser_host.main");
  bridge = await main.start(db, new Sealer(db), new URL("peer.mjs", import.meta.url).href);
  const versions = JSON.parse(bridge.versions());
  versions.build = manifest.build;
  post({ kind: "ready", versions });
  for (const call of pending.splice(0)) relay(call);
}

boot().catch((err) => {
  if (err instanceof BootFailure) post({ kind: "fatal", code: err.code, message: err.message, file: err.file });
  else post({ kind: "fatal", code: "boot-failed", message: `The host failed to start: ${String(err.message ?? err).split("\n").slice(-2).join(" ")}`, file: null });
});
