// The byte path's hashers (worker/byte-path.mjs): hash-wasm's streaming sha256 and crc32, pinned
// in package-lock.json and bundled at build time into dist/vendor/hash-wasm.mjs
// (worker/sitebuild/bundle.py). Nothing is fetched at run time.
export { createCRC32, createSHA256 } from "hash-wasm";
