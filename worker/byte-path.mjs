// The export's byte path (docs/archives.md §4): files' bytes from OPFS to the page, hashed on the
// way, without entering the Wasm heap. Registered for Python as the module `voicebox_bytes`
// (worker/host.mjs); browser_host/byte_path.py calls relayFiles once per batch of files with a
// plan the export made (core/archive/export.py): for each file its path, its size when listed,
// the bytes to send before it (`lead`: headers) and after it (`after`: its data descriptor), and
// where in `after` to write the CRC-32 and size measured here (`fill`). Thin: what goes in the
// archive, in which order, and every byte around the files' data are decided in Python; the
// bounds come from Python too.
//
// Where the reading happens (issue 18, round five): in LANES reader lanes — dedicated workers
// this worker starts (worker/byte-lane.mjs), each reading, hashing and making the Blobs of the
// runs of consecutive files it is given, so that their synchronous handle closes, hashing and
// copies run beside each other and beside this thread (Python, the page's calls). The runs'
// Blobs are posted to the page in the archive's order. Where no lane can be started (a browser
// or a harness that serves no nested worker), the same reader (worker/byte-reader.mjs) runs
// here, in this worker.

import { ByteReader, LANE_PROTOCOL, plain } from "./byte-reader.mjs";
import { holdElsewhere, holdsInProgress } from "./opfs-io.mjs";

/** The reader lanes' script: the only worker this module starts (worker/host.mjs lists it in
 * the egress guard). */
export const LANE_SCRIPT = new URL("byte-lane.mjs", import.meta.url);
const LANES = 3; // reader lanes (each holds up to about 2 × the staging buffer: docs/archives.md §4)
const RUNS_PER_LANE = 2; // runs given to a lane at once (it opens files ahead across them)
const LANE_START_MS = 10_000; // a lane not started by then: this export is read here
const LANE_IDLE_MS = 60_000; // lanes idle this long are ended (their buffers freed)

const figures = { files: 0, bytes: 0, held: 0, peakHeld: 0 };
const here = new ByteReader(figures); // where no lane can be started
const lanePeaks = new Array(LANES).fill(0); // each lane slot's most held bytes, over its lives

let lanes = null; // a promise of the started lanes ([] when none can be), or null
let lanesFailed = false; // a lane failed to start once: every later export is read here
let idleTimer = null;
let exporting = 0; // relayFiles calls in progress
const live = new Set(); // lanes started and not ended (for the holds)
let nextExport = 1;
let nextHold = 1;

/** A lane: its worker, its runs in flight (seg → {resolve}), its holds and their answers. */
function startLane(slot) {
  const worker = new Worker(LANE_SCRIPT, { type: "module", name: "voicebox-byte-lane" });
  const lane = {
    worker,
    slot,
    runs: new Map(),
    holds: 0,
    held: new Map(),
    ready: false,
    dead: false,
  };
  live.add(lane);
  const started = new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), LANE_START_MS);
    lane.onStart = (ok) => {
      clearTimeout(timer);
      resolve(ok);
    };
  });
  worker.onmessage = (event) => {
    const data = event.data;
    if (data?.kind === "ready") {
      if (data.protocol !== LANE_PROTOCOL) {
        endLane(lane, "a reader lane of another build");
        return;
      }
      lane.ready = true;
      // a lane that starts during a change holds as many as are in progress, before any run
      for (let i = holdsInProgress(); i > 0; i--) {
        lane.holds += 1;
        worker.postMessage({ kind: "hold", h: 0 });
      }
      lane.onStart(true);
    } else if (data?.kind === "run") {
      const key = `${data.n}/${data.seg}`;
      const waiter = lane.runs.get(key);
      lane.runs.delete(key);
      if (data.ok) lanePeaks[slot] = Math.max(lanePeaks[slot], Number(data.peakHeld) || 0);
      waiter?.(data);
    } else if (data?.kind === "held") {
      lane.held.get(data.h)?.();
      lane.held.delete(data.h);
    }
  };
  worker.onerror = (event) => {
    event.preventDefault?.();
    endLane(lane, `a reader lane failed: ${event.message || "it could not be started"}`);
  };
  worker.onmessageerror = () => endLane(lane, "a reader lane's message could not be read");
  lane.started = started;
  return lane;
}

/** End `lane`: its runs in flight fail (AbortError), its holds are answered. */
function endLane(lane, why) {
  if (lane.dead) return;
  lane.dead = true;
  live.delete(lane);
  lane.worker.terminate();
  lane.onStart(false);
  for (const waiter of lane.runs.values()) waiter({ ok: false, name: "AbortError", message: why });
  lane.runs.clear();
  for (const answered of lane.held.values()) answered();
  lane.held.clear();
}

/** The started lanes, starting them on first use; [] where none can be started. */
async function readyLanes() {
  if (lanesFailed) return [];
  if (lanes === null) {
    const starting = Array.from({ length: LANES }, (_, slot) => startLane(slot));
    lanes = Promise.all(starting.map((lane) => lane.started)).then((ok) => {
      if (ok.every(Boolean)) return starting;
      for (const lane of starting) endLane(lane, "not started");
      lanesFailed = true;
      return [];
    });
  }
  const started = await lanes;
  if (started.some((lane) => lane.dead)) {
    // one ended (a failure): start them again
    for (const lane of started) endLane(lane, "restarted");
    lanes = null;
    return readyLanes();
  }
  return started;
}

function endIdleLanes() {
  idleTimer = null;
  if (exporting > 0 || lanes === null) return;
  const ending = lanes;
  lanes = null;
  ending.then((started) => {
    for (const lane of started) endLane(lane, "idle");
  });
}

// The lanes' handles are held with this worker's own (worker/opfs-io.mjs, holdHandles): a change
// the host makes waits until every lane has closed the handles it opened ahead and finished the
// file it is reading, and no lane opens a handle until the change is over.
// A lane still starting is given the holds in progress when it is ready (startLane).
holdElsewhere({
  hold() {
    const waits = [];
    for (const lane of live) {
      if (!lane.ready) continue;
      const h = nextHold++;
      lane.holds += 1;
      waits.push(new Promise((answered) => lane.held.set(h, answered)));
      lane.worker.postMessage({ kind: "hold", h });
    }
    return waits.length ? Promise.all(waits) : undefined;
  },
  release() {
    for (const lane of live) {
      if (lane.holds === 0) continue;
      lane.holds -= 1;
      lane.worker.postMessage({ kind: "release" });
    }
  },
});

/** `item` with its byte arrays as small as their bytes (never a view of a larger buffer, which
 * posting would copy whole). */
function compact(item) {
  const own = (bytes) => (bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice());
  return { parts: item.parts, lead: own(item.lead), after: own(item.after), fill: item.fill };
}

/** `items` cut into runs of consecutive files of at most `limit` bytes each by their listed
 * sizes (headers counted), at least one file each: [[first, end]…]. */
function runsOf(items, limit) {
  const runs = [];
  for (let first = 0; first < items.length;) {
    let end = first;
    let bytes = 0;
    while (end < items.length) {
      const item = items[end];
      const more = item.lead.length + (Number(item.size) || 0) + item.after.length;
      if (end > first && bytes + more > limit) break;
      bytes += more;
      end += 1;
    }
    runs.push([first, end]);
    first = end;
  }
  return runs;
}

/** Read `items` in the lanes: runs handed out RUNS_PER_LANE to a lane at a time, their Blobs
 * emitted in order as soon as every run before them is; on a failure the other runs are
 * cancelled and, once every lane has answered, the first failure (in archive order) rejects. */
function readInLanes(started, root, items, emit, wholeLimit, chunkBytes, streamed) {
  const n = nextExport++;
  const { buffers, signal } = streamed;
  const runs = runsOf(items, Math.max(wholeLimit, chunkBytes));
  const done = new Array(runs.length);
  const out = [];
  let given = 0;
  let emitted = 0;
  let inFlight = 0;
  let failure = null; // {seg, error}
  return new Promise((resolve, reject) => {
    const finish = () => {
      if (inFlight > 0) return;
      if (failure !== null) reject(failure.error);
      else if (emitted === runs.length) resolve(out);
    };
    const give = (lane) => {
      if (failure !== null || given >= runs.length) return;
      const seg = given++;
      const [first, end] = runs[seg];
      inFlight += 1;
      if (lane.dead || signal?.aborted) {
        const message = lane.dead ? "a reader lane stopped" : "the download was cancelled";
        landed(lane, seg, { ok: false, name: "AbortError", message });
        return;
      }
      lane.runs.set(`${n}/${seg}`, (answer) => landed(lane, seg, answer));
      lane.worker.postMessage({
        kind: "run",
        n,
        seg,
        root,
        items: items.slice(first, end).map(compact),
        wholeLimit,
        chunkBytes,
        buffers,
      });
    };
    const landed = (lane, seg, answer) => {
      inFlight -= 1;
      if (!answer.ok) {
        const error = new DOMException(String(answer.message), String(answer.name));
        const cancelled = answer.name === "AbortError" && !lane.dead;
        if (
          failure === null ||
          (failure.cancelled && !cancelled) ||
          (cancelled === failure.cancelled && seg < failure.seg)
        ) {
          failure = { seg, error, cancelled };
        }
        for (const other of started)
          if (!other.dead) other.worker.postMessage({ kind: "cancel", n });
      } else if (failure === null) {
        done[seg] = answer;
        while (emitted < runs.length && done[emitted]) {
          const { blobs, out: measured } = done[emitted];
          done[emitted] = null;
          for (const blob of blobs) emit(blob);
          for (const r of measured) {
            figures.files += 1;
            figures.bytes += r.size;
            out.push(r);
          }
          emitted += 1;
        }
        give(lane);
      }
      finish();
    };
    // the download was cancelled (issue 34): the lanes stop before their next file
    signal?.addEventListener("abort", () => {
      for (const lane of started) if (!lane.dead) lane.worker.postMessage({ kind: "cancel", n });
    });
    for (let round = 0; round < RUNS_PER_LANE; round++) for (const lane of started) give(lane);
    finish(); // an empty plan
  });
}

/** Start the reader lanes now, if they are not started (an export is about to walk its project:
 * they start meanwhile); nothing waits for them here. */
export function startLanes() {
  clearTimeout(idleTimer);
  readyLanes().catch(() => {});
  if (exporting === 0) idleTimer = setTimeout(endIdleLanes, LANE_IDLE_MS);
}

/** What the call's `emit` (worker/host.mjs) says of where its bytes go: `buffers` — a streamed
 * download (issue 34): Uint8Arrays, never Blobs — and `signal`, aborted when that download
 * was cancelled (the reading then stops before the next file and rejects AbortError). */
function streamOf(emit) {
  const signal = emit?.signal instanceof AbortSignal ? emit.signal : null;
  return { buffers: emit?.streamed === true, signal };
}

/**
 * Send each planned file through `emit(Blob)` (posted to the page) — `emit(Uint8Array)` when
 * `emit.streamed` (see `streamOf`) —: its `lead`, its bytes, its
 * `after` filled in — read in the reader lanes, or here where none can be started
 * (worker/byte-reader.mjs says how: a staging buffer of max(wholeLimit, chunkBytes) bytes per
 * reader, one Blob per buffer-full, WebCrypto or hash-wasm sha256, hash-wasm crc32).
 * `items`: [{parts: [segment…], size, lead: Uint8Array, after: Uint8Array, fill: [[what, offset, width]…]}]
 * (`size`: the file's size when listed, used only to share the work).
 * Resolves [{size, crc32, sha256}…]; rejects (a plain DOMException) when reading fails.
 */
export async function relayFiles(root, items, emit, wholeLimit, chunkBytes) {
  exporting += 1;
  clearTimeout(idleTimer);
  try {
    const streamed = streamOf(emit);
    if (streamed.signal?.aborted)
      throw new DOMException("the download was cancelled", "AbortError");
    const started = await readyLanes();
    if (started.length === 0) {
      const owner = `here-${nextExport++}`;
      const stop = () => here.cancel(owner);
      streamed.signal?.addEventListener("abort", stop);
      try {
        return await here.run(root, items, emit, {
          wholeLimit,
          chunkBytes,
          owner,
          buffers: streamed.buffers,
        });
      } finally {
        streamed.signal?.removeEventListener("abort", stop);
      }
    }
    return await readInLanes(started, root, items, emit, wholeLimit, chunkBytes, streamed);
  } catch (err) {
    throw plain(err);
  } finally {
    exporting -= 1;
    if (exporting === 0 && lanes !== null) idleTimer = setTimeout(endIdleLanes, LANE_IDLE_MS);
  }
}

/** What the byte path did since the worker started: files and bytes relayed, and the most file
 * bytes it held at once (`peak_held_bytes`: this worker's own most plus each lane's most — an
 * upper bound, the lanes' peaks may not coincide) — read by host.info's runtime figures. */
export function bytePathFigures() {
  const lanesHeld = lanePeaks.reduce((a, b) => a + b, 0);
  return {
    files: figures.files,
    bytes: figures.bytes,
    peak_held_bytes: figures.peakHeld + lanesHeld,
  };
}
