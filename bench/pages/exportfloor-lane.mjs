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
// must hand on for the bytes to reach a download. `hash: "crc"` hashes crc32 only (the zip's
// own; the floor of a read + crc32 + delivery, issue 34 round 41), `hash: true` both.
// {cost: bytes} instead: what each hash costs here, per MB, over one buffer of `bytes` (the
// export's lanes' work profiled apart from the reads): {ok, cost: {name: MB/s}}.

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

/** A crc32 in plain JavaScript, slicing-by-8 (a candidate to replace hash-wasm's; measured
 * by `hashCosts`). */
const TABLES = (() => {
  const t = Array.from({ length: 8 }, () => new Int32Array(256));
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[0][n] = c;
  }
  for (let n = 0; n < 256; n++)
    for (let k = 1; k < 8; k++) t[k][n] = t[0][t[k - 1][n] & 0xff] ^ (t[k - 1][n] >>> 8);
  return t;
})();

function crcSlicing8(bytes) {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let c = -1;
  let i = 0;
  const end8 = bytes.length - (bytes.length % 8);
  for (; i < end8; i += 8) {
    const a = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c =
      t7[a & 0xff] ^
      t6[(a >>> 8) & 0xff] ^
      t5[(a >>> 16) & 0xff] ^
      t4[a >>> 24] ^
      t3[bytes[i + 4]] ^
      t2[bytes[i + 5]] ^
      t1[bytes[i + 6]] ^
      t0[bytes[i + 7]];
  }
  for (; i < bytes.length; i++) c = t0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** MB/s (best of 3) of each hash the export could compute over `size` bytes (issue 34). */
async function hashCosts(size) {
  crc ??= await createCRC32();
  sha ??= await createSHA256();
  const data = new Uint8Array(size);
  for (let at = 0; at < size; at += 65536)
    crypto.getRandomValues(data.subarray(at, Math.min(size, at + 65536)));
  const rate = async (fn) => {
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await fn();
      best = Math.min(best, performance.now() - start);
    }
    return Math.round((size / 1e6 / (best / 1000)) * 10) / 10;
  };
  const pieces = (fn) => async () => {
    for (let at = 0; at < size; at += PIECE) await fn(data.subarray(at, at + PIECE));
  };
  const slicing = crcSlicing8(data.subarray(0, 1 << 20));
  crc.init();
  crc.update(data.subarray(0, 1 << 20));
  if (parseInt(crc.digest("hex"), 16) !== slicing) throw new Error("slicing-by-8 crc32 is wrong");
  return {
    "crc32-hash-wasm": await rate(() => {
      crc.init();
      crc.update(data);
      crc.digest("hex");
    }),
    "crc32-js-slicing-8": await rate(() => crcSlicing8(data)),
    "sha256-webcrypto-8MiB": await rate(pieces((p) => crypto.subtle.digest("SHA-256", p))),
    "sha256-hash-wasm": await rate(() => {
      sha.init();
      sha.update(data);
      sha.digest("hex");
    }),
    "copy-8MiB-slices": await rate(pieces((p) => p.slice())),
  };
}

self.onmessage = async (event) => {
  try {
    if (event.data.cost) {
      self.postMessage({ ok: true, cost: await hashCosts(event.data.cost) });
      return;
    }
    const hash = Boolean(event.data.hash);
    const shaToo = event.data.hash === true;
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
        const whole = shaToo && size <= PIECE;
        if (hash) {
          crc.init();
          if (shaToo && !whole) sha.init();
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
            else if (shaToo) sha.update(done);
          }
          at += got;
        }
        if (hash) {
          crc.digest("hex");
          if (shaToo && !whole) sha.digest("hex");
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
