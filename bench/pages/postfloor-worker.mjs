// Bench only (never shipped): what a mission.post asks of the platform, without the host. Loads
// the site's Pyodide first (so the page is as fresh and as heavy as the host's), prepares once
// per profile a project-like folder (a manifest, a block store, a 1 MiB index, a 32 KiB mailbox
// segment), then answers each "post" with the storage steps the host's post makes in a settled
// page (browser_host/opfs.py, worker/opfs-io.mjs, worker/idb.mjs): three reads through read-only
// sync access handles opened then (the host closes its cached handles before every write), two
// stats, the segment written atomically (a temporary by createWritable, then moved over it),
// and one audit-sized record added in a strict IndexedDB transaction.

import { loadPyodide } from "../pyodide/pyodide.mjs";

const INDEX_BYTES = 1 << 20;
const SEGMENT = new Uint8Array(32 * 1024).fill(0x61);
const RECORD = { kind: "mission-letter-posted", details: "x".repeat(480) };
let folder = null;
let db = null;
let seq = 0;

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open("bench-postfloor", 1);
    req.onupgradeneeded = () => req.result.createObjectStore("audit");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function ensure(name, size) {
  const handle = await folder.getFileHandle(name, { create: true });
  if ((await handle.getFile()).size === size) return;
  const writable = await handle.createWritable();
  await writable.write(new Uint8Array(size).fill(0x62));
  await writable.close();
}

async function readSync(name, offset, length) {
  const handle = await folder.getFileHandle(name);
  const access = await handle.createSyncAccessHandle({ mode: "read-only" });
  try {
    const out = new Uint8Array(length);
    access.read(out, { at: offset });
    return out;
  } finally {
    access.close();
  }
}

async function post() {
  await readSync("manifest.json", 0, 512);
  await readSync("blocks.json", 0, 8192);
  await readSync("index.bin", Math.floor(Math.random() * (INDEX_BYTES - 4096)), 4096);
  for (const name of ["seg-0", "seg-1"]) {
    try {
      await (await folder.getFileHandle(name)).getFile();
    } catch {
      // seg-1 does not exist: the host's second stat finds nothing too
    }
  }
  const tmp = await folder.getFileHandle(`tmp-${seq}`, { create: true });
  const writable = await tmp.createWritable();
  await writable.write(SEGMENT);
  await writable.close();
  await tmp.move("seg-0");
  seq += 1;
  const tx = db.transaction("audit", "readwrite", { durability: "strict" });
  tx.objectStore("audit").put({ ...RECORD, seq }, `${Date.now()}-${seq}`);
  await done(tx);
}

self.onmessage = async (event) => {
  const { id } = event.data;
  try {
    await post();
    self.postMessage({ kind: "answer", id });
  } catch (err) {
    self.postMessage({ kind: "answer", id, error: String(err?.message ?? err) });
  }
};

try {
  await loadPyodide({ indexURL: new URL("../pyodide/", import.meta.url).href });
  const root = await navigator.storage.getDirectory();
  folder = await root.getDirectoryHandle("bench-postfloor", { create: true });
  await ensure("manifest.json", 512);
  await ensure("blocks.json", 8192);
  await ensure("index.bin", INDEX_BYTES);
  await ensure("seg-0", SEGMENT.byteLength);
  db = await openDb();
  seq = Date.now();
  self.postMessage({ kind: "ready" });
} catch (err) {
  self.postMessage({ kind: "fatal", message: String(err?.message ?? err) });
}
