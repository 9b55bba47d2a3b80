// Secrets at rest (SPEC §1, §6): every HOST_DIR document is sealed with AES-GCM under a
// non-extractable WebCrypto key kept in this database's `keys` store. A copy of the profile's
// OPFS files alone reveals no token or bearer; same-origin script could still use the key —
// that is outside the threat model (docs/security.md). Format: "VBX1" ‖ 12-byte IV ‖ ciphertext.

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
      key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
      await this.#db.kvPut("keys", KEY_ID, key);
    }
    this.#key = key;
    return key;
  }

  /** bytes → sealed bytes (Uint8Array). */
  async seal(bytes) {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await this.#getKey(), bytes));
    const out = new Uint8Array(MAGIC.length + iv.length + sealed.length);
    out.set(MAGIC, 0);
    out.set(iv, MAGIC.length);
    out.set(sealed, MAGIC.length + iv.length);
    return out;
  }

  /** sealed bytes → bytes; throws if the bytes were not sealed with this key or were altered. */
  async open(bytes) {
    if (bytes.length < 16 || !MAGIC.every((b, i) => bytes[i] === b)) throw new DOMException("not sealed", "DataError");
    const iv = bytes.subarray(4, 16);
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, await this.#getKey(), bytes.subarray(16)));
  }
}
