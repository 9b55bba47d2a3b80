// Bench only (never shipped): audit append rate against a raw IndexedDB put loop.
// Python is booted exactly as the host boots it (worker/boot.mjs: the site's Pyodide and the
// locked wheels), then core's AuditLog appends through browser_host's IdbAuditSink over
// worker/idb.mjs — the host's own path: each record MAC'd by the WebCrypto AuditKey, the
// anchor sealed into an OPFS HOST_DIR after each group commit — into a fresh database. The
// same appends are made a second time with the anchor kept in memory (no HOST_DIR write), so
// the difference is what the anchor costs; the anchor writes and the MACs are also timed one
// by one. The raw loop puts records of the same size, one transaction each, with the same
// durability ("strict"), awaited in turn.

import { bootPython } from "../worker/boot.mjs";
import { installEgressGuard } from "../worker/egress-guard.mjs";
import { Database } from "../worker/idb.mjs";
import * as io from "../worker/opfs-io.mjs";
import { AuditKey, Sealer } from "../worker/sealed.mjs";

const SITE = new URL("../", import.meta.url);
installEgressGuard({ site: SITE }); // booted exactly as the host boots
const booted = bootPython({ site: SITE, report: () => {} });

const PY = `
import asyncio, json, time
import js
from browser_host.audit_key import WebCryptoAuditKey
from browser_host.idb_audit import IdbAuditSink
from browser_host.opfs import HandleHostState, subfolder
from browser_host.sealed_state import SealedHostState
from core.audit import AuditLog
from core.memory.adapters import MemoryHostState
from core.runtime import SystemClock


class Timed:
    """Wraps a port, adding up the time spent in some of its methods."""

    def __init__(self, inner, *methods):
        self.inner, self.methods, self.calls, self.seconds = inner, methods, 0, 0.0

    def __getattr__(self, name):
        real = getattr(self.inner, name)
        if name not in self.methods:
            return real

        async def timed(*args):
            start = time.perf_counter()
            try:
                return await real(*args)
            finally:
                self.calls += 1
                self.seconds += time.perf_counter() - start

        return timed


async def bench_audit(db, sealer, audit_key, folder_name, count, concurrent, anchored):
    opfs = await js.navigator.storage.getDirectory()
    host_dir = SealedHostState(HandleHostState(await subfolder(opfs, folder_name, create=True)), sealer)
    state = Timed(host_dir if anchored else MemoryHostState(), "store")
    key = Timed(WebCryptoAuditKey(audit_key), "mac", "mac_many")
    log = AuditLog(IdbAuditSink(db), SystemClock(), key=key, state=state, env="bench",
                   background_anchor=True)
    await log.head_seq()
    state.calls, state.seconds, key.calls, key.seconds = 0, 0.0, 0, 0.0
    details = {"path": "src/module.py", "size": 1024}

    def one():
        return log.append(actor="page", op="file.read", decision="admitted", rule="admitted",
                          project="p_0123456789abcdef", details=details)

    start = time.perf_counter()
    if concurrent:
        seqs = await asyncio.gather(*(one() for _ in range(count)))
    else:
        seqs = [await one() for _ in range(count)]
    seconds = time.perf_counter() - start
    macs, mac_seconds = key.calls, key.seconds
    verdict = await log.verify()  # waits for the last anchor write (and MACs every record)
    anchor_writes, anchor_seconds = state.calls, state.seconds
    assert sorted(seqs) == list(range(1, count + 1)), seqs[:5]
    last = (await IdbAuditSink(db).last()).record
    return json.dumps({
        "seconds": seconds, "verified": verdict.ok and verdict.anchor_seq == count,
        "record_bytes": len(json.dumps(last)), "anchor_writes": anchor_writes,
        "anchor_seconds": anchor_seconds, "macs": macs, "mac_seconds": mac_seconds,
        "anchor_failures": log.anchor_failures,
    })

bench_audit
`;

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

async function rawPuts(name, count, recordBytes, concurrent) {
  await new Promise((r) => {
    const q = indexedDB.deleteDatabase(name);
    q.onsuccess = q.onerror = () => r();
  });
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("audit");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const record = { details: "x".repeat(Math.max(0, recordBytes - 20)) };
  const put = (seq) => {
    const tx = db.transaction("audit", "readwrite", { durability: "strict" });
    tx.objectStore("audit").add({ seq, ...record }, seq);
    return done(tx);
  };
  const start = performance.now();
  if (concurrent) await Promise.all(Array.from({ length: count }, (_, i) => put(i + 1)));
  else for (let i = 1; i <= count; i++) await put(i);
  const seconds = (performance.now() - start) / 1000;
  db.close();
  return seconds;
}

self.onmessage = async (event) => {
  const { count } = event.data;
  try {
    const { pyodide } = await booted;
    pyodide.registerJsModule("voicebox_io", io); // browser_host/opfs.py writes through it
    const benchAudit = pyodide.runPython(PY);
    const out = {};
    for (const concurrent of [false, true]) {
      const mode = concurrent ? "concurrent" : "sequential";
      const dbName = `bench-audit-${mode}-${Date.now()}`;
      const runs = {};
      for (const anchored of [true, false]) {
        const db = new Database(`${dbName}-${anchored ? "anchored" : "in-memory"}`);
        const py = JSON.parse(
          await benchAudit(
            db,
            new Sealer(db),
            new AuditKey(db),
            `${dbName}-host`,
            count,
            concurrent,
            anchored,
          ),
        );
        runs[anchored ? "anchored" : "inMemory"] = py;
      }
      const py = runs.anchored;
      const raw = await rawPuts(`${dbName}-raw`, count, py.record_bytes, concurrent);
      out[mode] = {
        audit_appends_per_s: count / py.seconds,
        anchor_in_memory_appends_per_s: count / runs.inMemory.seconds,
        raw_puts_per_s: count / raw,
        chain_verified: py.verified && runs.inMemory.verified,
        record_bytes: py.record_bytes,
        anchor_writes: py.anchor_writes,
        anchor_failures: py.anchor_failures,
        anchor_ms_per_write: py.anchor_writes ? (1000 * py.anchor_seconds) / py.anchor_writes : 0,
        anchor_ms_per_append: (1000 * py.anchor_seconds) / count,
        mac_ms_per_append: (1000 * py.mac_seconds) / count,
      };
    }
    self.postMessage({ ok: true, count, ...out });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

booted.then(
  () => self.postMessage({ kind: "ready" }),
  (err) => self.postMessage({ ok: false, message: `boot: ${err.message}` }),
);
