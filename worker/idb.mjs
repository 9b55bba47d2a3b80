// IndexedDB glue for the host (SPEC §5). Thin by design: each function is one transaction
// and one promise, because a Python `await` between two requests would end a transaction
// (PLATFORM.md). Values cross to Python as JSON text. No rule lives here: the hash chain,
// sequence numbers and record shapes are decided in core/audit.py.

export const STORES = Object.freeze({ audit: "audit", handles: "handles", keys: "keys" });
const DB_VERSION = 1;

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new DOMException("transaction aborted", "AbortError"));
  });
}

/** One IndexedDB database of the host (or of an environment server). */
export class Database {
  #name;
  #db = null;

  constructor(name) {
    this.#name = name;
  }

  open() {
    if (this.#db) return this.#db;
    this.#db = new Promise((resolve, reject) => {
      const req = indexedDB.open(this.#name, DB_VERSION);
      req.onupgradeneeded = () => {
        const db = req.result;
        for (const name of Object.values(STORES)) {
          if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
        }
      };
      req.onblocked = () => reject(new DOMException("IndexedDB upgrade blocked by another tab", "InvalidStateError"));
      req.onsuccess = () => {
        const db = req.result;
        // Another tab upgrading the schema: close at once so its open never hangs; the next
        // call here reopens.
        db.onversionchange = () => { db.close(); this.#db = null; };
        db.onclose = () => { this.#db = null; };
        resolve(db);
      };
      req.onerror = () => { this.#db = null; reject(req.error); };
    });
    return this.#db;
  }

  /** Store one audit record (JSON text) under `seq`; durable when it resolves; fails if taken. */
  async auditAppend(seq, json) {
    const db = await this.open();
    const tx = db.transaction(STORES.audit, "readwrite", { durability: "strict" });
    tx.objectStore(STORES.audit).add(JSON.parse(json), seq);
    await done(tx);
  }

  /**
   * Store several audit records in ONE strict transaction: `json` is `[[seq, record], ...]`.
   * All or nothing — any taken `seq` aborts the whole write. Durable when it resolves.
   */
  async auditAppendMany(json) {
    const rows = JSON.parse(json);
    const db = await this.open();
    const tx = db.transaction(STORES.audit, "readwrite", { durability: "strict" });
    const store = tx.objectStore(STORES.audit);
    for (const [seq, record] of rows) store.add(record, seq);
    await done(tx);
  }

  /** The newest record as JSON text `{"seq": n, "record": {...}}`, or the text `null`. */
  async auditLast() {
    const db = await this.open();
    const tx = db.transaction(STORES.audit, "readonly");
    const cursor = await request(tx.objectStore(STORES.audit).openCursor(null, "prev"));
    return JSON.stringify(cursor ? { seq: cursor.key, record: cursor.value } : null);
  }

  /** Records with first <= seq <= last, ascending, as JSON text `[{"seq", "record"}, ...]`. */
  async auditRange(first, last) {
    const db = await this.open();
    const store = db.transaction(STORES.audit, "readonly").objectStore(STORES.audit);
    const range = IDBKeyRange.bound(first, last);
    const [keys, values] = await Promise.all([request(store.getAllKeys(range)), request(store.getAll(range))]);
    return JSON.stringify(keys.map((seq, i) => ({ seq, record: values[i] })));
  }

  /** Get / put / delete a structured-clonable value (a directory handle, a CryptoKey). */
  async kvGet(storeName, key) {
    const db = await this.open();
    return request(db.transaction(storeName, "readonly").objectStore(storeName).get(key));
  }

  async kvPut(storeName, key, value) {
    const db = await this.open();
    const tx = db.transaction(storeName, "readwrite", { durability: "strict" });
    tx.objectStore(storeName).put(value, key);
    await done(tx);
  }

  async kvDelete(storeName, key) {
    const db = await this.open();
    const tx = db.transaction(storeName, "readwrite", { durability: "strict" });
    tx.objectStore(storeName).delete(key);
    await done(tx);
  }

  /** Every [key, value] of a store (values are structured clones: handles stay live). */
  async kvEntries(storeName) {
    const db = await this.open();
    const store = db.transaction(storeName, "readonly").objectStore(storeName);
    const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
    return keys.map((key, i) => [key, values[i]]);
  }
}
