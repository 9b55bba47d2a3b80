// The export's byte path (docs/archives.md §4): files' bytes from OPFS to the page, hashed on the
// way, without entering the Wasm heap. Registered for Python as the module `voicebox_bytes`
// (worker/host.mjs); browser_host/byte_path.py calls relayFiles once per batch of files with a
// plan the export made (core/archive/export.py): for each file its path, the bytes to send before
// it (`lead`: headers) and after it (`after`: its data descriptor), and where in `after` to write
// the CRC-32 and size measured here (`fill`). Thin: what goes in the archive, in which order, and
// every byte around the files' data are decided in Python; the bounds come from Python too.

import { createCRC32, createSHA256 } from "../vendor/hash-wasm.mjs";
import { lendHandle } from "./opfs-io.mjs";

const figures = { files: 0, bytes: 0, held: 0, peakHeld: 0 };
const AHEAD_FILES = 8; // at most this many files opened ahead

function hold(n) {
  figures.held += n;
  figures.peakHeld = Math.max(figures.peakHeld, figures.held);
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

function plain(err) {
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
  const folders = new Map([["", Promise.resolve(root)]]);
  const folderOf = (parts) => {
    const key = parts.join("/");
    if (!folders.has(key)) folders.set(key, folderOf(parts.slice(0, -1)).then((d) => d.getDirectoryHandle(parts.at(-1))));
    return folders.get(key);
  };
  return paths.map((parts) => {
    const handle = folderOf(parts.slice(0, -1)).then((d) => d.getFileHandle(parts.at(-1)));
    handle.catch(() => {}); // awaited in turn; never an unhandled rejection
    return handle;
  });
}

let stage = null; // the one staging buffer, reused by every export

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

/** Read `view.length` bytes from `at` into `view`: through `access` (no wait), or from `file`. */
async function readInto(access, file, view, at) {
  if (access === null) {
    const bytes = new Uint8Array(await file.slice(at, at + view.length).arrayBuffer());
    if (bytes.length !== view.length) throw new DOMException("the file ended early", "InvalidStateError");
    view.set(bytes);
    return;
  }
  for (let done = 0; done < view.length;) {
    const n = access.read(view.subarray(done), { at: at + done });
    if (n <= 0) throw new DOMException("the file ended early", "InvalidStateError");
    done += n;
  }
}

/**
 * Send each planned file through `emit(Blob)` (posted to the page): its `lead`, its bytes, its
 * `after` filled in. Everything goes through one reused staging buffer of
 * max(wholeLimit, chunkBytes) bytes: the headers are copied into it and each file is read
 * straight into it, through a read-only sync access handle (opened AHEAD_FILES ahead: see
 * `openForRead`); when the next piece does not fit, the staged bytes become one Blob (a copy:
 * the page holds the very bytes hashed whatever changes later — a reference to the file's
 * snapshot would make the download fail once the file is written again) and are posted. One
 * Blob per buffer-full, not one per file: each Blob made is a round trip to the browser's blob
 * registry, measured as the export's largest cost when it was made per file (docs/operations.md,
 * round four). A file of at most `wholeLimit` bytes is read in one piece and hashed by WebCrypto
 * (which copies it); a larger one in pieces of `chunkBytes`, hashed by hash-wasm's streaming
 * sha256. crc32 by hash-wasm. At most about 2 × wholeLimit file bytes are held at once (the
 * staged bytes and one digest's copy), or one piece.
 * `items`: [{parts: [segment…], lead: Uint8Array, after: Uint8Array, fill: [[what, offset, width]…]}].
 * Resolves [{size, crc32, sha256}…]; rejects (a plain DOMException) when reading fails.
 */
export async function relayFiles(root, items, emit, wholeLimit, chunkBytes) {
  const handles = handlesOf(root, items.map((item) => item.parts));
  const opened = new Array(items.length);
  let next = 0; // the next file to open
  const openAhead = (upTo) => {
    for (; next < Math.min(upTo, items.length); next++) {
      opened[next] = handles[next].then(openForRead);
      opened[next].catch(() => {});
    }
  };
  let staged = 0; // bytes in `stage`
  let stagedFileBytes = 0; // of which files' bytes (counted as held)
  try {
    const crc = await createCRC32();
    let sha = null;
    const size = Math.max(wholeLimit, chunkBytes);
    if (stage?.length !== size) stage = new Uint8Array(size);
    const send = () => {
      if (staged === 0) return;
      emit(new Blob([stage.subarray(0, staged)]));
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
      if (bytes.length > stage.length) { // never planned so; kept whole, in order
        send();
        emit(new Blob([bytes]));
        return;
      }
      room(bytes.length).set(bytes);
      staged += bytes.length;
    };
    let digesting = null; // the previous file's WebCrypto digest: {promise, size, index}
    const sums = new Array(items.length);
    const settleDigest = async () => {
      if (!digesting) return;
      sums[digesting.index] = hex(await digesting.promise);
      figures.held -= digesting.size;
      digesting = null;
    };
    const out = [];
    for (let i = 0; i < items.length; i++) {
      openAhead(i + AHEAD_FILES);
      putBytes(items[i].lead);
      crc.init();
      let { loan, file } = await opened[i];
      opened[i] = null;
      // taken only now, its turn (never ahead: a change waits for a handle being read, and
      // must not wait for one whose reader waits for an earlier file to be opened after it)
      let access = loan === null ? null : loan.take();
      while (loan !== null && access === null) {
        // the host changed something while this file waited its turn: open it again after that
        ({ loan, file } = await openForRead(await handles[i]));
        access = loan === null ? null : loan.take();
      }
      const size = access !== null ? access.getSize() : file.size;
      try {
        if (size <= wholeLimit) {
          await settleDigest(); // before its bytes are staged: at most one copy in flight
          const view = room(size);
          await readInto(access, file, view, 0);
          loan?.giveBack();
          staged += size;
          stagedFileBytes += size;
          hold(size);
          crc.update(view);
          hold(size); // WebCrypto's copy, until the digest is done
          digesting = { promise: crypto.subtle.digest("SHA-256", view), size: size, index: i };
        } else {
          await settleDigest();
          sha ??= await createSHA256();
          sha.init();
          for (let at = 0; at < size; at += chunkBytes) {
            const view = room(Math.min(chunkBytes, size - at));
            await readInto(access, file, view, at);
            staged += view.length;
            stagedFileBytes += view.length;
            hold(view.length);
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
  } catch (err) {
    throw plain(err);
  } finally {
    figures.held -= stagedFileBytes; // a failure: what was staged is dropped
    // handles opened ahead and not read (a failure): closed, so no lock outlives the export
    for (const pending of opened) if (pending) pending.then(({ loan }) => loan?.giveBack(), () => {});
  }
}

/** What the byte path did since the worker started: files and bytes relayed, and the most file
 * bytes it held at once (`peak_held_bytes`) — read by host.info's runtime figures. */
export function bytePathFigures() {
  return { files: figures.files, bytes: figures.bytes, peak_held_bytes: figures.peakHeld };
}
