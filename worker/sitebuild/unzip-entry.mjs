// The worker's zip reader (worker/zip-entries.mjs): fflate's unzipSync, pinned in
// package-lock.json and bundled at build time into dist/vendor/fflate.mjs
// (worker/sitebuild/bundle.py). Nothing is fetched at run time.
export { unzipSync } from "fflate";
