// Bench only (never shipped): one reader lane of the local export's floor (exportfloor-worker.mjs):
// {handles} → each file read through a read-only sync access handle into one reused buffer,
// closed; answers {ok, bytes}. Hashes nothing. {root, paths} (arrays of names) → the same, each
// file found under root by this lane, each folder's handle asked once and kept.

let buffer = new Uint8Array(8 << 20);
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
    for (const pending of handlesOf(event.data)) {
      const handle = await pending;
      const access = await handle.createSyncAccessHandle({ mode: "read-only" });
      try {
        const size = access.getSize();
        let at = 0;
        while (at < size) {
          if (buffer.length < Math.min(size - at, 8 << 20)) buffer = new Uint8Array(8 << 20);
          const got = access.read(buffer.subarray(0, Math.min(buffer.length, size - at)), { at });
          if (got <= 0) break;
          at += got;
        }
        bytes += at;
      } finally {
        access.close();
      }
    }
    self.postMessage({ ok: true, bytes });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

self.postMessage({ kind: "ready" });
