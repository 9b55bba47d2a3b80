// The memory snapshot of a freshly started Python that every boot restores (SPEC §2; issue 18,
// cold boot).
//
// Starting CPython in Pyodide (initialising the interpreter, importing the standard library the
// host needs) is the same work on every boot, and it was most of a cold boot: ≈ 4.8 s of CPU
// on this 2-core machine. The build does it once (worker/sitebuild/snapshot.mjs, under Node,
// from the same pinned runtime) and ships the Wasm memory right after it, gzipped, as
// `pyodide/python-snapshot.bin.gz`, pinned by sha256 in site-manifest.json. A boot fetches it
// with browser SRI while Pyodide's own files load, inflates it with the browser's
// DecompressionStream and hands it to the loader. It is taken before any wheel is installed,
// any host code runs or any storage is opened, so it holds no secret and no project data; it is
// a public file of the site, the same for everyone (docs/security.md, "The Python snapshot").
//
// Pyodide calls these options private (`_makeSnapshot`, `_loadSnapshot`, `makeMemorySnapshot`):
// they are used only with the pinned Pyodide 314.0.7, whose loader also refuses a snapshot of
// another Pyodide build. Shared libraries cannot be in a snapshot, which is why it is taken
// before the wheels (pydantic-core) are loaded.

export const SNAPSHOT = "pyodide/python-snapshot.bin.gz";

// Standard-library modules the host imports (measured with `python -X importtime`): importing
// them before the snapshot makes every boot skip that work. Only modules compiled into the
// runtime — none loads a shared library.
export const PRELOAD = [
  "ast",
  "base64",
  "collections.abc",
  "contextlib",
  "dataclasses",
  "datetime",
  "decimal",
  "email.parser",
  "enum",
  "fractions",
  "functools",
  "hashlib",
  "hmac",
  "importlib.metadata",
  "importlib.resources",
  "inspect",
  "ipaddress",
  "itertools",
  "json",
  "logging",
  "numbers",
  "pickle",
  "re",
  "secrets",
  "string",
  "struct",
  "sysconfig",
  "tarfile",
  "textwrap",
  "typing",
  "unicodedata",
  "urllib.parse",
  "uuid",
  "zipfile",
  "zlib",
  "zoneinfo",
];

/** Python run once before the snapshot is taken (at build time): the standard library the host
 * needs. */
export const PRELOAD_CODE = `
import importlib
for _name in ${JSON.stringify(PRELOAD)}:
    importlib.import_module(_name)
del _name
`;

/** Python run once after restoring the snapshot: no two sessions share `random`'s state. */
export const AFTER_RESTORE_CODE = "import random\nrandom.seed()\n";

function sri(hex) {
  const bytes = hex.match(/../g).map((h) => parseInt(h, 16));
  return `sha256-${btoa(String.fromCharCode(...bytes))}`;
}

const INFLATED_CACHE = "voicebox-snapshot-";
const INFLATED_KEY = "python-snapshot.bin";

/** The Cache Storage copy of this build's inflated snapshot (null where there is no Cache
 * Storage). Written by the first boot of a build after it checked and inflated the pinned file,
 * read by every later one instead of inflating again (issue 18: inflating 31.5 MB took
 * 0.24–0.32 s here, the warm boot's regression); the service worker deletes other builds'. */
async function inflatedCache(build) {
  if (!globalThis.caches || !build) return null;
  try {
    return await caches.open(INFLATED_CACHE + build);
  } catch {
    return null;
  }
}

/**
 * The site's snapshot, inflated (a promise of a Uint8Array; `seen.kept` is set to whether it came
 * from this build's Cache Storage copy), or null when the site ships none (a build without one:
 * Python then starts the ordinary way). The pinned bytes are checked by the browser against the
 * sha256 site-manifest.json pins for them; the promise rejects when they do not match or cannot
 * be fetched (the caller stops the boot, naming the file). A kept copy that does not restore is
 * dropped by the caller (`dropInflated`).
 */
export function fetchSnapshot(site, manifest, seen = {}) {
  const entry = manifest.files.find((f) => f.path === SNAPSHOT);
  if (!entry) return null;
  return (async () => {
    const cache = await inflatedCache(manifest.build);
    const kept = await cache?.match(new URL(INFLATED_KEY, site)).catch(() => undefined);
    if (kept) {
      try {
        const bytes = new Uint8Array(await kept.arrayBuffer());
        seen.kept = true;
        return bytes;
      } catch {
        // unreadable: fetch the pinned file as a first boot does
      }
    }
    const response = await fetch(new URL(SNAPSHOT, site), { integrity: sri(entry.sha256) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const inflated = response.body.pipeThrough(new DecompressionStream("gzip"));
    const bytes = new Uint8Array(await new Response(inflated).arrayBuffer());
    try {
      await cache?.put(new URL(INFLATED_KEY, site), new Response(bytes));
    } catch {
      // no room: every boot inflates, as before
    }
    seen.kept = false;
    return bytes;
  })();
}

/** Forget this build's kept inflated snapshot (it did not restore). */
export async function dropInflated(build) {
  if (globalThis.caches && build) await caches.delete(INFLATED_CACHE + build).catch(() => false);
}

/** The snapshot handed to Pyodide's loader (`_loadSnapshot`, which awaits it) so that it is
 * given once and then forgotten: the loader keeps its options for the worker's life, and a
 * Uint8Array or Promise there would keep the whole 31 MB snapshot alive beside the heap it was
 * restored into (measured: the host worker's ArrayBuffers outside the Wasm memory, 49.5 MB
 * after a restored boot against 18.0 MB after a plain one). A thenable gives the bytes (or the
 * promise of them) to its one awaiter and drops its reference. */
export function handOnce(bytes) {
  return {
    then(resolve, reject) {
      const given = bytes;
      bytes = null;
      Promise.resolve(given).then(resolve, reject);
    },
  };
}
