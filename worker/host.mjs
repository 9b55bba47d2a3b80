// The host worker (E1 placement, SPEC §1–§3): boots Pyodide from this site, installs the
// pinned wheels with integrity checks, starts the Python host and relays page messages to it.
// Thin glue: every decision about a request is made in Python (core/host/pipeline.py).
//
// Page → worker: {kind: "page", id}     the id of the page that started this worker, whose
//                                        lock `voicebox-page-<id>` it holds for its life
//                {kind: "call", id, text, body?: ArrayBuffer, attachment?, stream?, sink?}
//                                        one request; `stream: true` (issue 34, a streamed
//                                        download): its chunks come as ArrayBuffers, never
//                                        Blobs, and it may be dropped; with `sink` (a
//                                        MessagePort whose other end the site's service
//                                        worker holds, page/download.mjs; round 42) they go
//                                        on `sink`, transferred, never to the page — then
//                                        {end: true} on it when the answer is ok, else
//                                        {end: false} — and the page gets only their sizes
//                {kind: "drop", id}      the streamed call `id` is no longer wanted (its
//                                        download was cancelled): no more chunks are posted,
//                                        the export's reading stops before its next file and
//                                        the call is answered (a refusal) as any other
//                {kind: "watch", lock}   hold the Web Lock `lock` (voicebox-alive-…) for this
//                                        worker's life: the page learns of its death by it
//                {kind: "ping", n}       answered {kind: "pong", n} at once: the page learns
//                                        of a hang by its absence
//                {kind: "follower"} + port  another tab's port, brokered by worker/broker.mjs
//                                        (issue 33 item 2): that tab speaks this same protocol
//                                        on it — calls, pings — and gets its answers, chunks
//                                        and every event there; {kind: "ready", versions,
//                                        leader} is posted on it once this host answers
//                                        ({kind: "tab", page} on it: that tab's page id,
//                                        whose lock `voicebox-page-<id>` it holds for its
//                                        life — this worker queues for it and is granted it
//                                        when the tab is gone, closed or crashed;
//                                        {kind: "leave"}: that tab is going)
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
//                                                      (data: an ArrayBuffer or a Blob); a
//                                                      call with a sink: {kind: "chunk", id,
//                                                      bytes} (the size sent on the sink)
//                {kind: "head", id, filename, bytes}  a streamed call's archive: the name it
//                                                      is saved under and its files' bytes,
//                                                      before its first chunk (round 42)
//                {kind: "answer", id, text, body?, attachment?}  exactly one per call; `id`
//                                                      is the call's own (transport) id
//                {kind: "broken", id, message}         a call could not be answered: the page
//                                                      restarts this worker
//                {kind: "event", text}                 something the page shows changed, unasked
//                                                      (JSON: core/custody/remote.py
//                                                      RemoteChanged; issue 29 item 15; a
//                                                      file written: FileChanged, issue 33),
//                                                      posted to this page and every follower
//
// One host owns the storage (SPEC §3): the Web Lock `voicebox-host`, held for this worker's
// life. A second tab does not fail: it waits in the lock's queue (standby) and takes over
// the moment the first tab's worker is gone (docs/security.md, "Two tabs"). The holder also
// holds `voicebox-host-page-<page id>`, so that a worker finding the lock held can tell whose
// it is: a host whose page is gone (a reload: the old worker ended, but the browser has not
// let its lock go yet) or is this worker's own page (a restart) is waited for up to
// GRACE_MS before standby; a host whose page is alive — another tab — means standby within
// about PAGE_RECHECK_MS (a reloaded page's lock may be let go a moment after it is gone).

import { BootFailure, bootPython } from "./boot.mjs";
import { installEgressGuard } from "./egress-guard.mjs";
import { Database } from "./idb.mjs";
import * as bytePath from "./byte-path.mjs";
import * as io from "./opfs-io.mjs";
import * as remoteIo from "./remote-io.mjs";
import { AuditKey, Sealer } from "./sealed.mjs";

const SITE = new URL("../", import.meta.url);
const LOCK_NAME = "voicebox-host";
const PAGE_LOCK_PREFIX = "voicebox-page-"; // held by each page (page/host-client.mjs)
const HOST_PAGE_PREFIX = "voicebox-host-page-"; // held beside LOCK_NAME: whose page started it
/** How long a lock held by a host whose page is gone, or is ours, is waited for (ms). */
const GRACE_MS = 5_000;
/** A holder's page seen alive is looked at again after this, twice, before standby (ms). */
const PAGE_RECHECK_MS = 250;
/** How long the page's id is waited for when the lock is held (it is posted at spawn). */
const PAGE_ID_WAIT_MS = 1_000;
const ALIVE_PREFIX = "voicebox-alive-";
const PEER_SCRIPT = new URL("peer.mjs", import.meta.url);
const guard = installEgressGuard({
  site: SITE,
  workers: [PEER_SCRIPT, bytePath.LANE_SCRIPT, io.WRITER_SCRIPT],
});

let bridge = null; // answers calls: Python's standby answerer, then the host
let pageGiven; // resolves the id of the page that started this worker, once it has said it
const pageId = new Promise((resolve) => {
  pageGiven = resolve;
});
let bounds = null; // {message_units, body_bytes}: the sizes Python checks, asked once
const pending = [];
/** Other tabs' ports (issue 33 item 2): each speaks the page's protocol to this host. */
const followers = new Set();
/** The Python runtime frame connected last (issue 33 item 2): the side whose tab holds it
 * (a follower's port; null: this page) and its number (core PythonConnected.frame). */
let frame = null;
let hello = null; // the {kind: "ready"} a follower gets once this host answers

function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

/** The streamed calls in progress (issue 34): side (null: this page; a follower's port) →
 * call id → its AbortController, aborted by {kind: "drop", id} from that side. */
const streams = new Map();

/** Take a call, a ping or a drop from `reply`'s side (this page: `post`, `side` null; a
 * follower: its port, `side` that port). */
function take(data, reply, side = null) {
  if (data.kind === "ping") reply({ kind: "pong", n: data.n });
  else if (data.kind === "drop" && typeof data.id === "string") {
    streams.get(side)?.get(data.id)?.abort();
  } else if (data.kind === "call" && typeof data.id === "string") {
    const text = typeof data.text === "string" ? data.text : "";
    if (data.attachment instanceof MessagePort && opOf(text) === "python.connect")
      reply = runtimeTaken(reply, side);
    let dropped = null;
    let sink = null;
    if (data.stream === true) {
      dropped = new AbortController();
      if (!streams.has(side)) streams.set(side, new Map());
      streams.get(side).set(data.id, dropped);
      if (data.sink instanceof MessagePort) sink = data.sink;
      const answerOnce = reply;
      reply = (message, transfer = []) => {
        if (message.kind === "answer" || message.kind === "broken") {
          streams.get(side)?.delete(data.id);
          if (streams.get(side)?.size === 0) streams.delete(side);
          // the sink's stream ends before the page hears the answer: the last byte is there
          const ok = message.kind === "answer" && parsed(message.text)?.ok === true;
          sink?.postMessage(ok && !dropped.signal.aborted ? { end: true } : { end: false });
          sink?.close();
        }
        answerOnce(message, transfer);
      };
    } else data.sink?.close?.();
    const call = { ...data, text, reply, dropped, sink };
    if (bridge) relay(bridge, call);
    else pending.push(call);
  }
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const opOf = (text) => parsed(text)?.op ?? null;

/** The person's Python runtime is one frame per host, in the tab that last connected it
 * (issue 33 item 2). When `side`'s `python.connect` is answered ok, every other tab is told
 * `python.frame-taken`: its page drops its frame and connects it again before its next Run,
 * so no tab's Run ever goes to a frame another tab took — or one whose tab has closed. */
function runtimeTaken(reply, side) {
  return (message, transfer = []) => {
    reply(message, transfer);
    const answer = message.kind === "answer" ? parsed(message.text) : null;
    if (answer?.ok !== true || answer.result?.connected !== true) return;
    frame = { side, n: answer.result?.frame };
    if (side !== null && !followers.has(side)) frameGone(side); // its tab went meanwhile
    const taken = { kind: "event", text: JSON.stringify({ type: "python.frame-taken" }) };
    if (side !== null) post(taken);
    for (const port of followers) if (port !== side) port.postMessage(taken);
  };
}

/** A follower tab's port: the same protocol as this page's, answered on the port. A call
 * from it meets the same pipeline, gates and gesture rule as this page's (docs/security.md,
 * "Every tab a workspace"). Only the host that owns the storage takes followers: a standby
 * worker's page never says "lead" to the broker. */
function follow(port) {
  followers.add(port);
  const reply = (message, transfer = []) => port.postMessage(message, transfer);
  port.onmessage = (event) => {
    const data = event.data;
    if (!data || typeof data !== "object") return;
    if (data.kind === "leave") left(port);
    else if (data.kind === "tab") watchTab(port, data.page);
    else take(data, reply, port);
  };
  if (hello) reply(hello);
}

/** Learn that a follower's tab is gone — closed, crashed, discarded — by its page's lock: a
 * port says nothing when the tab at its other end dies, but the lock that page holds for its
 * life is granted to this queued request then (issue 33 item 2). Let go at once; the host
 * forgets the unsaved text that tab said it held. */
function watchTab(port, page) {
  if (typeof page !== "string" || !/^[0-9a-f-]{36}$/.test(page) || !navigator.locks) return;
  navigator.locks.request(PAGE_LOCK_PREFIX + page, () => {
    left(port);
    bridge?.page_gone?.(page); // the unsaved text it said it held (core/host/unsaved_tabs.py)
  });
}

/** A follower's tab is gone: its port is dropped, its streamed downloads are dropped (issue
 * 34), and the Python runtime frame it holds, if it holds the one connected, is released — a
 * run going there ends stopped at once (core/host/python_ops.py release_frame). */
function left(port) {
  if (!followers.delete(port)) return;
  port.close();
  for (const dropped of streams.get(port)?.values() ?? []) dropped.abort();
  frameGone(port);
}

function frameGone(side) {
  if (frame?.side !== side || typeof frame.n !== "number") return;
  const n = frame.n;
  frame = null;
  bridge?.frame_gone?.(n);
}

/** Something every tab shows changed: to this page and every follower. */
function broadcast(message) {
  post(message);
  for (const port of followers) port.postMessage(message);
}

self.onmessage = (event) => {
  const data = event.data;
  if (!data || typeof data !== "object") return;
  if (data.kind === "page" && typeof data.id === "string" && /^[0-9a-f-]{36}$/.test(data.id))
    pageGiven(data.id);
  else if (data.kind === "watch") watch(data.lock);
  else if (data.kind === "follower" && event.ports[0]) follow(event.ports[0]);
  else take(data, post);
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
  return whole && view.buffer instanceof ArrayBuffer
    ? view.buffer
    : view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
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
  if (bytes && bytes.byteLength > bounds.body_bytes)
    return { part: "body", size: bytes.byteLength };
  return null;
}

/**
 * The answer of one call: the host runs it eagerly (`handle_now`, browser_host/main.py) and
 * gives the answer at once when the call never had to wait (a cached read: no turn of the
 * event loop), else its task, awaited here. Python's standby answerer has only `handle`.
 */
async function answered(answerer, text, bytes, attachment, emit) {
  if (typeof answerer.handle_now !== "function")
    return answerer.handle(text, bytes, attachment, emit);
  const got = answerer.handle_now(text, bytes, attachment, emit);
  if (Array.isArray(got)) return got;
  try {
    return await got;
  } finally {
    got.destroy?.();
  }
}

async function relay(
  answerer,
  { id, text, body, attachment, reply = post, dropped = null, sink = null },
) {
  try {
    const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : null;
    // A streaming answer's chunks go to the page as they come: bytes transferred, not copied;
    // a Blob (the byte path's, worker/byte-path.mjs) posted as it is, a reference. A streamed
    // call's (issue 34) are ArrayBuffers only, and none is posted once it was dropped; with a
    // sink (round 42) they go there, and the page is told only their size.
    const emit = (chunk) => {
      if (dropped?.signal.aborted) return;
      if (sink !== null && !(chunk instanceof Blob)) {
        const buffer = owned(chunk);
        const bytes = buffer.byteLength;
        sink.postMessage(buffer, [buffer]);
        reply({ kind: "chunk", id, bytes });
      } else if (chunk instanceof Blob) reply({ kind: "chunk", id, data: chunk });
      else {
        const buffer = owned(chunk);
        reply({ kind: "chunk", id, data: buffer }, [buffer]);
      }
    };
    if (dropped !== null) {
      // read by the byte path (worker/byte-path.mjs, streamOf) when Python hands it this emit
      emit.streamed = true;
      emit.signal = dropped.signal;
      // the archive's name and its files' bytes, said by Python before the first byte
      // (browser_host/byte_path.py WorkerSink.announce): the download opens under it
      emit.head = (filename, bytes) =>
        reply({ kind: "head", id, filename: String(filename), bytes: Number(bytes) });
    }
    const over = overBound(answerer, text, bytes);
    const [answer, out, handed] = over
      ? await answerer.refuse(over.part, over.size, over.part === "body" ? text : undefined)
      : await answered(answerer, text, bytes ?? undefined, attachment ?? undefined, emit);
    const buffer = out ? owned(out) : null;
    reply(
      { kind: "answer", id, text: answer, body: buffer, attachment: handed ?? null },
      buffer ? [buffer] : [],
    );
  } catch (err) {
    // Python answers every message, so this is a fault of the glue itself: say so, and the
    // page restarts this worker (every call in flight is answered host-restarted).
    post({
      kind: "broken",
      id,
      message: String(err?.message ?? err)
        .split("\n")
        .slice(-2)
        .join(" "),
    });
  }
}

/** `promise`'s value if it settles within `ms`, else `fallback`. */
function within(promise, ms, fallback) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether the storage lock, found held, is worth waiting for: its holder's page is gone (a
 * reload or a closed tab whose worker the browser has not ended yet) or is this worker's own
 * (a restart), or the holder names no page (a build before this one, or a holder that has not
 * said it yet). False only for a holder whose page is alive and another — another tab — seen
 * so three times, PAGE_RECHECK_MS apart.
 */
async function worthWaiting() {
  const mine = await within(pageId, PAGE_ID_WAIT_MS, null);
  for (let look = 0; look < 3; look++) {
    if (look) await new Promise((resolve) => setTimeout(resolve, PAGE_RECHECK_MS));
    const held = ((await navigator.locks.query()).held ?? []).map((l) => l.name);
    const holders = held
      .filter((n) => n.startsWith(HOST_PAGE_PREFIX))
      .map((n) => n.slice(HOST_PAGE_PREFIX.length));
    const alive = new Set(
      held
        .filter((n) => n.startsWith(PAGE_LOCK_PREFIX))
        .map((n) => n.slice(PAGE_LOCK_PREFIX.length)),
    );
    if (holders.length === 0 || holders.some((id) => id === mine || !alive.has(id))) return true;
  }
  return false;
}

/**
 * Claim the storage lock: `owned` resolves true when this worker holds it — at once, or within
 * GRACE_MS when its holder was worth waiting for (above) — and false when another tab's host
 * holds it (standby); `granted` when this worker holds it — at once, or when the tab holding it
 * closes. Held until this worker ends, with its page's `voicebox-host-page-<id>` beside it.
 */
function claimStorage(name) {
  if (!navigator.locks) return { owned: Promise.resolve(true), granted: Promise.resolve() };
  let grant;
  const granted = new Promise((resolve) => {
    grant = resolve;
  });
  const hold = () => {
    grant();
    pageId.then((id) =>
      navigator.locks.request(HOST_PAGE_PREFIX + id, () => new Promise(() => {})),
    );
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
    if (!(await worthWaiting())) return false;
    return within(
      granted.then(() => true),
      GRACE_MS,
      false,
    );
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
  });
  python.catch(() => {}); // awaited below, after the standby decision
  const owned = await storage.owned;
  let grantedNow = false;
  if (!owned) {
    post({ kind: "standby" });
    // said the moment the lock comes, Python loaded or not: a follower page sends its calls
    // here from then on, and they wait in `pending` for this host (issue 33 item 2)
    storage.granted.then(() => {
      grantedNow = true;
      bridge = null;
      post({ kind: "boot", stage: "takeover", loaded: 0, total: 0 });
    });
  }
  const { pyodide, manifest, restored, kept } = await python;
  pyodide.registerJsModule("voicebox_io", io);
  pyodide.registerJsModule("voicebox_bytes", bytePath); // browser_host/byte_path.py
  pyodide.registerJsModule("voicebox_remote", remoteIo); // browser_host/remote.py
  // A fatal error inside Python (a Wasm trap, a stack overflow) leaves this worker running but
  // Python unusable, and the call that caused it unanswered: say so, and the page restarts it.
  if (pyodide._api) {
    pyodide._api.on_fatal = (err) =>
      post({
        kind: "broken",
        id: null,
        message: `Python failed fatally: ${String(err?.message ?? err).slice(0, 200)}`,
      });
  }
  if (!owned) {
    if (!grantedNow) {
      bridge = pyodide.pyimport("browser_host.standby").StandbyBridge();
      flush();
    }
    await storage.granted; // calls from here wait for the host
  }
  const started = performance.now();
  const db = new Database("voicebox-host");
  // The storage this host opens first is asked for now, while the host's import below holds
  // the thread (issue 34, cold boot): a fresh profile's IndexedDB is created and its OPFS root
  // made in the browser meanwhile, so `main.start` finds them ready instead of waiting for
  // each in turn. Nothing is read or written here; a failure is met again, and said, in start.
  db.open().catch(() => {});
  navigator.storage?.getDirectory?.().catch(() => {});
  // the host's import, its typing forward references compiled when evaluated, not when made
  // (issue 34, cold boot: browser_host/boot_import.py)
  const main = pyodide.pyimport("browser_host.boot_import").import_host();
  const event = (text) => broadcast({ kind: "event", text: String(text) });
  const host = await main.start(
    db,
    new Sealer(db),
    new AuditKey(db),
    PEER_SCRIPT.href,
    guard,
    event,
  );
  const versions = JSON.parse(host.versions());
  versions.build = manifest.build;
  versions.python_start = restored ? "snapshot" : "plain"; // worker/snapshot.mjs
  if (restored) versions.python_snapshot = kept ? "kept" : "fetched"; // inflated copy or the pinned file
  post({
    kind: "ready",
    versions,
    tookOver: !owned,
    startMs: Math.round(performance.now() - started),
  });
  bridge = host;
  hello = { kind: "ready", versions, leader: await within(pageId, PAGE_ID_WAIT_MS, null) };
  for (const port of followers) port.postMessage(hello);
  // the late modules' import and the mailboxes' warm-up, in the background (their first steps
  // run on later turns): started before the queued calls are relayed, so a queued call for a
  // late operation waits for that one import (browser_host/main.py, HostBridge.after_ready)
  host.after_ready(() => post({ kind: "settled" }));
  flush();
}

boot().catch((err) => {
  if (err instanceof BootFailure)
    post({ kind: "fatal", code: err.code, message: err.message, file: err.file });
  else
    post({
      kind: "fatal",
      code: "boot-failed",
      message: `The host failed to start: ${String(err.message ?? err)
        .split("\n")
        .slice(-2)
        .join(" ")}`,
      file: null,
    });
});
