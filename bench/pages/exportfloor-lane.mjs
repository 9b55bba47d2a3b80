// Bench only (never shipped): one reader lane of the local export's floor (exportfloor-worker.mjs):
// {handles} → each file read through a read-only sync access handle into one reused buffer,
// closed; answers {ok, bytes}. Hashes nothing.

let buffer = new Uint8Array(8 << 20);

self.onmessage = async (event) => {
  try {
    let bytes = 0;
    for (const handle of event.data.handles) {
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
