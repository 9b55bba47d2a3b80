// The entries of a zip archive, read in JavaScript (issue 34, cold boot). The wheels' bytecode
// (pyodide/site-bytecode.zip.gz: stored entries, gzipped whole) is inflated while Pyodide is
// still starting, so that once Python is up its 321 files are only written into site-packages.
// Before, Pyodide's `unpackArchive` ran Python's `zipfile` over them after Python was up, on
// the path to `ready`: 0.33–0.80 s of a cold boot under load 5–8 on the 2 cores, against
// 0.03–0.08 s for the writes now (docs/operations.md, "Cold boot, issue 34 (round 43)").
//
// Thin glue: it reads the archive's central directory, slices out each stored entry (a
// deflated one is inflated with the browser's DecompressionStream "deflate-raw") and checks
// each entry's size; the archive's bytes were already checked whole (browser SRI against the
// sha256 site-manifest.json pins). Stored (0) and deflated (8) entries only, no zip64, no
// encryption, plain relative paths only: anything else is refused.

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

function refused(why) {
  return new Error(`not a zip this reader takes: ${why}`);
}

async function inflated(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
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
 * exactly its uncompressed size. Rejects (an Error) on anything this reader does not take or
 * an entry whose size is not the one its header says.
 */
export async function zipEntries(buffer) {
  const view = new DataView(buffer);
  const bytes = new Uint8Array(buffer);
  let end = -1;
  for (let i = buffer.byteLength - 22; i >= Math.max(0, buffer.byteLength - 22 - 65_535); i--) {
    if (view.getUint32(i, true) === EOCD) {
      end = i;
      break;
    }
  }
  if (end < 0) throw refused("no end of central directory");
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const names = new TextDecoder("utf-8", { fatal: true });
  const pending = [];
  for (let n = 0; n < count; n++) {
    if (view.getUint32(at, true) !== CENTRAL) throw refused("a damaged central directory");
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const packed = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = names.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    if (flags & 1) throw refused(`entry ${name} is encrypted`);
    if (packed === 0xffffffff || size === 0xffffffff || local === 0xffffffff)
      throw refused("zip64");
    if (name.endsWith("/")) continue; // a folder: made when a file in it is written
    if (view.getUint32(local, true) !== LOCAL) throw refused(`entry ${name}: no local header`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const data = bytes.subarray(start, start + packed);
    if (data.byteLength !== packed) throw refused(`entry ${name} runs past the archive`);
    const safe = safeName(name);
    const entry =
      method === 0
        ? Promise.resolve(data)
        : method === 8
          ? inflated(data)
          : Promise.reject(refused(`entry ${name}: compression method ${method}`));
    pending.push(
      entry.then((out) => {
        if (out.byteLength !== size)
          throw refused(`entry ${name} is ${out.byteLength} bytes, its header says ${size}`);
        return { name: safe, bytes: out };
      }),
    );
  }
  return Promise.all(pending);
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
