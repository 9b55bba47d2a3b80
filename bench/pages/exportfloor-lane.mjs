// Bench only (never shipped): one reader lane of the local export's floors (exportfloor-worker.mjs):
// {handles, hash} → each file read through a read-only sync access handle into one reused
// buffer, closed; answers {ok, bytes}. With `hash` (the hashed floor, issue 34) each file is
// also hashed as an archive must: crc32 (hash-wasm, the zip's) and sha256 (the manifest's:
// WebCrypto for a file of at most 8 MiB — its digests left in flight while the next files are
// read, awaited at the run's end — hash-wasm's streaming sha256 beyond). No Blob, no archive.
// {root, paths} (arrays of names) instead of handles → the same, each file found under root by
// this lane, each folder's handle asked once and kept; with `getFile` (a count) each file is
// read with getFile().arrayBuffer(), that many in flight, hashing nothing (issue 33's search
// floor). With `deliver` (the delivered hashed floor, issue 34) every piece read is also copied
// into a buffer of its own and answered with the run (`chunks`, transferred): what a reader
// must hand on for the bytes to reach a download.

import { createCRC32, createSHA256 } from "../vendor/hash-wasm.mjs";

const PIECE = 8 << 20;
const buffer = new Uint8Array(PIECE);
let crc = null;
let sha = null;
const folders = new Map(); // "a/b" -> promise of its handle (sah-paths)

function folderOf(root, parts) {
  const key = parts.join("/");
  if (!folders.has(key))
    folders.set(
      key,
      parts.length === 0
        ? Promise.resolve(root)
        : folderOf(root, parts.slice(0, -1)).then((d) => d.getDirectoryHandle(parts.at(-1))),
    );
  return folders.get(key);
}

function handlesOf(data) {
  if (data.handles) return data.handles.map((h) => Promise.resolve(h));
  return data.paths.map((parts) =>
    folderOf(data.root, parts.slice(0, -1)).then((d) => d.getFileHandle(parts.at(-1))),
  );
}

self.onmessage = async (event) => {
  try {
    const hash = Boolean(event.data.hash);
    if (hash) {
      crc ??= await createCRC32();
      sha ??= await createSHA256();
    }
    let bytes = 0;
    if (event.data.getFile) {
      // getfile-lanes: getFile().arrayBuffer(), event.data.getFile reads in flight
      const pending = handlesOf(event.data);
      let next = 0;
      const one = async () => {
        while (next < pending.length) {
          const handle = await pending[next++];
          bytes += (await (await handle.getFile()).arrayBuffer()).byteLength;
        }
      };
      await Promise.all(Array.from({ length: event.data.getFile }, one));
      self.postMessage({ ok: true, bytes });
      return;
    }
    const digests = [];
    const chunks = [];
    const deliver = Boolean(event.data.deliver);
    for (const pending of handlesOf(event.data)) {
      const handle = await pending;
      const access = await handle.createSyncAccessHandle({ mode: "read-only" });
      try {
        const size = access.getSize();
        const whole = hash && size <= PIECE;
        if (hash) {
          crc.init();
          if (!whole) sha.init();
        }
        let at = 0;
        while (at < size) {
          const view = buffer.subarray(0, Math.min(buffer.length, size - at));
          let got = 0;
          while (got < view.length) {
            const n = access.read(view.subarray(got), { at: at + got });
            if (n <= 0) break;
            got += n;
          }
          if (got === 0) break;
          if (deliver) chunks.push(view.slice(0, got));
          if (hash) {
            const done = view.subarray(0, got);
            crc.update(done);
            if (whole) digests.push(crypto.subtle.digest("SHA-256", done));
            else sha.update(done);
          }
          at += got;
        }
        if (hash) {
          crc.digest("hex");
          if (!whole) sha.digest("hex");
        }
        bytes += at;
      } finally {
        access.close();
      }
    }
    await Promise.all(digests);
    self.postMessage(
      { ok: true, bytes, chunks },
      chunks.map((c) => c.buffer),
    );
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

self.postMessage({ kind: "ready" });
