// The export's reader (docs/archives.md §4; issue 18): moves runs of planned files' bytes from
// OPFS into Blobs, hashed on the way. Used by worker/byte-path.mjs in the host worker (where no
// reader lane can be started) and by each reader lane (worker/byte-lane.mjs). Thin: what goes in
// the archive, in which order, every byte around the files' data and the bounds come from Python
// (core/archive/export.py, browser_host/byte_path.py); here bytes are only moved, measured and
// hashed.

import { createCRC32, createSHA256 } from "../vendor/hash-wasm.mjs";
import { folderFinder, lendHandle } from "./opfs-io.mjs";

/** The messages between the host's byte path and its reader lanes (worker/byte-lane.mjs): a
 * lane reports it when started, and is used only when it is the host's own. Change it with any
 * change to those messages or to what a run does. */
export const LANE_PROTOCOL = 2;

/** At most this many files are opened ahead of the one being read, across queued runs. */
export const AHEAD_FILES = 8;

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A plain DOMException of `err`'s name and message (Pyodide resumes on those). */
export function plain(err) {
  return new DOMException(String(err?.message ?? err), String(err?.name ?? "Error"));
}

/** `after` (a copy) with each [what, offset, width] of `fill` set to the measured value, LE. */
function filled(after, fill, values) {
  const out = new Uint8Array(after);
  const view = new DataView(out.buffer);
  for (const [what, offset, width] of fill) {
    const value = values[what];
    if (width === 8) view.setBigUint64(offset, BigInt(value), true);
    else view.setUint32(offset, value >>> 0, true);
  }
  return out;
}

/** A promise of the handle of each of `paths` (arrays of segments) under the folder `root`, all
 * asked at once, each folder once; each awaited when its turn comes. */
function handlesOf(root, paths) {
  const folderOf = folderFinder(root);
  return paths.map((parts) => {
    const handle = folderOf(parts.slice(0, -1)).then((d) => d.getFileHandle(parts.at(-1)));
    handle.catch(() => {}); // awaited in turn; never an unhandled rejection
    return handle;
  });
}

/** Open `handle` for reading: {loan, file: null} — a read-only sync access handle lent by
 * worker/opfs-io.mjs (no writer can change the file while it is open; a change the host makes
 * meanwhile closes it first and the reader lends it again, see `lendHandle`) — or, for a file
 * with no sync handles (a picked folder's), {loan: null, file}: its File snapshot, whose reads
 * fail rather than give other bytes if the file changes meanwhile. */
async function openForRead(handle) {
  try {
    return { loan: await lendHandle(handle), file: null };
  } catch (err) {
    if (err?.name === "NotFoundError") throw err;
    return { loan: null, file: await handle.getFile() }; // not OPFS: no sync access handles
  }
}

/** Read `view.length` bytes from `at` into `view`: through `access` (no wait), or from `file`.
 * A sync access handle's `read` answers an error as a huge unsigned count (checked in Chromium
 * 156: 4294967292 for a file removed behind the host's back), never a throw: any count over
 * what was asked is a failure, as is none at all. */
async function readInto(access, file, view, at) {
  if (access === null) {
    const bytes = new Uint8Array(await file.slice(at, at + view.length).arrayBuffer());
    if (bytes.length !== view.length)
      throw new DOMException("the file ended early", "InvalidStateError");
    view.set(bytes);
    return;
  }
  for (let done = 0; done < view.length;) {
    const n = access.read(view.subarray(done), { at: at + done });
    if (!(n > 0 && n <= view.length - done))
      throw new DOMException("the file ended early or could not be read", "InvalidStateError");
    done += n;
  }
}

/** Rejects for a file whose sync access handle gave no size. A handle opened on a file
 * removed behind the host's back still opens, and its `getSize()` answers 2⁶⁴ − 1 (checked in
 * Chromium 156; reading that many bytes would never end): the file is asked for again, and its
 * absence rejects NotFoundError, as it would have before it was opened. */
async function noSize(handle) {
  await handle.getFile(); // NotFoundError when it is gone
  throw new DOMException("the file's size could not be read", "InvalidStateError");
}

/**
 * One reader: runs of planned files, read one run after another in the order given (a run
 * waits for the runs before it), with up to AHEAD_FILES files opened ahead across the queued
 * runs. `figures` ({files, bytes, held, peakHeld}) is counted as it goes.
 *
 * `run(root, items, emit, {wholeLimit, chunkBytes, owner, buffers})` sends each planned file of
 * `items` through `emit(Blob)` — or, with `buffers` (a streamed download, issue 34: the bytes
 * go on to a stream, never into the browser's blob registry), `emit(Uint8Array)`, each its own
 * buffer, to be transferred: its `lead`, its bytes, its `after` filled in. Everything goes through
 * one reused staging buffer of max(wholeLimit, chunkBytes) bytes: the headers are copied into
 * it and each file is read straight into it, through a read-only sync access handle (see
 * `openForRead`); when the next piece does not fit, the staged bytes become one Blob or buffer (a copy:
 * the page holds the very bytes hashed whatever changes later — a reference to the file's
 * snapshot would make the download fail once the file is written again) and are emitted; the
 * run's last bytes too. One Blob per buffer-full, not one per file: each Blob made is a round
 * trip to the browser's blob registry (docs/operations.md, round four). A file of at most
 * `wholeLimit` bytes is read in one piece and hashed by WebCrypto (which copies it); a larger
 * one in pieces of `chunkBytes`, hashed by hash-wasm's streaming sha256. crc32 by hash-wasm. At
 * most about 2 × wholeLimit file bytes are held at once (the staged bytes and one digest's
 * copy), or one piece.
 * `items`: [{parts: [segment…], lead: Uint8Array, after: Uint8Array, fill: [[what, offset, width]…]}].
 * Resolves [{size, crc32, sha256}…]; rejects (a plain DOMException) when reading fails, or
 * with an AbortError once `cancel(owner)` was called for its owner.
 */
export class ByteReader {
  #figures;
  #queue = []; // runs, the one being read first
  #busy = false;
  #ahead = 0; // files opened ahead and not yet taken
  #stage = null; // the staging buffer, reused by every run
  #crc = null;
  #sha = null;

  constructor(figures) {
    this.#figures = figures;
  }

  run(root, items, emit, { wholeLimit, chunkBytes, owner = null, buffers = false }) {
    return new Promise((resolve, reject) => {
      this.#queue.push({
        root,
        items,
        emit,
        wholeLimit,
        chunkBytes,
        owner,
        buffers,
        resolve,
        reject,
        handles: null,
        opened: new Array(items.length),
        next: 0,
        cancelled: false,
      });
      this.#openAhead();
      this.#pump();
    });
  }

  /** Every run of `owner` rejects with an AbortError: a queued one at once (its files opened
   * ahead closed), the one being read before its next file. */
  cancel(owner) {
    for (const run of this.#queue) if (run.owner === owner) run.cancelled = true;
    for (const run of this.#queue.slice(1)) {
      if (!run.cancelled) continue;
      this.#queue.splice(this.#queue.indexOf(run), 1);
      this.#close(run);
      run.reject(new DOMException("the export was cancelled", "AbortError"));
    }
    this.#openAhead();
  }

  #hold(n) {
    this.#figures.held += n;
    this.#figures.peakHeld = Math.max(this.#figures.peakHeld, this.#figures.held);
  }

  /** Open files ahead, in queue order, until AHEAD_FILES are open and not yet taken. */
  #openAhead() {
    for (const run of this.#queue) {
      if (run.cancelled) continue;
      while (this.#ahead < AHEAD_FILES && run.next < run.items.length) {
        run.handles ??= handlesOf(
          run.root,
          run.items.map((item) => item.parts),
        );
        const i = run.next++;
        run.opened[i] = run.handles[i].then(openForRead);
        run.opened[i].catch(() => {});
        this.#ahead += 1;
      }
      if (this.#ahead >= AHEAD_FILES) return;
    }
  }

  /** Handles of `run` opened ahead and not read: closed (no lock outlives a run). */
  #close(run) {
    for (let i = 0; i < run.opened.length; i++) {
      const pending = run.opened[i];
      if (!pending) continue;
      run.opened[i] = null;
      this.#ahead -= 1;
      pending.then(
        ({ loan }) => loan?.giveBack(),
        () => {},
      );
    }
  }

  async #pump() {
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (this.#queue.length) {
        const run = this.#queue[0];
        try {
          run.resolve(await this.#read(run));
        } catch (err) {
          run.reject(plain(err));
        } finally {
          this.#close(run);
          this.#queue.shift();
          this.#openAhead();
        }
      }
    } finally {
      this.#busy = false;
    }
  }

  async #read(run) {
    const { items, emit, wholeLimit, chunkBytes, buffers } = run;
    const figures = this.#figures;
    let staged = 0; // bytes in the stage
    let stagedFileBytes = 0; // of which files' bytes (counted as held)
    let digesting = null; // the previous file's WebCrypto digest: {promise, size, index}
    try {
      this.#crc ??= await createCRC32();
      const crc = this.#crc;
      const size = Math.max(wholeLimit, chunkBytes);
      if (this.#stage?.length !== size) this.#stage = new Uint8Array(size);
      const stage = this.#stage;
      const send = () => {
        if (staged === 0) return;
        emit(buffers ? stage.slice(0, staged) : new Blob([stage.subarray(0, staged)]));
        figures.held -= stagedFileBytes;
        staged = 0;
        stagedFileBytes = 0;
      };
      /** Room for `n` bytes (at most the stage's length) at the end of the staged bytes. */
      const room = (n) => {
        if (staged + n > stage.length) send();
        return stage.subarray(staged, staged + n);
      };
      const putBytes = (bytes) => {
        if (bytes.length > stage.length) {
          // never planned so; kept whole, in order
          send();
          emit(buffers ? bytes.slice() : new Blob([bytes]));
          return;
        }
        room(bytes.length).set(bytes);
        staged += bytes.length;
      };
      const sums = new Array(items.length);
      const settleDigest = async () => {
        if (!digesting) return;
        sums[digesting.index] = hex(await digesting.promise);
        figures.held -= digesting.size;
        digesting = null;
      };
      const out = [];
      for (let i = 0; i < items.length; i++) {
        if (run.cancelled) throw new DOMException("the export was cancelled", "AbortError");
        this.#openAhead();
        putBytes(items[i].lead);
        crc.init();
        let { loan, file } = await run.opened[i];
        run.opened[i] = null;
        this.#ahead -= 1;
        this.#openAhead();
        // taken only now, its turn (never ahead: a change waits for a handle being read, and
        // must not wait for one whose reader waits for an earlier file to be opened after it)
        let access = loan === null ? null : loan.take();
        while (loan !== null && access === null) {
          // the host changed something while this file waited its turn: open it again after that
          ({ loan, file } = await openForRead(await run.handles[i]));
          access = loan === null ? null : loan.take();
        }
        const size = access !== null ? access.getSize() : file.size;
        try {
          if (!(Number.isSafeInteger(size) && size >= 0)) await noSize(await run.handles[i]);
          if (size <= wholeLimit) {
            await settleDigest(); // before its bytes are staged: at most one copy in flight
            const view = room(size);
            await readInto(access, file, view, 0);
            loan?.giveBack();
            staged += size;
            stagedFileBytes += size;
            this.#hold(size);
            crc.update(view);
            this.#hold(size); // WebCrypto's copy, until the digest is done
            digesting = { promise: crypto.subtle.digest("SHA-256", view), size: size, index: i };
          } else {
            await settleDigest();
            this.#sha ??= await createSHA256();
            const sha = this.#sha;
            sha.init();
            for (let at = 0; at < size; at += chunkBytes) {
              const view = room(Math.min(chunkBytes, size - at));
              await readInto(access, file, view, at);
              staged += view.length;
              stagedFileBytes += view.length;
              this.#hold(view.length);
              sha.update(view);
              crc.update(view);
            }
            sums[i] = sha.digest("hex");
          }
        } finally {
          loan?.giveBack();
        }
        const crc32 = parseInt(crc.digest("hex"), 16);
        putBytes(filled(items[i].after, items[i].fill, { crc32, size }));
        figures.files += 1;
        figures.bytes += size;
        out.push({ size, crc32 });
      }
      await settleDigest();
      send();
      return out.map((r, i) => ({ ...r, sha256: sums[i] }));
    } finally {
      figures.held -= stagedFileBytes; // a failure: what was staged is dropped
      if (digesting) {
        figures.held -= digesting.size;
        digesting.promise.catch(() => {});
      }
    }
  }
}
