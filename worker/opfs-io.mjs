// Storage steps that browser_host/opfs.py cannot safely or quickly make from Python, so the
// worker registers them as the Python module `voicebox_io` (worker/host.mjs, worker/peer.mjs):
// writing and reserving bytes (safely), listing a folder (quickly: one wait, not one per file;
// names only, when no size is needed), and reading a file (one wait, or none at all through a
// cached sync access handle: see "Cached reads" below).
//
// Why the writes (checked in Chromium 156 with Pyodide 314): when Python itself calls
// FileSystemWritableFileStream.write() and the write fails for lack of quota, the promise it
// gets back never settles — the host's write lock would be held for ever. The same write
// made here, in JavaScript, rejects at once. Every failure leaves as a plain DOMException of
// the same name (Pyodide does not resume an `await` on Chromium's QuotaExceededError class).
// No rule lives here: what a failure means is decided in opfs.py.

function plain(err) {
  return new DOMException(String(err?.message ?? err), String(err?.name ?? "Error"));
}

/** `plain`, its message starting with the step that failed ("open: …", "read: …"). */
function plainAt(step, err) {
  return new DOMException(`${step}: ${err?.message ?? err}`, String(err?.name ?? "Error"));
}

/** Write `bytes` (Uint8Array) to `writable` and commit it; on failure abort it (nothing is committed) and reject. */
export async function writeAll(writable, bytes) {
  try {
    await writable.write(bytes);
    await writable.close();
  } catch (err) {
    await writable.abort().catch(() => {});
    throw plain(err);
  }
}

/**
 * Write `bytes` (Uint8Array) as the file `name` of `folder` through the temporary sibling `tmp`
 * in one wait (issue 18: from Python these were four waits — getFileHandle, createWritable,
 * the write, move — each a round trip through the event loop, and the audit's anchor is one
 * such write per group commit): the temporary is created, written and committed (`writeAll`),
 * then moved onto `name`. Resolves undefined when `name` holds the new bytes. A failure
 * resolves (never rejects) one JSON text `{step, name, message, fits}` — `step` is "open"
 * (creating the temporary), "write" or "move"; `name` and `message` are the browser's; `fits`
 * is asked only for a failed write (`canReserve`: whether the bytes would fit the quota, null
 * when not asked) — and the temporary is gone by then. What a failure means is decided in
 * browser_host/opfs.py.
 */
export async function writeAtomic(folder, name, bytes, tmp) {
  const written = await writeAtomicHandle(folder, name, bytes, tmp);
  return typeof written === "string" ? written : undefined;
}

/** `writeAtomic`, resolving the file's handle (now named `name`) when it succeeds; `tmp` ""
 * writes `name` itself, no move (`writeMany`'s in-place rows; a failure then removes `name`). */
async function writeAtomicHandle(folder, name, bytes, tmp) {
  let handle = null;
  let step = "open";
  try {
    handle = await folder.getFileHandle(tmp || name, { create: true });
    step = "write";
    await writeAll(await handle.createWritable(), bytes);
    if (tmp) {
      step = "move";
      await handle.move(name);
    }
    return handle;
  } catch (err) {
    return failed(folder, handle, tmp || name, step, err, bytes.byteLength);
  }
}

/** A failed atomic write's JSON text `{step, name, message, fits}` (see `writeAtomic`), its
 * temporary `tmp` (of `handle`, null when never created) removed from `folder`. */
async function failed(folder, handle, tmp, step, err, size) {
  let failure = {
    step,
    name: String(err?.name ?? "Error"),
    message: String(err?.message ?? err),
    fits: null,
  };
  if (step === "write" && handle !== null) {
    try {
      failure.fits = await canReserve(handle, size);
    } catch (asked) {
      failure = {
        step,
        name: String(asked?.name ?? "Error"),
        message: String(asked?.message ?? asked),
        fits: null,
      };
    }
  }
  if (handle !== null) await folder.removeEntry(tmp).catch(() => {});
  return JSON.stringify(failure);
}

/**
 * `writeAtomicHandle` that also reads the file back from storage (issue 34, the import's
 * batches; `tmp` "" writes in place, see `writeMany`): resolves `{handle, back}` — `back`
 * the bytes read back, or null when they are to be read through `handle` (`getFile()`) — or
 * a failure's JSON text as `writeAtomic` does. Where the storage gives sync access handles (OPFS in a worker) the temporary is written and read
 * back through one (`write`, `read`, `close` are no waits: measured on the 10,000-file import,
 * 29.2–33.0 s against 36.4–39.3 s for `createWritable` + `getFile()`), then moved onto `name`.
 * No `flush()`: it is an fsync per file (32% of the worker's time in a profile of that import)
 * and the read-back does not need it (the bytes are read from the file either way); the
 * writes through `createWritable` are not flushed either. A write that stores fewer bytes than
 * given fails as an AbortError (Python then asks whether the bytes fit: `fits`). Where the
 * storage has no sync handles (a picked folder's handle refuses with InvalidStateError or
 * NotSupportedError) `how.sync` turns false and this and every later file of the call go
 * through `writeAtomicHandle`.
 */
async function writeAtomicReadBack(folder, name, bytes, tmp, how) {
  if (!how.sync) {
    const handle = await writeAtomicHandle(folder, name, bytes, tmp);
    return typeof handle === "string" ? handle : { handle, back: null };
  }
  let handle = null;
  let step = "open";
  try {
    handle = await folder.getFileHandle(tmp || name, { create: true });
    step = "write";
    let access;
    try {
      access = await handle.createSyncAccessHandle();
    } catch (err) {
      if (err?.name !== "InvalidStateError" && err?.name !== "NotSupportedError") throw err;
      how.sync = false;
      await folder.removeEntry(tmp || name).catch(() => {});
      return writeAtomicReadBack(folder, name, bytes, tmp, how);
    }
    let back;
    try {
      const wrote = access.write(bytes, { at: 0 });
      if (wrote !== bytes.byteLength)
        throw new DOMException(`stored ${wrote} of ${bytes.byteLength} bytes`, "AbortError");
      back = new Uint8Array(access.getSize());
      access.read(back, { at: 0 });
    } finally {
      access.close();
    }
    if (tmp) {
      step = "move";
      await handle.move(name);
    }
    return { handle, back };
  } catch (err) {
    return failed(folder, handle, tmp || name, step, err, bytes.byteLength);
  }
}

/**
 * A finder of folder handles under `root`: `(parts) => Promise<FileSystemDirectoryHandle>` for
 * an array of names ([] is `root`), each folder asked once per finder (its promise kept, its
 * parent found the same way); `options` go to `getDirectoryHandle` ({create: true} makes them).
 */
export function folderFinder(root, options = {}) {
  const folders = new Map([["", Promise.resolve(root)]]);
  const folderOf = (parts) => {
    const key = parts.join("/");
    if (!folders.has(key))
      folders.set(
        key,
        folderOf(parts.slice(0, -1)).then((d) => d.getDirectoryHandle(parts.at(-1), options)),
      );
    return folders.get(key);
  };
  return folderOf;
}

/**
 * Write many files under the folder `root` in one wait (issue 34: an import of 10,000 small
 * files paid one Python → JavaScript crossing, two folder look-ups from the root and a read-back
 * of several waits per file). `items` is one JSON text `[[folder, name, tmp, size], ...]` —
 * `folder` the file's parent as a "/"-joined path under `root` ("" for the root itself), `tmp`
 * its temporary's name (from Python's host-wide Temporaries), `size` its byte count; the files'
 * bytes are `body` (Uint8Array), one after another. Each file is written as `writeAtomic`
 * does (through its temporary, then `move`; with `tmp` "" under its own name, no move — only
 * Python asks that, for a staged import's new files: issue 34, stop 43), read back from
 * storage and hashed (WebCrypto sha256) — `writeAtomicReadBack`: `lanes` files at a time, each folder's handle looked up
 * (made if missing) once per call, so the files' folders are made by the batch (issue 34).
 * After the first failure no further file starts; those in flight
 * finish. Resolves one JSON text `{done, failure}`: `done[i]` is null when file i was not
 * written, "" when it was written but could not be read back, else the hex sha256 of what was
 * read back; `failure` is null or `{index, step, name, message, fits}` as `writeAtomic` reports
 * it, `step` also "folder" (the parent could not be made), "read", or "writer" (a writer
 * worker died mid-shard: its files are then what storage holds, `settleShard`). What the
 * digests and a failure mean is decided in Python (browser_host/opfs.py, core/archive/apply.py).
 */
export async function writeMany(root, items, body, lanes, writers = 1) {
  const rows = JSON.parse(items);
  const pool = writers > 1 && rows.length >= 2 * POOL_MIN_FILES ? await writerPool(writers) : [];
  if (pool.length < 2) return JSON.stringify(await writeRows(root, rows, body, lanes));
  // contiguous shards (a shard's files share folders), one a writer; each writer is given its
  // shard's bytes (copied) and answers as writeRows does, its indices local to the shard
  const shards = [];
  const per = Math.ceil(rows.length / pool.length);
  let offset = 0;
  for (let from = 0; from < rows.length; from += per) {
    const part = rows.slice(from, from + per);
    const size = part.reduce((n, row) => n + row[3], 0);
    shards.push({ from, part, bytes: body.slice(offset, offset + size) });
    offset += size;
  }
  const answers = await Promise.all(
    shards.map((shard, k) => inWriter(pool[k], root, shard.part, shard.bytes, lanes)),
  );
  const done = [];
  let failure = null;
  for (const [k, answer] of answers.entries()) {
    // a writer that died mid-shard told nothing of its files: storage is asked what is there
    const got = answer.done ?? (await settleShard(root, shards[k].part));
    done.push(...got);
    if (answer.failure !== null && failure === null) {
      const at = answer.done === null ? Math.max(0, got.indexOf(null)) : answer.failure.index;
      failure = { ...answer.failure, index: at + shards[k].from };
    }
  }
  return JSON.stringify({ done, failure });
}

/**
 * What a shard's `rows` left in storage once the writer writing them died (issue 34, stop 42):
 * each row's temporary is removed (none is left behind), then its file is read back from
 * storage and hashed as `writeRows` does — `done[i]` the hex sha256 of what is at the file's
 * name (a file the writer had moved into place before it died), or null when nothing is there.
 * Python decides what a digest means (browser_host/opfs.py, core/projects/batch_write.py): a
 * file that reads back as sent is kept and answered written; any other is not.
 */
async function settleShard(root, rows) {
  const folderIn = folderFinder(root);
  return Promise.all(
    rows.map(async ([folderPath, name, tmp]) => {
      let folder;
      try {
        folder = await folderIn(folderPath === "" ? [] : folderPath.split("/"));
      } catch {
        return null; // its folder was never made: nothing of it is there
      }
      if (tmp) await removeTemporary(folder, tmp);
      try {
        const back = await (await (await folder.getFileHandle(name)).getFile()).arrayBuffer();
        const digest = await crypto.subtle.digest("SHA-256", back);
        return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
      } catch {
        return null;
      }
    }),
  );
}

/** Remove the temporary `tmp` from `folder` when it is there; a sync access handle the dead
 * writer held is let go by the browser shortly after its worker ends, so a refused removal
 * (NoModificationAllowedError) is tried again, for at most WRITER_GONE_MS. */
async function removeTemporary(folder, tmp) {
  const deadline = performance.now() + WRITER_GONE_MS;
  for (;;) {
    try {
      await folder.removeEntry(tmp);
      return;
    } catch (err) {
      if (err?.name === "NotFoundError" || performance.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** `writeMany`'s work on this thread: `rows` written `lanes` at a time; resolves
 * `{done, failure}` (not JSON). Also what each writer (worker/write-lane.mjs) runs. */
export async function writeRows(root, rows, body, lanes) {
  const done = new Array(rows.length).fill(null);
  const offsets = new Array(rows.length);
  let offset = 0;
  rows.forEach((row, i) => {
    offsets[i] = offset;
    offset += row[3];
  });
  const folderIn = folderFinder(root, { create: true });
  const folderOf = (path) => folderIn(path === "" ? [] : path.split("/"));
  let failure = null;
  let next = 0;
  const fail = (index, step, err, fits = null) => {
    if (failure === null)
      failure = {
        index,
        step,
        name: String(err?.name ?? "Error"),
        message: String(err?.message ?? err),
        fits,
      };
  };
  const how = { sync: true };
  const one = async (i) => {
    const [folderPath, name, tmp, size] = rows[i];
    let folder;
    try {
      folder = await folderOf(folderPath);
    } catch (err) {
      fail(i, "folder", err);
      return;
    }
    const bytes = body.subarray(offsets[i], offsets[i] + size);
    const written = await writeAtomicReadBack(folder, name, bytes, tmp, how);
    if (typeof written === "string") {
      if (failure === null) failure = { index: i, ...JSON.parse(written) };
      return;
    }
    done[i] = "";
    try {
      const back = written.back ?? (await (await written.handle.getFile()).arrayBuffer());
      const digest = await crypto.subtle.digest("SHA-256", back);
      done[i] = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    } catch (err) {
      fail(i, "read", err);
    }
  };
  const lane = async () => {
    while (failure === null && next < rows.length) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, lanes) }, lane));
  return { done, failure };
}

// Writers (issue 34, stop 41): dedicated workers this worker starts (worker/write-lane.mjs) so
// that the files' sync-handle writes and closes — the platform's per-file cost, synchronous
// calls on the calling thread — run beside it. Measured with bench/write_lab.py (10,000
// one-line files, temporary + move, load 8–14 on 2 cores): one worker 535–895 files/s, two
// 815–1,142, four 798–1,221. A writer only moves bytes: Python planned every path and
// temporary, and decides what its answer means. Where no writer starts (no nested workers, a
// start over WRITER_START_MS) the batch is written on this thread, as before.
/** The writers' script (worker/host.mjs lists it in the egress guard). */
export const WRITER_SCRIPT = new URL("write-lane.mjs", import.meta.url);
export const WRITER_PROTOCOL = 1; // a writer of another build (an older service worker's) is not used
const POOL_MIN_FILES = 16; // a shard smaller than this is not worth a writer's round trip
const WRITER_START_MS = 10_000;
const WRITER_GONE_MS = 2_000; // how long a dead writer's open temporary may stay locked
let writers = null; // a promise of the started writers ([] when none could be), or null
let nextWrite = 1;

/** The pool of `count` writers, started once (a failed start leaves the pool empty for good). */
function writerPool(count) {
  if (writers === null) {
    writers = Promise.all(Array.from({ length: count }, startWriter)).then(
      (all) => {
        const up = all.filter((w) => w !== null);
        if (up.length < all.length) {
          for (const w of up) w.worker.terminate();
          return [];
        }
        return up;
      },
      () => [],
    );
  }
  return writers;
}

function startWriter() {
  if (typeof Worker === "undefined") return Promise.resolve(null);
  return new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(WRITER_SCRIPT, { type: "module", name: "voicebox-writer" });
    } catch {
      resolve(null);
      return;
    }
    const writer = { worker, waiting: new Map(), started: false };
    const timer = setTimeout(() => {
      worker.terminate();
      resolve(null);
    }, WRITER_START_MS);
    worker.onmessage = (event) => {
      const data = event.data;
      if (data?.kind === "ready") {
        clearTimeout(timer);
        if (data.protocol !== WRITER_PROTOCOL) {
          worker.terminate();
          resolve(null);
        } else {
          writer.started = true;
          resolve(writer);
        }
        return;
      }
      const waiter = writer.waiting.get(data?.id);
      if (!waiter) return;
      writer.waiting.delete(data.id);
      waiter(data.answer);
    };
    worker.onerror = (event) => {
      // handled here: unhandled, a writer's error would reach this worker's own scope as
      // uncaught, and the page would restart the host (an upload's answer lost with it)
      event.preventDefault();
      clearTimeout(timer);
      resolve(null); // not started: the pool stays empty (writes go on this thread)
      if (!writer.started) return;
      // a writer that died mid-shard (an uncaught error): it is ended, so it writes nothing
      // more, and so is the rest of the pool (the next batch starts a new one); its shards are
      // answered with done null — writeMany then asks storage what it left (settleShard) —
      // and the failure (Python stops the batch)
      const message = String(event?.message ?? "a writer stopped");
      retire(writer, message);
    };
  });
}

/** End the pool, `dead` (a writer that died) first: each shard it was writing is answered
 * `{done: null, failure}` (step "writer"); the others' writers finish theirs before they end. */
function retire(dead, message) {
  dead.worker.terminate();
  for (const [id, waiter] of dead.waiting) {
    dead.waiting.delete(id);
    waiter({
      done: null,
      failure: { index: 0, step: "writer", name: "Error", message, fits: null },
    });
  }
  const pool = writers;
  writers = null;
  pool?.then((all) => {
    for (const w of all) if (w !== dead) endWhenIdle(w);
  });
}

/** Terminate `writer` once no shard of it is waiting. */
function endWhenIdle(writer) {
  if (writer.waiting.size === 0) writer.worker.terminate();
  else setTimeout(() => endWhenIdle(writer), 50);
}

/** Shard `rows` (bytes `bytes`) written by `writer`: resolves writeRows' answer (`done` null
 * when the writer died: `retire`). */
function inWriter(writer, root, rows, bytes, lanes) {
  const id = nextWrite++;
  return new Promise((resolve) => {
    writer.waiting.set(id, resolve);
    writer.worker.postMessage({ id, root, rows, bytes, lanes }, [bytes.buffer]);
  });
}

/**
 * Whether `size` more bytes fit this origin's quota: the browser is asked to reserve them by
 * growing a fresh, never-committed writable of `fileHandle` (an empty temporary). Resolves
 * true or false; rejects (plain) only when the question itself fails.
 */
export async function canReserve(fileHandle, size) {
  const estimate = await navigator.storage.estimate();
  if ((estimate.usage ?? 0) + size > (estimate.quota ?? 0)) return false;
  let probe;
  try {
    probe = await fileHandle.createWritable();
    await probe.truncate(size);
    return true;
  } catch (err) {
    if (err?.name === "QuotaExceededError") return false;
    throw plain(err);
  } finally {
    await probe?.abort().catch(() => {});
  }
}

/** The name of every child of `dirHandle`, nothing asked per child (keys only), as one JSON
 * array: one string crosses into Python instead of a proxy per name (see `listEntries`). */
export async function listNames(dirHandle) {
  const names = [];
  for await (const name of dirHandle.keys()) names.push(name);
  return JSON.stringify(names);
}

// A walk's file handles, kept for the read that follows (`readMany`): `${rootId}\n${path}` ->
// FileSystemFileHandle, oldest first out past MAX_WALKED; each taken once. A handle is only a
// locator by path (no lock, no bytes): reading through a kept one is reading the file that
// has that path when it is read, exactly as a fresh getFileHandle would.
const MAX_WALKED = 20_000;
const walked = new Map();

/** The name and kind ("file" or "directory") of every child of `dirHandle`, nothing asked per
 * child (no `getFile()`: a size costs one browser call per file), as one JSON array of
 * [name, kind] pairs (issue 33: a search's walk needs no sizes — the bound is applied when
 * the files are read, `readMany`). With `root` (the project's folder) and `folder` (this
 * folder's path under it, "" for the root) the files' handles are kept for `readMany`. */
export async function listKinds(dirHandle, root, folder) {
  const rows = [];
  for await (const child of dirHandle.values()) {
    rows.push([child.name, child.kind]);
    if (root !== undefined && root !== null && child.kind === "file") {
      const key = cacheKeyOf(root, folder ? `${folder}/${child.name}` : child.name);
      walked.delete(key);
      walked.set(key, child);
      if (walked.size > MAX_WALKED) walked.delete(walked.keys().next().value);
    }
  }
  return JSON.stringify(rows);
}

/**
 * Every child of `dirHandle` as `{name, kind: "file"|"directory", size, lastModified}`, the
 * files' sizes asked in parallel (one wait per folder instead of one per file; figures in
 * docs/operations.md). A child removed while being listed (a temporary just moved into
 * place) is left out; any other failure rejects (plain). Resolves one JSON string: Python's
 * `to_py()` of the rows crossed the FFI once per row and field (issue 18, the open-10,000 row:
 * measured in docs/operations.md).
 */
export async function listEntries(dirHandle) {
  const children = [];
  for await (const child of dirHandle.values()) children.push(child);
  const rows = await Promise.all(
    children.map(async (child) => {
      if (child.kind === "directory")
        return { name: child.name, kind: "directory", size: 0, lastModified: 0 };
      try {
        const file = await child.getFile();
        return { name: child.name, kind: "file", size: file.size, lastModified: file.lastModified };
      } catch (err) {
        if (err?.name === "NotFoundError") return null;
        throw plain(err);
      }
    }),
  );
  return JSON.stringify(rows.filter((row) => row !== null));
}

/**
 * Read the file `name` of `dirHandle` in one wait (issue 18: getFileHandle, getFile and the
 * read were three waits from Python, each a round trip through the event loop): the whole
 * file when `spans` is null, else one Uint8Array per [offset, length] span (Blob.slice: only
 * those bytes are read). Rejects (plain) with the browser's name — NotFoundError,
 * TypeMismatchError (a folder) — and a message that starts "open: " or "read: ", saying
 * which wait failed. With `cacheRoot` (a project's root folder) and `cacheKey` (the file's path
 * under it), the file is read through a sync access handle kept for the next `readCached`.
 */
export async function readFile(dirHandle, name, spans, cacheRoot, cacheKey) {
  let fileHandle;
  try {
    fileHandle = await dirHandle.getFileHandle(name);
  } catch (err) {
    throw plainAt("open", err);
  }
  if (cacheRoot !== undefined && cacheRoot !== null) {
    const bytes = await readCaching(fileHandle, cacheRoot, String(cacheKey), spans);
    if (bytes !== null) return bytes;
  }
  return readSnapshot(fileHandle, (file) => {
    if (spans === null || spans === undefined) return file.arrayBuffer().then(asBytes);
    return Promise.all(
      Array.from(spans, ([offset, length]) => {
        const start = Math.min(file.size, Math.max(0, offset));
        return file
          .slice(start, Math.min(file.size, start + Math.max(0, length)))
          .arrayBuffer()
          .then(asBytes);
      }),
    );
  });
}

const asBytes = (buffer) => new Uint8Array(buffer);

/** How many `getFile()` snapshots one read takes at most before it says why it failed. */
const SNAPSHOT_TRIES = 5;

/** What reading a File says when the file was replaced after the File was taken: its bytes
 * changed (NotReadableError) or were removed with the old file (NotFoundError, while a
 * `getFile()` of the name finds the new one). */
const STALE_SNAPSHOT = new Set(["NotReadableError", "NotFoundError"]);

/**
 * Resolve `read(file)` on a `getFile()` snapshot of `fileHandle`. A File is a snapshot: when
 * the file is replaced after it was taken — the host's own atomic write moving new bytes onto
 * the name while this read waits, since reads and writes of one host interleave at every wait
 * — reading it rejects (STALE_SNAPSHOT). Then the read starts again on a new snapshot (the
 * whole read, so its bytes are all old or all new, never a mix), at most SNAPSHOT_TRIES times;
 * a file removed meanwhile rejects at the next `getFile()` ("open: NotFoundError").
 * Rejects (plain) with the browser's name and a message starting "open: " or "read: ".
 */
async function readSnapshot(fileHandle, read) {
  for (let tries = 1; ; tries++) {
    let file;
    try {
      file = await fileHandle.getFile();
    } catch (err) {
      throw plainAt("open", err);
    }
    try {
      return await read(file);
    } catch (err) {
      if (STALE_SNAPSHOT.has(err?.name) && tries < SNAPSHOT_TRIES) continue;
      throw plainAt("read", err);
    }
  }
}

// ---- Many files in one call (issue 33, search in files) ---------------------------------------
//
// A search reads thousands of small files: one Python → JavaScript → Python round trip per file
// cost more than the reading itself. `readMany` reads a list of files the host chose in one call
// and hands their bytes back together. Thin: which files, in which order and the size bound come
// from Python (core/projects/many_reads.py); here bytes are only moved.

/** What `readMany` reports for a file it did not read (its `sizes` entry). */
export const READ_GONE = -1; // not there, a folder, or the storage refused to read it
export const READ_LARGE = -2; // larger than the bound it was given: not read

/**
 * Read each of `paths` (arrays of names under the folder `root`, an OPFS project's or a picked
 * folder's) with `getFile().arrayBuffer()`, `flight` files at a time, through the handle a
 * walk kept (`listKinds`) or else found again, each folder's handle asked once per call — for
 * 10,000 files of 1 KB the fastest of the platform's ways measured
 * (docs/search.md, "Speed": read-only sync access handles, here or in reader lanes, cost more
 * per small file). A file larger than `maxBytes` is not read. Resolves `{data, sizes}` (an
 * Int32Array): `sizes[i]` is the byte count of `paths[i]` — its bytes are the next that many
 * of `data` (one Uint8Array, the files in order) — or READ_GONE or READ_LARGE. Never rejects
 * for one file.
 */
export async function readMany(root, paths, maxBytes, flight) {
  const list = Array.from(paths, (parts) => Array.from(parts, String));
  const folderOf = folderFinder(root);
  const got = new Array(list.length);
  const readOne = async (parts) => {
    const key = cacheKeyOf(root, parts.join("/"));
    let handle = walked.get(key);
    if (handle) walked.delete(key);
    else handle = await (await folderOf(parts.slice(0, -1))).getFileHandle(parts.at(-1));
    return readSnapshot(handle, async (file) =>
      file.size > maxBytes ? READ_LARGE : asBytes(await file.arrayBuffer()),
    );
  };
  let next = 0;
  const lane = async () => {
    while (next < list.length) {
      const i = next++;
      try {
        got[i] = await readOne(list[i]);
      } catch {
        got[i] = READ_GONE;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, flight) }, lane));
  let total = 0;
  for (const one of got) if (typeof one !== "number") total += one.length;
  const data = new Uint8Array(total);
  const sizes = new Int32Array(got.length);
  let at = 0;
  got.forEach((one, i) => {
    if (typeof one === "number") sizes[i] = one;
    else {
      data.set(one, at);
      at += one.length;
      sizes[i] = one.length;
    }
  });
  return { data, sizes };
}

// ---- Cached reads (issue 18) ----------------------------------------------------------------
//
// A read of an OPFS file through a FileSystemSyncAccessHandle is a synchronous call: no wait,
// so Python reads it without a round trip through the event loop. Opening one is a wait, so the
// handle is kept (at most MAX_HANDLES, least recently used closed first), with the file's size.
// Handles are opened "read-only" (shared: getFile() and other read-only handles still work),
// but any open handle makes the browser refuse to replace, move or delete its file or a folder
// above it (NoModificationAllowedError). So the host — the one writer of its storage, under its
// Web Lock — calls `holdHandles()` before it changes anything under a cached root: every
// handle is closed (and every open still in flight is waited for and closed) before the
// change, and none is opened or used until `releaseHandles()`. A cached size is therefore
// always the file's size: the file cannot change while its handle is open.
// Used only for OPFS projects (browser_host/opfs.py); a picked folder has no sync handles.

const MAX_HANDLES = 64;
const cached = new Map(); // `${rootId}\n${path}` -> {access, size}; insertion order = recency
const rootIds = new WeakMap(); // root folder handle -> a number
let nextRootId = 1;
let held = 0; // changes in progress: no handle is opened or used meanwhile
let epoch = 0; // moved on by every closing: an open that began before it is not kept
const opening = new Set(); // opens in flight (promises that settle once each is kept or closed)

function cacheKeyOf(root, path) {
  let id = rootIds.get(root);
  if (id === undefined) {
    id = nextRootId++;
    rootIds.set(root, id);
  }
  return `${id}\n${path}`;
}

function readThrough(access, size, spans) {
  const whole = (offset, length) => {
    const start = Math.min(size, Math.max(0, offset));
    const out = new Uint8Array(Math.min(size, start + Math.max(0, length)) - start);
    const got = out.byteLength ? access.read(out, { at: start }) : 0;
    if (got !== out.byteLength) throw new DOMException("short read", "NotReadableError");
    return out;
  };
  if (spans === null || spans === undefined) return whole(0, size);
  return Array.from(spans, ([offset, length]) => whole(offset, length));
}

function forget(key) {
  const entry = cached.get(key);
  if (!entry) return;
  cached.delete(key);
  try {
    entry.access.close();
  } catch {
    /* already closed */
  }
}

/**
 * The bytes of the file `path` under the folder `root` (or one Uint8Array per [offset, length]
 * span) when its handle is cached — synchronously, no wait — else undefined (the caller reads it
 * with `readFile(…, root, path)`, which caches the handle).
 */
export function readCached(root, path, spans) {
  if (held > 0) return undefined;
  const key = cacheKeyOf(root, String(path));
  const entry = cached.get(key);
  if (!entry) return undefined;
  cached.delete(key);
  cached.set(key, entry); // the most recently used
  try {
    return readThrough(entry.access, entry.size, spans);
  } catch {
    forget(key);
    return undefined; // read it the ordinary way
  }
}

/** Open `fileHandle` read-only, read it, and keep the handle; null when no handle could be
 * opened (a picked folder, a file another handle locks, a change in progress). */
async function readCaching(fileHandle, root, path, spans) {
  if (held > 0 || typeof fileHandle.createSyncAccessHandle !== "function") return null;
  const began = epoch;
  const job = (async () => {
    let access;
    try {
      access = await fileHandle.createSyncAccessHandle({ mode: "read-only" });
    } catch {
      return null;
    }
    let bytes;
    let size;
    try {
      size = access.getSize();
      bytes = readThrough(access, size, spans);
    } catch {
      access.close();
      return null;
    }
    const key = cacheKeyOf(root, path);
    if (held > 0 || epoch !== began || cached.has(key)) {
      access.close();
    } else {
      cached.set(key, { access, size });
      if (cached.size > MAX_HANDLES) forget(cached.keys().next().value);
    }
    return bytes;
  })();
  opening.add(job);
  try {
    return await job;
  } finally {
    opening.delete(job);
  }
}

/**
 * Before a change under a cached root: close every cached handle and keep none until
 * `releaseHandles()`; close every lent handle not being read yet (its borrower opens it again
 * after the change: see "Lent handles" below). Returns undefined when nothing is left to wait
 * for, else a promise that resolves once every open in flight has settled (and closed its
 * handle) and every lent handle being read has been given back.
 */
export function holdHandles() {
  held += 1;
  epoch += 1;
  for (const key of [...cached.keys()]) forget(key);
  const waits = [...opening];
  for (const loan of [...lent]) {
    if (loan.access !== null && !loan.reading) closeLoan(loan);
    else waits.push(loan.returned);
  }
  for (const party of elsewhere) {
    const wait = party.hold();
    if (wait) waits.push(wait);
  }
  return waits.length ? Promise.allSettled(waits).then(() => undefined) : undefined;
}

/** After the change that `holdHandles()` began (each hold is released once). */
export function releaseHandles() {
  if (held === 0) return;
  held -= 1;
  for (const party of elsewhere) party.release();
  if (held === 0) for (const wake of waiters.splice(0)) wake();
}

/** How many holds are in progress (a party joining later starts with as many). */
export function holdsInProgress() {
  return held;
}

const elsewhere = []; // parties holding handles in other workers: {hold(), release()}

/**
 * Hold `party`'s handles with this worker's own: `party.hold()` is called by every
 * `holdHandles()` (it closes the party's handles opened ahead, opens none until its
 * `release()`, and returns a promise that resolves once none of its handles is open, or
 * undefined), `party.release()` by every `releaseHandles()`. The export's reader lanes
 * (worker/byte-path.mjs) are such a party: their handles live in workers of their own.
 */
export function holdElsewhere(party) {
  elsewhere.push(party);
}

// ---- Lent handles (issue 18, the export) ------------------------------------------------------
//
// The export's reader (worker/byte-path.mjs) keeps read-only sync access handles open a few
// files ahead of the one it reads. Each blocks a change to its file exactly as a cached one
// does, so they are lent under the same hold: `lendHandle` waits while a change is in progress;
// `holdHandles` closes a lent handle its borrower has not begun to read (`take` then answers
// null and the borrower lends it again, after the change) and waits for one being read to be
// given back (a read takes milliseconds per file: no change waits on a borrower's other work,
// so no wait goes round in a circle). A write to a file while the export runs is therefore
// never refused for the export's sake: it waits for at most the one file being read.

const lent = new Set(); // loans: {access, reading, returned, settle}
const waiters = []; // wake-ups for lends waiting until no change is in progress

function closeLoan(loan) {
  if (!lent.delete(loan)) return;
  try {
    loan.access?.close();
  } catch {
    /* already closed */
  }
  loan.access = null;
  loan.settle();
}

/**
 * Lend a read-only sync access handle of `fileHandle` (an OPFS file), once no change is in
 * progress: a loan with `take()` (the handle, marked as being read — or null when a change
 * closed it meanwhile: lend again) and `giveBack()` (closes it). Rejects as
 * `createSyncAccessHandle` does (e.g. a picked folder's file, which has no sync handles).
 */
export async function lendHandle(fileHandle) {
  for (;;) {
    while (held > 0) await new Promise((wake) => waiters.push(wake));
    const began = epoch;
    const loan = { access: null, reading: false, returned: null, settle: null };
    loan.returned = new Promise((settle) => {
      loan.settle = settle;
    });
    lent.add(loan);
    try {
      loan.access = await fileHandle.createSyncAccessHandle({ mode: "read-only" });
    } catch (err) {
      lent.delete(loan);
      loan.settle();
      throw err;
    }
    if (epoch === began && held === 0) {
      return {
        take() {
          if (loan.access === null) return null;
          loan.reading = true;
          return loan.access;
        },
        giveBack() {
          closeLoan(loan);
        },
      };
    }
    closeLoan(loan); // a change began while it opened: after that change, open it again
  }
}

/** How many handles are lent now (tests and diagnostics). */
export function lentHandles() {
  return lent.size;
}

/** How many sync access handles are cached now (diagnostics and tests). */
export function cachedHandles() {
  return cached.size;
}

// ---- Watched folders (issue 18, the open row) -------------------------------------------------
//
// The host keeps the listings it shows (core/projects/listing_cache.py) and must learn of every
// change made to a project's folder by anyone else (another same-origin context: DevTools, a
// test planting files straight into OPFS). A FileSystemObserver on the project's root, recursive,
// reports them (in Chromium 156 within a few ms of the write; docs/operations.md). What a record
// means for the kept listings is decided in Python (browser_host/watch.py); this only relays.

/**
 * Watch `dirHandle` and everything below it: `report(json)` is called with each batch of the
 * observer's records as one JSON array of `[type, path, movedFrom]` (`path`, `movedFrom`:
 * arrays of names relative to `dirHandle`; `movedFrom` null unless moved); a failed start is
 * reported as one `["errored", [], null]`. Returns at once `{active, stop()}` — `active` turns
 * true once the browser observes the folder, false for good after `errored` or `stop()` (no
 * report after `stop()`) — or null when this browser has no FileSystemObserver.
 */
export function watchFolder(dirHandle, report) {
  if (typeof FileSystemObserver !== "function") return null;
  const watch = { active: false, stopped: false, stop: null };
  const say = (rows) => {
    if (watch.stopped) return;
    try {
      report(JSON.stringify(rows));
    } catch (err) {
      console.warn(`watch report: ${err?.message ?? err}`);
    }
  };
  let observer;
  try {
    observer = new FileSystemObserver((records) => {
      if (watch.stopped) return;
      const rows = records.map((r) => [
        String(r.type),
        Array.from(r.relativePathComponents ?? [], String),
        r.relativePathMovedFrom ? Array.from(r.relativePathMovedFrom, String) : null,
      ]);
      if (rows.some(([type]) => type === "errored")) watch.active = false;
      say(rows);
    });
  } catch {
    return null;
  }
  watch.stop = () => {
    watch.stopped = true;
    watch.active = false;
    observer.disconnect();
  };
  observer.observe(dirHandle, { recursive: true }).then(
    () => {
      if (!watch.stopped) watch.active = true;
    },
    () => {
      watch.active = false;
      say([["errored", [], null]]);
      watch.stop();
    },
  );
  return watch;
}
