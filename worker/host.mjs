// The host worker (E1 placement, SPEC §1–§3): boots Pyodide from this site, installs the
// pinned wheels with integrity checks, starts the Python host and relays page messages to it.
// Thin glue: every decision about a request is made in Python (core/host/pipeline.py).
//
// Page → worker: {kind: "tab", id}      this tab's id (page/host-client.mjs, kept in the tab's
//                                        sessionStorage): tells a reload's predecessor apart
//                {kind: "call", id, text, body?: ArrayBuffer, attachment?}  one request
//                {kind: "watch", lock}   hold the Web Lock `lock` (voicebox-alive-…) for this
//                                        worker's life: the page learns of its death by it
//                {kind: "ping", n}       answered {kind: "pong", n} at once: the page learns
//                                        of a hang by its absence
// Worker → page: {kind: "boot", stage, loaded, total}  progress while booting
//                {kind: "standby"}                     another tab's host owns the storage:
//                                                      every call is answered
//                                                      host-active-elsewhere (by Python) until
//                                                      that tab closes; then boot stage
//                                                      "takeover" and ready
//                {kind: "ready", versions, tookOver, startMs}  the host answers calls now
//                {kind: "settled"}                     the late modules are imported (issue 18:
//                                                      they are imported right after ready;
//                                                      a call needing one waits for them)
//                {kind: "fatal", code, message, file?}  boot failed; nothing will answer
//                {kind: "watching", lock} / {kind: "pong", n}
//                {kind: "chunk", id, data}             streaming answers, before their answer
//                                                      (data: an ArrayBuffer or a Blob)
//                {kind: "answer", id, text, body?, attachment?}  exactly one per call; `id`
//                                                      is the call's own (transport) id
//                {kind: "broken", id, message}         a call could not be answered: the page
//                                                      restarts this worker
//
// One host owns the storage (SPEC §3): the Web Lock `voicebox-host`, held for this worker's
// life. A second tab does not fail: it waits in the lock's queue (standby) and takes over
// the moment the first tab's worker is gone (docs/security.md, "Two tabs"). The holder also
// holds `voicebox-host-tab-<tab id>`, so that a worker finding the lock held can tell whose it
// is: this tab's own previous worker (a reload, a restart — ended, but the browser has not
// let its lock go yet) is waited for up to SAME_TAB_GRACE_MS before this one says standby;
// another tab's host means standby at once.

import { BootFailure, bootPython } from "./boot.mjs";
import { installEgressGuard } from "./egress-guard.mjs";
import { Database } from "./idb.mjs";
import * as bytePath from "./byte-path.mjs";
import * as io from "./opfs-io.mjs";
import { AuditKey, Sealer } from "./sealed.mjs";
import { markSnapshotPending } from "./snapshot.mjs";

const SITE = new URL("../", import.meta.url);
const LOCK_NAME = "voicebox-host";
const TAB_LOCK_PREFIX = "voicebox-host-tab-";
/** How long a lock held by this tab's own previous worker is waited for before standby (ms). */
const SAME_TAB_GRACE_MS = 5_000;
/** How long the page's tab id is waited for when the lock is held (it is posted at spawn). */
const TAB_ID_WAIT_MS = 1_000;
const ALIVE_PREFIX = "voicebox-alive-";
const PEER_SCRIPT = new URL("peer.mjs", import.meta.url);
const SNAPSHOT_MAKER = new URL("snapshot-maker.mjs", import.meta.url);
const guard = installEgressGuard({ site: SITE, workers: [PEER_SCRIPT, SNAPSHOT_MAKER] });

let bridge = null; // answers calls: Python's standby answerer, then the host
let tabGiven; // resolves this tab's id, once the page has said it
const tabId = new Promise((resolve) => { tabGiven = resolve; });
let bounds = null; // {message_units, body_bytes}: the sizes Python checks, asked once
const pending = [];

function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

self.onmessage = (event) => {
  const data = event.data;
  if (!data || typeof data !== "object") return;
  if (data.kind === "ping") post({ kind: "pong", n: data.n });
  else if (data.kind === "tab" && typeof data.id === "string" && /^[0-9a-f-]{36}$/.test(data.id)) tabGiven(data.id);
  else if (data.kind === "watch") watch(data.lock);
  else if (data.kind === "call" && typeof data.id === "string") {
    const call = { ...data, text: typeof data.text === "string" ? data.text : "" };
    if (bridge) relay(bridge, call);
    else pending.push(call);
  }
};

function flush() {
  for (const call of pending.splice(0)) relay(bridge, call);
}

/** Hold `lock` until this worker ends, so the page's queued request for it is granted then. */
function watch(lock) {
  if (typeof lock !== "string" || !lock.startsWith(ALIVE_PREFIX) || !navigator.locks) return;
  navigator.locks.request(lock, () => {
    post({ kind: "watching", lock });
    return new Promise(() => {});
  });
}

/** An ArrayBuffer holding exactly `view`'s bytes that may be transferred: its own buffer when
 * the view spans all of it (a fresh copy out of Python), else a copy of the span. */
function owned(view) {
  const whole = view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;
  return whole && view.buffer instanceof ArrayBuffer ? view.buffer : view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
}

/**
 * The part of a call over the bounds Python gave (core/protocol.py INBOUND_BOUNDS), or null.
 * Lengths only, before anything is converted into the Wasm heap: a text of more UTF-16 units
 * than the byte bound is certainly over it (each unit is at least one UTF-8 byte); Python
 * checks exactly what passes, and builds the refusal for what does not.
 */
function overBound(answerer, text, bytes) {
  bounds ??= answerer.bounds();
  if (text.length > bounds.message_units) return { part: "message", size: text.length };
  if (bytes && bytes.byteLength > bounds.body_bytes) return { part: "body", size: bytes.byteLength };
  return null;
}

/**
 * The answer of one call: the host runs it eagerly (`handle_now`, browser_host/main.py) and
 * gives the answer at once when the call never had to wait (a cached read: no turn of the
 * event loop), else its task, awaited here. Python's standby answerer has only `handle`.
 */
async function answered(answerer, text, bytes, attachment, emit) {
  if (typeof answerer.handle_now !== "function") return answerer.handle(text, bytes, attachment, emit);
  const got = answerer.handle_now(text, bytes, attachment, emit);
  if (Array.isArray(got)) return got;
  try {
    return await got;
  } finally {
    got.destroy?.();
  }
}

async function relay(answerer, { id, text, body, attachment }) {
  try {
    const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : null;
    // A streaming answer's chunks go to the page as they come: bytes transferred, not copied;
    // a Blob (the byte path's, worker/byte-path.mjs) posted as it is, a reference.
    const emit = (chunk) => {
      if (chunk instanceof Blob) post({ kind: "chunk", id, data: chunk });
      else {
        const buffer = owned(chunk);
        post({ kind: "chunk", id, data: buffer }, [buffer]);
      }
    };
    const over = overBound(answerer, text, bytes);
    const [answer, out, handed] = over
      ? await answerer.refuse(over.part, over.size, over.part === "body" ? text : undefined)
      : await answered(answerer, text, bytes ?? undefined, attachment ?? undefined, emit);
    const buffer = out ? owned(out) : null;
    post({ kind: "answer", id, text: answer, body: buffer, attachment: handed ?? null }, buffer ? [buffer] : []);
  } catch (err) {
    // Python answers every message, so this is a fault of the glue itself: say so, and the
    // page restarts this worker (every call in flight is answered host-restarted).
    post({ kind: "broken", id, message: String(err?.message ?? err).split("\n").slice(-2).join(" ") });
  }
}

/** `promise`'s value if it settles within `ms`, else `fallback`. */
function within(promise, ms, fallback) {
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(fallback), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether the storage lock, found held, is held by this tab's own previous host worker (a
 * reload or a restart: the browser lets a worker's locks go a moment after it ended) — true
 * also when the holder names no tab (a build before this one, or a holder that has not said
 * its tab yet), so only a lock known to be another tab's means standby at once.
 */
async function heldByThisTab() {
  const [mine, state] = await Promise.all([within(tabId, TAB_ID_WAIT_MS, null), navigator.locks.query()]);
  const tabs = (state.held ?? []).filter((l) => l.name.startsWith(TAB_LOCK_PREFIX)).map((l) => l.name.slice(TAB_LOCK_PREFIX.length));
  return tabs.length === 0 || (mine !== null && tabs.includes(mine));
}

/**
 * Claim the storage lock: `owned` resolves true when this worker holds it — at once, or within
 * SAME_TAB_GRACE_MS when it was held by this tab's own previous worker — and false when another
 * tab's host holds it (standby); `granted` when this worker holds it — at once, or when the tab
 * holding it closes. Held until this worker ends, with this tab's own lock beside it (above).
 */
function claimStorage(name) {
  if (!navigator.locks) return { owned: Promise.resolve(true), granted: Promise.resolve() };
  let grant;
  const granted = new Promise((resolve) => { grant = resolve; });
  const hold = () => {
    grant();
    tabId.then((id) => navigator.locks.request(TAB_LOCK_PREFIX + id, () => new Promise(() => {})));
    return new Promise(() => {});
  };
  const now = new Promise((resolve) => {
    navigator.locks.request(name, { ifAvailable: true }, (lock) => {
      resolve(lock !== null);
      if (lock) return hold();
      navigator.locks.request(name, hold); // queued: granted when the holder lets go
      return undefined;
    });
  });
  const owned = now.then(async (held) => {
    if (held) return true;
    if (!(await heldByThisTab())) return false;
    return within(granted.then(() => true), SAME_TAB_GRACE_MS, false);
  });
  return { owned, granted };
}

async function boot() {
  post({ kind: "boot", stage: "lock", loaded: 0, total: 0 });
  const storage = claimStorage(LOCK_NAME);
  // Python starts while the lock is decided: nothing before `main.start` touches the storage
  const python = bootPython({
    site: SITE,
    report: (p) => post({ kind: "boot", ...p }),
    deferSnapshot: true,
  });
  python.catch(() => {}); // awaited below, after the standby decision
  const owned = await storage.owned;
  if (!owned) post({ kind: "standby" });
  const { pyodide, manifest, snapshotWanted } = await python;
  pyodide.registerJsModule("voicebox_io", io);
  pyodide.registerJsModule("voicebox_bytes", bytePath); // browser_host/byte_path.py
  // A fatal error inside Python (a Wasm trap, a stack overflow) leaves this worker running but
  // Python unusable, and the call that caused it unanswered: say so, and the page restarts it.
  if (pyodide._api) {
    pyodide._api.on_fatal = (err) => post({ kind: "broken", id: null, message: `Python failed fatally: ${String(err?.message ?? err).slice(0, 200)}` });
  }
  if (!owned) {
    bridge = pyodide.pyimport("browser_host.standby").StandbyBridge();
    flush();
    await storage.granted;
    bridge = null; // calls from here wait for the host
    post({ kind: "boot", stage: "takeover", loaded: 0, total: 0 });
  }
  const started = performance.now();
  const db = new Database("voicebox-host");
  const main = pyodide.pyimport("browser_host.main");
  const host = await main.start(db, new Sealer(db), new AuditKey(db), PEER_SCRIPT.href, guard);
  const versions = JSON.parse(host.versions());
  versions.build = manifest.build;
  post({ kind: "ready", versions, tookOver: !owned, startMs: Math.round(performance.now() - started) });
  bridge = host;
  // the late modules' import and the mailboxes' warm-up, in the background (their first steps
  // run on later turns): started before the queued calls are relayed, so a queued call for a
  // late operation waits for that one import (browser_host/main.py, HostBridge.after_ready)
  host.after_ready(() => post({ kind: "settled" }));
  flush();
  afterReady({ build: manifest.build, snapshotWanted });
}

/**
 * The work that waits until the host is ready (issue 18, cold boot): each task starts once
 * `ready` is posted and the calls queued before it are relayed, and none can delay a call.
 * Add a task here rather than before `ready` (Python's own after-ready work — the late
 * modules, the mailboxes' warm-up — is started by `host.after_ready`, above).
 */
function afterReady({ build, snapshotWanted }) {
  const tasks = [];
  if (snapshotWanted) tasks.push(() => makeSnapshot(build));
  for (const task of tasks) {
    Promise.resolve().then(task).catch((err) => console.warn(`After ready: ${err?.message ?? err}`));
  }
}

/** This build's Python snapshot for the next boot, made by a worker of its own. */
async function makeSnapshot(build) {
  if (!(await markSnapshotPending(SITE, build))) return; // no Cache Storage: boots stay cold
  const maker = new Worker(SNAPSHOT_MAKER, { type: "module", name: "voicebox-snapshot" });
  maker.onmessage = (event) => {
    if (event.data?.kind !== "snapshot") return;
    if (!event.data.ok) console.warn(`No Python snapshot for the next boot: ${event.data.message ?? "not kept"}`);
    maker.terminate();
  };
  maker.onerror = () => maker.terminate();
  maker.postMessage({ kind: "make", build });
}

boot().catch((err) => {
  if (err instanceof BootFailure) post({ kind: "fatal", code: err.code, message: err.message, file: err.file });
  else post({ kind: "fatal", code: "boot-failed", message: `The host failed to start: ${String(err.message ?? err).split("\n").slice(-2).join(" ")}`, file: null });
});
