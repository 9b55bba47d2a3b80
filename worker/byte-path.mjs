// The export's byte path (docs/archives.md §4): one file's bytes from OPFS to the page, hashed on
// the way, without entering the Wasm heap. Registered for Python as the module `voicebox_bytes`
// (worker/host.mjs); browser_host/byte_path.py calls relayFile once per file, with the bytes the
// export made itself (`lead`: headers, descriptors) to send first. Thin: what goes in the archive,
// in which order, and every byte around the files' data are decided in Python
// (core/archive/export.py, core/archive/zipformat.py); the bounds come from Python too.

import { createCRC32, createSHA256 } from "../vendor/hash-wasm.mjs";

const figures = { files: 0, bytes: 0, held: 0, peakHeld: 0 };

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

/**
 * Send `lead` (Uint8Array, may be empty) and then every byte of the file `handle` through
 * `emit(Uint8Array)` (which transfers it to the page), in order. A file of at most `wholeLimit`
 * bytes is read in one piece and hashed by WebCrypto (`crypto.subtle.digest`); a larger one in
 * pieces of `chunkBytes`, hashed by hash-wasm's streaming sha256. crc32 by hash-wasm. At most
 * about 2 × max(wholeLimit, chunkBytes) bytes are held at once (WebCrypto copies its input).
 * Resolves {size, crc32, sha256}; rejects (a plain DOMException) when reading fails.
 */
export async function relayFile(handle, lead, emit, wholeLimit, chunkBytes) {
  try {
    const file = await handle.getFile();
    const crc = await createCRC32();
    crc.init();
    if (lead.byteLength) emit(lead);
    let sha256;
    if (file.size <= wholeLimit) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      hold(2 * bytes.byteLength);
      const digest = crypto.subtle.digest("SHA-256", bytes); // copies the bytes first
      crc.update(bytes);
      emit(bytes);
      sha256 = hex(await digest);
      figures.held -= 2 * bytes.byteLength;
    } else {
      const sha = await createSHA256();
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
    }
    figures.files += 1;
    figures.bytes += file.size;
    return { size: file.size, crc32: parseInt(crc.digest("hex"), 16), sha256 };
  } catch (err) {
    throw plain(err);
  }
}

/** What the byte path did since the worker started: files and bytes relayed, and the most bytes
 * it held at once (`peak_held_bytes`) — read by host.info's runtime figures. */
export function bytePathFigures() {
  return { files: figures.files, bytes: figures.bytes, peak_held_bytes: figures.peakHeld };
}
