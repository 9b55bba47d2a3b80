// The entries of a zip archive, read in JavaScript (issue 34, cold boot). The wheels' bytecode
// (pyodide/site-bytecode.zip.gz: stored entries, gzipped whole) is inflated while Pyodide is
// still starting, so that once Python is up its 321 files are only written into site-packages.
// Before, Pyodide's `unpackArchive` ran Python's `zipfile` over them after Python was up, on
// the path to `ready`: 0.33–0.80 s of a cold boot under load 5–8 on the 2 cores, against
// 0.03–0.08 s for the writes now (docs/operations.md, "Cold boot, issue 34 (round 43)").
//
// Thin glue over the pinned fflate (`unzipSync`, bundled into vendor/fflate.mjs at build time):
// it reads the archive; this module refuses what must not be written — a path that is not a
// plain relative one, a compression other than stored or deflate — before any entry is
// inflated, and checks each entry's size against its header (an encrypted entry fails it). The archive's bytes
// were already checked whole (browser SRI against the sha256 site-manifest.json pins).

import { unzipSync } from "../vendor/fflate.mjs";

function refused(why) {
  return new Error(`not a zip this reader takes: ${why}`);
}

/** A relative path of plain names, or a refusal: never absolute, never `..`, never empty. */
function safeName(name) {
  const parts = name.split("/");
  if (name.startsWith("/") || parts.some((p) => p === ".." || p === "." || p.includes("\\")))
    throw refused(`entry ${JSON.stringify(name)} is not a plain relative path`);
  return name;
}

/**
 * The files of the zip archive `buffer` (an ArrayBuffer): a promise of `[{name, bytes}]`,
 * `name` its relative path ("a/b/c.pyc"; folders are not listed), `bytes` a Uint8Array of
 * exactly its uncompressed size. Rejects (an Error) on anything this reader does not take, a
 * damaged archive, or an entry whose size is not the one its header says.
 */
export async function zipEntries(buffer) {
  const sizes = new Map();
  let files;
  try {
    files = unzipSync(new Uint8Array(buffer), {
      filter(file) {
        if (file.name.endsWith("/")) return false; // a folder: made when a file in it is written
        safeName(file.name);
        if (file.compression !== 0 && file.compression !== 8)
          throw refused(`entry ${file.name}: compression method ${file.compression}`);
        sizes.set(file.name, file.originalSize);
        return true;
      },
    });
  } catch (err) {
    if (err.message.startsWith("not a zip this reader takes")) throw err;
    throw refused(`a damaged archive (${err.message})`);
  }
  return Object.entries(files).map(([name, bytes]) => {
    if (bytes.byteLength !== sizes.get(name))
      throw refused(
        `entry ${name} is ${bytes.byteLength} bytes, its header says ${sizes.get(name)}`,
      );
    return { name, bytes };
  });
}

/** Write `entries` (from `zipEntries`) under the folder `root` of Emscripten's file system
 * `fs` (Pyodide's `pyodide.FS`), making the folders they need. */
export function writeEntries(fs, root, entries) {
  const made = new Set();
  for (const { name, bytes } of entries) {
    const slash = name.lastIndexOf("/");
    const folder = slash < 0 ? root : `${root}/${name.slice(0, slash)}`;
    if (!made.has(folder)) {
      fs.mkdirTree(folder);
      made.add(folder);
    }
    fs.writeFile(`${root}/${name}`, bytes);
  }
}
