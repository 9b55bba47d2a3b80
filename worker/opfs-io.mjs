// Storage steps that browser_host/opfs.py cannot safely or quickly make from Python, so the
// worker registers them as the Python module `voicebox_io` (worker/host.mjs, worker/peer.mjs):
// writing and reserving bytes (safely), and listing a folder (quickly: one wait, not one per file;
// names only, when no size is needed).
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

/** The name of every child of `dirHandle`, nothing asked per child (keys only). */
export async function listNames(dirHandle) {
  const names = [];
  for await (const name of dirHandle.keys()) names.push(name);
  return names;
}

/**
 * Every child of `dirHandle` as `{name, kind: "file"|"directory", size, lastModified}`, the
 * files' sizes asked in parallel (one wait per folder instead of one per file; figures in
 * docs/operations.md). A child removed while being listed (a temporary just moved into
 * place) is left out; any other failure rejects (plain).
 */
export async function listEntries(dirHandle) {
  const children = [];
  for await (const child of dirHandle.values()) children.push(child);
  const rows = await Promise.all(children.map(async (child) => {
    if (child.kind === "directory") return { name: child.name, kind: "directory", size: 0, lastModified: 0 };
    try {
      const file = await child.getFile();
      return { name: child.name, kind: "file", size: file.size, lastModified: file.lastModified };
    } catch (err) {
      if (err?.name === "NotFoundError") return null;
      throw plain(err);
    }
  }));
  return rows.filter((row) => row !== null);
}

/**
 * Read the file `name` of `dirHandle` in one wait (issue 18: getFileHandle, getFile and the
 * read were three waits from Python, each a round trip through the event loop): the whole
 * file when `spans` is null, else one Uint8Array per [offset, length] span (Blob.slice: only
 * those bytes are read). Rejects (plain) with the browser's name — NotFoundError,
 * TypeMismatchError (a folder) — and a message that starts "open: " or "read: ", saying
 * which wait failed.
 */
export async function readFile(dirHandle, name, spans) {
  let file;
  try {
    file = await (await dirHandle.getFileHandle(name)).getFile();
  } catch (err) {
    throw new DOMException(`open: ${err?.message ?? err}`, String(err?.name ?? "Error"));
  }
  try {
    if (spans === null || spans === undefined) return new Uint8Array(await file.arrayBuffer());
    return await Promise.all(Array.from(spans, ([offset, length]) => {
      const start = Math.min(file.size, Math.max(0, offset));
      return file.slice(start, Math.min(file.size, start + Math.max(0, length))).arrayBuffer()
        .then((buffer) => new Uint8Array(buffer));
    }));
  } catch (err) {
    throw new DOMException(`read: ${err?.message ?? err}`, String(err?.name ?? "Error"));
  }
}
