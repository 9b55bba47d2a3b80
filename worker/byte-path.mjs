// The export's byte path (docs/archives.md §4): files' bytes from OPFS to the page, hashed on the
// way, without entering the Wasm heap. Registered for Python as the module `voicebox_bytes`
// (worker/host.mjs); browser_host/byte_path.py calls relayFiles once per batch of files with a
// plan the export made (core/archive/export.py): for each file its path, the bytes to send before
// it (`lead`: headers) and after it (`after`: its data descriptor), and where in `after` to write
// the CRC-32 and size measured here (`fill`). Thin: what goes in the archive, in which order, and
// every byte around the files' data are decided in Python; the bounds come from Python too.

import { createCRC32, createSHA256 } from "../vendor/hash-wasm.mjs";

const figures = { files: 0, bytes: 0, held: 0, peakHeld: 0 };
const SMALL_BYTES = 1 << 20; // small pieces (headers, small files) are joined up to this size

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

/** The file handles of `paths` (arrays of segments) under the folder `root`, folders asked once. */
async function handlesOf(root, paths) {
  const folders = new Map([["", Promise.resolve(root)]]);
  const folderOf = (parts) => {
    const key = parts.join("/");
    if (!folders.has(key)) folders.set(key, folderOf(parts.slice(0, -1)).then((d) => d.getDirectoryHandle(parts.at(-1))));
    return folders.get(key);
  };
  return Promise.all(paths.map(async (parts) => (await folderOf(parts.slice(0, -1))).getFileHandle(parts.at(-1))));
}

/**
 * Send each planned file through `emit(Uint8Array)` (which transfers it to the page): its `lead`,
 * its bytes, its `after` filled in — small pieces joined into one message. A file of at most
 * `wholeLimit` bytes is read in one piece (the next one is read meanwhile) and hashed by WebCrypto;
 * a larger one in pieces of `chunkBytes`, hashed by hash-wasm's streaming sha256. crc32 by
 * hash-wasm. At most about 3 × wholeLimit bytes (or one piece) are held at once.
 * `items`: [{parts: [segment…], lead: Uint8Array, after: Uint8Array, fill: [[what, offset, width]…]}].
 * Resolves [{size, crc32, sha256}…]; rejects (a plain DOMException) when reading fails.
 */
export async function relayFiles(root, items, emit, wholeLimit, chunkBytes) {
  try {
    const handles = await handlesOf(root, items.map((item) => item.parts));
    const files = await Promise.all(handles.map((h) => h.getFile()));
    const crc = await createCRC32();
    let sha = null;
    let small = [];
    let smallBytes = 0;
    const flush = () => {
      if (!small.length) return;
      const out = new Uint8Array(smallBytes);
      let at = 0;
      for (const b of small) { out.set(b, at); at += b.byteLength; }
      small = [];
      smallBytes = 0;
      emit(out);
    };
    const keep = (bytes) => {
      small.push(bytes);
      smallBytes += bytes.byteLength;
      if (smallBytes >= SMALL_BYTES) flush();
    };
    const whole = (i) => {
      if (i >= files.length || files[i].size > wholeLimit) return null;
      hold(files[i].size); // read ahead while the one before is hashed
      const reading = files[i].arrayBuffer();
      reading.catch(() => {}); // awaited below; never an unhandled rejection
      return reading;
    };
    let next = whole(0);
    const out = [];
    for (let i = 0; i < items.length; i++) {
      const file = files[i];
      keep(items[i].lead);
      crc.init();
      let sha256;
      if (file.size <= wholeLimit) {
        const bytes = new Uint8Array(await next);
        next = whole(i + 1);
        hold(bytes.byteLength);
        const digest = crypto.subtle.digest("SHA-256", bytes); // copies the bytes first
        crc.update(bytes);
        if (bytes.byteLength < SMALL_BYTES / 16) keep(bytes);
        else { flush(); emit(bytes); }
        sha256 = hex(await digest);
        figures.held -= 2 * bytes.byteLength;
      } else {
        flush();
        sha ??= await createSHA256();
        sha.init();
        for (let at = 0; at < file.size; at += chunkBytes) {
          const bytes = new Uint8Array(await file.slice(at, Math.min(file.size, at + chunkBytes)).arrayBuffer());
          hold(bytes.byteLength);
          sha.update(bytes);
          crc.update(bytes);
          const n = bytes.byteLength;
          emit(bytes);
          figures.held -= n;
        }
        sha256 = sha.digest("hex");
        next = whole(i + 1);
      }
      const crc32 = parseInt(crc.digest("hex"), 16);
      keep(filled(items[i].after, items[i].fill, { crc32, size: file.size }));
      figures.files += 1;
      figures.bytes += file.size;
      out.push({ size: file.size, crc32, sha256 });
    }
    flush();
    return out;
  } catch (err) {
    throw plain(err);
  }
}

/** What the byte path did since the worker started: files and bytes relayed, and the most file
 * bytes it held at once (`peak_held_bytes`) — read by host.info's runtime figures. */
export function bytePathFigures() {
  return { files: figures.files, bytes: figures.bytes, peak_held_bytes: figures.peakHeld };
}
