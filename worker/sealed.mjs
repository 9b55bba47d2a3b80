// The host's keys at rest (SPEC §1, §5, §6), each a non-extractable WebCrypto key kept in this
// database's `keys` store:
// - Sealer: every HOST_DIR document is sealed with AES-GCM. A copy of the profile's OPFS files
//   alone reveals no token or bearer. Format: "VBX1" ‖ 12-byte IV ‖ ciphertext.
// - AuditKey: HMAC-SHA256 over what core/audit/ asks (each audit record's hash, the anchor's
//   checkpoint), so an audit record cannot be made without this key.
// Same-origin script could still use either key — that is outside the threat model
// (docs/security.md).

const MAGIC = new Uint8Array([0x56, 0x42, 0x58, 0x31]); // "VBX1"
const KEY_ID = "host-state";

export class Sealer {
  #db;
  #key = null;

  constructor(database) {
    this.#db = database;
  }

  async #getKey() {
    if (this.#key) return this.#key;
    let key = await this.#db.kvGet("keys", KEY_ID);
    if (!key) {
      key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, [
        "encrypt",
        "decrypt",
      ]);
      await this.#db.kvPut("keys", KEY_ID, key);
    }
    this.#key = key;
    return key;
  }

  /** bytes → sealed bytes (Uint8Array). */
  async seal(bytes) {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await this.#getKey(), bytes),
    );
    const out = new Uint8Array(MAGIC.length + iv.length + sealed.length);
    out.set(MAGIC, 0);
    out.set(iv, MAGIC.length);
    out.set(sealed, MAGIC.length + iv.length);
    return out;
  }

  /** sealed bytes → bytes; throws if the bytes were not sealed with this key or were altered. */
  async open(bytes) {
    if (bytes.length < 16 || !MAGIC.every((b, i) => bytes[i] === b))
      throw new DOMException("not sealed", "DataError");
    const iv = bytes.subarray(4, 16);
    return new Uint8Array(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv },
        await this.#getKey(),
        bytes.subarray(16),
      ),
    );
  }
}

const AUDIT_KEY_ID = "audit-mac";

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

export class AuditKey {
  #db;
  #key = null; // a promise: two first calls at once must not make two keys

  constructor(database) {
    this.#db = database;
  }

  #getKey() {
    this.#key ??= (async () => {
      let key = await this.#db.kvGet("keys", AUDIT_KEY_ID);
      if (!key) {
        key = await crypto.subtle.generateKey(
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        );
        await this.#db.kvPut("keys", AUDIT_KEY_ID, key);
      }
      return key;
    })().catch((err) => {
      this.#key = null;
      throw new DOMException(String(err?.message ?? err), String(err?.name ?? "Error"));
    });
    return this.#key;
  }

  /** bytes → HMAC-SHA256 under this host's audit key, as 64 lowercase hex digits. */
  async mac(bytes) {
    return hex(await crypto.subtle.sign("HMAC", await this.#getKey(), bytes));
  }

  /** [bytes, ...] → [mac, ...] in order: a batch of records in one call from Python. */
  async macMany(items) {
    const key = await this.#getKey();
    const macs = await Promise.all(
      Array.from(items, (bytes) => crypto.subtle.sign("HMAC", key, bytes)),
    );
    return macs.map(hex);
  }
}
