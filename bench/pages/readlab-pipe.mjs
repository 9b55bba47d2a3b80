// Bench only (never shipped): the reading pipeline of the `y-…` cases of readlab-worker.mjs
// (round five), run either in the lab worker itself (`y-full`) or in each reader lane
// (readlab-lane.mjs, `y-lanes-N`). Given the project's folder handle and, segment by segment,
// runs of consecutive files (their path parts): each file read through a read-only sync access
// handle (8 opened ahead, across the queued segments) into an 8 MiB staging buffer, crc32
// (hash-wasm) and sha256 (WebCrypto) in place, one Blob per buffer-full; `done(seg, blobs)` per
// segment; `t` the ms of each step.

import { createCRC32 } from "../vendor/hash-wasm.mjs";

const MiB = 1 << 20;
const AHEAD = 8;

export function makePipe(root, done) {
  const folders = new Map();
  const queue = []; // files to read: {parts, seg, last}
  const opened = []; // parallel to queue: promises of handles
  let crc = null;
  const stage = new Uint8Array(8 * MiB);
  let staged = 0;
  let blobs = [];
  const digests = [];
  const t = { wait: 0, read: 0, close: 0, crc: 0, digest: 0, blob: 0 };
  let running = false;

  const folderOf = (parts) => {
    const key = parts.join("/");
    if (!folders.has(key))
      folders.set(
        key,
        parts.length === 0
          ? Promise.resolve(root)
          : folderOf(parts.slice(0, -1)).then((d) => d.getDirectoryHandle(parts.at(-1))),
      );
    return folders.get(key);
  };
  const openAhead = () => {
    for (let i = 0; i < Math.min(AHEAD, queue.length); i++) {
      if (opened[i] === undefined) {
        const parts = queue[i].parts;
        opened[i] = folderOf(parts.slice(0, -1))
          .then((d) => d.getFileHandle(parts.at(-1)))
          .then((h) => h.createSyncAccessHandle({ mode: "read-only" }));
        opened[i].catch(() => {});
      }
    }
  };
  const send = () => {
    if (staged === 0) return;
    const t0 = performance.now();
    blobs.push(new Blob([stage.subarray(0, staged)]));
    t.blob += performance.now() - t0;
    staged = 0;
  };
  const run = async () => {
    if (running) return;
    running = true;
    crc ??= await createCRC32();
    while (queue.length) {
      openAhead();
      let t0 = performance.now();
      const access = await opened[0];
      const { seg, last } = queue[0];
      queue.shift();
      opened.shift();
      openAhead();
      t.wait += performance.now() - t0;
      t0 = performance.now();
      const size = access.getSize();
      if (staged + size > stage.length) send();
      const view = stage.subarray(staged, staged + size);
      for (let at = 0; at < size;) at += access.read(view.subarray(at), { at });
      t.read += performance.now() - t0;
      t0 = performance.now();
      access.close();
      t.close += performance.now() - t0;
      t0 = performance.now();
      crc.init();
      crc.update(view);
      crc.digest("hex");
      t.crc += performance.now() - t0;
      t0 = performance.now();
      digests.push(crypto.subtle.digest("SHA-256", view));
      t.digest += performance.now() - t0;
      staged += size;
      if (last) {
        const sums = await Promise.all(digests.splice(0));
        send();
        done(seg, blobs, sums.length);
        blobs = [];
      }
    }
    running = false;
  };
  return {
    t,
    push(files, seg) {
      files.forEach((parts, i) => queue.push({ parts, seg, last: i === files.length - 1 }));
      run();
    },
  };
}
