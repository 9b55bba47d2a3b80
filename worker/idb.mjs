// IndexedDB glue for the host (SPEC §5). Thin by design: each function is one transaction
// and one promise, because a Python `await` between two requests would end a transaction
// (PLATFORM.md). Values cross to Python as JSON text. No rule lives here: the hash chain,
// sequence numbers and record shapes are decided in core/audit/.

export const STORES = Object.freeze({ audit: "audit", handles: "handles", keys: "keys" });

// Every failure reaches Python as a plain DOMException of the same name: Pyodide 314 never
// resumes an `await` on a promise rejected with anything else — and a full disk rejects with
// Chromium's QuotaExceededError class (browser_host/jsutil.py `settle`).
function plain(err) {
  return new DOMException(String(err?.message ?? err), String(err?.name ?? "Error"));
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(plain(req.error));
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(plain(tx.error));
    tx.onabort = () =>
      reject(plain(tx.error ?? new DOMException("transaction aborted", "AbortError")));
  });
}

/**
 * Open `name` at `version` (undefined: whatever version it has now, creating it if new),
 * creating any missing store during an upgrade. Never hangs: an upgrade blocked by a
 * connection that will not close rejects (InvalidStateError).
 */
function openAt(name, version) {
  return new Promise((resolve, reject) => {
    const req = version === undefined ? indexedDB.open(name) : indexedDB.open(name, version);
    let gaveUp = false;
    req.onupgradeneeded = () => {
      for (const store of Object.values(STORES)) {
        if (!req.result.objectStoreNames.contains(store)) req.result.createObjectStore(store);
      }
    };
    req.onblocked = () => {
      gaveUp = true;
      reject(
        new DOMException(
          "IndexedDB upgrade blocked by a connection that does not close",
          "InvalidStateError",
        ),
      );
    };
    req.onsuccess = () => {
      if (gaveUp) req.result.close();
      else resolve(req.result);
    };
    req.onerror = () => reject(plain(req.error));
  });
}

/** One IndexedDB database of the host (or of an environment server). */
export class Database {
  #name;
  #db = null;

  constructor(name) {
    this.#name = name;
  }

  /**
   * The open connection (a promise). It follows the database's version rather than pinning
   * one: when any other connection (another tab, a newer build) asks for a version change,
   * this one closes at once so that open never waits, and the next call reopens at whatever
   * version the database then has.
   */
  open() {
    if (!this.#db) {
      this.#db = this.#connect().catch((err) => {
        this.#db = null;
        throw plain(err);
      });
    }
    return this.#db;
  }

  async #connect() {
    let db = await openAt(this.#name);
    if (Object.values(STORES).some((store) => !db.objectStoreNames.contains(store))) {
      const next = db.version + 1;
      db.close();
      db = await openAt(this.#name, next);
    }
    db.onversionchange = () => {
      db.close();
      this.#db = null;
    };
    db.onclose = () => {
      this.#db = null;
    };
    return db;
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
    const [keys, values] = await Promise.all([
      request(store.getAllKeys(range)),
      request(store.getAll(range)),
    ]);
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
    const [keys, values] = await Promise.all([
      request(store.getAllKeys()),
      request(store.getAll()),
    ]);
    return keys.map((key, i) => [key, values[i]]);
  }
}
