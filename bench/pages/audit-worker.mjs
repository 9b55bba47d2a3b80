// Bench only (never shipped): audit append rate against a raw IndexedDB put loop.
// Python is booted exactly as the host boots it (worker/boot.mjs: the site's Pyodide and the
// locked wheels), then core's AuditLog appends through browser_host's IdbAuditSink over
// worker/idb.mjs — the host's own path — into a fresh database. The raw loop puts records of
// the same size, one transaction each, with the same durability ("strict"), awaited in turn.

import { bootPython } from "../worker/boot.mjs";
import { installEgressGuard } from "../worker/egress-guard.mjs";
import { Database } from "../worker/idb.mjs";

const SITE = new URL("../", import.meta.url);
installEgressGuard({ site: SITE }); // booted exactly as the host boots
const booted = bootPython({ site: SITE, report: () => {} });

const PY = `
import asyncio, json, time
from browser_host.idb_audit import IdbAuditSink
from core.audit import AuditLog
from core.runtime import SystemClock

async def bench_audit(db, count, concurrent):
    log = AuditLog(IdbAuditSink(db), SystemClock(), env="bench")
    await log.head_seq()
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
    assert sorted(seqs) == list(range(1, count + 1)), seqs[:5]
    verified = (await log.verify()).ok
    last = (await IdbAuditSink(db).last()).record
    return json.dumps({"seconds": seconds, "verified": verified, "record_bytes": len(json.dumps(last))})

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
  await new Promise((r) => { const q = indexedDB.deleteDatabase(name); q.onsuccess = q.onerror = () => r(); });
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
    const benchAudit = pyodide.runPython(PY);
    const out = {};
    for (const concurrent of [false, true]) {
      const dbName = `bench-audit-${concurrent ? "concurrent" : "sequential"}-${Date.now()}`;
      const db = new Database(dbName);
      const py = JSON.parse(await benchAudit(db, count, concurrent));
      const raw = await rawPuts(`${dbName}-raw`, count, py.record_bytes, concurrent);
      out[concurrent ? "concurrent" : "sequential"] = {
        audit_appends_per_s: count / py.seconds,
        raw_puts_per_s: count / raw,
        chain_verified: py.verified,
        record_bytes: py.record_bytes,
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
