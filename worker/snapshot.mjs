// A memory snapshot of a freshly started Python, kept per build (SPEC §2, warm boot).
//
// Starting CPython in Pyodide (initialising the interpreter, importing the standard library
// modules the host needs) is the same work on every boot. A snapshot of the Wasm memory right
// after that — before any wheel is installed, any host code runs or any storage is opened, so
// it holds no secret and no project data — is kept in Cache Storage
// ("voicebox-snapshot-<build>"). Later boots of the same build restore it instead of starting
// Python again. A snapshot that fails to restore is deleted and the boot starts Python the
// ordinary way. The offline service worker (page/sw.js) deletes other builds' snapshots when
// it activates.
//
// Who makes it (issue 18): the first boot of a build starts Python plainly (snapshot mode and
// the preload cost ≈ 0.6 s there) and, once its host is ready, a worker of its own
// (worker/snapshot-maker.mjs) makes the snapshot; a "pending" mark is kept first. A boot that
// finds the mark but no snapshot (the maker was cut short: the tab closed or reloaded at once)
// makes it inline, as every first boot did before.
//
// Pyodide calls these options private (`_makeSnapshot`, `_loadSnapshot`, `makeMemorySnapshot`):
// they are used here only with the pinned Pyodide 314.0.7, whose loader also refuses a snapshot
// of another Pyodide build. Shared libraries cannot be in a snapshot, which is why it is taken
// before the wheels (pydantic-core) are loaded.

const PREFIX = "voicebox-snapshot-";

// Standard-library modules the host imports (measured with `python -X importtime`): importing
// them before the snapshot makes every later boot skip that work. Only modules compiled into
// the runtime — none loads a shared library.
export const PRELOAD = [
  "ast", "base64", "collections.abc", "contextlib", "dataclasses", "datetime", "decimal",
  "email.parser", "enum", "fractions", "functools", "hashlib", "hmac", "importlib.metadata",
  "importlib.resources", "inspect", "ipaddress", "itertools", "json", "logging", "numbers",
  "pickle", "re", "secrets", "string", "struct", "sysconfig", "tarfile", "textwrap", "typing",
  "unicodedata", "urllib.parse", "uuid", "zipfile", "zlib", "zoneinfo",
];

function key(site) {
  return new URL("pyodide/.memory-snapshot", site).href;
}

function pendingKey(site) {
  return new URL("pyodide/.memory-snapshot-pending", site).href;
}

/** True when a boot of this build already handed the snapshot to the background maker. */
export async function snapshotPending(site, build) {
  if (!globalThis.caches || !build) return false;
  try {
    return Boolean(await (await caches.open(PREFIX + build)).match(pendingKey(site)));
  } catch {
    return false;
  }
}

/** Mark the build's snapshot as handed to the background maker (see the header). */
export async function markSnapshotPending(site, build) {
  if (!globalThis.caches || !build) return false;
  try {
    await (await caches.open(PREFIX + build)).put(pendingKey(site), new Response("1"));
    return true;
  } catch {
    return false;
  }
}

/** The build's snapshot (Uint8Array), or null when there is none (or no Cache Storage). */
export async function readSnapshot(site, build) {
  if (!globalThis.caches || !build) return null;
  try {
    const hit = await (await caches.open(PREFIX + build)).match(key(site));
    return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
  } catch {
    return null;
  }
}

/** The snapshot handed to Pyodide's loader (`_loadSnapshot`, which awaits it) so that it is
 * given once and then forgotten: the loader keeps its options for the worker's life, and a
 * Uint8Array or Promise there would keep the whole 31 MB snapshot alive beside the heap it was
 * restored into (measured: the host worker's ArrayBuffers outside the Wasm memory, 49.5 MB
 * after a warm boot against 18.0 MB after a cold one). A thenable gives the bytes to its one
 * awaiter and drops its reference. */
export function handOnce(bytes) {
  return {
    then(resolve) {
      const given = bytes;
      bytes = null;
      resolve(given);
    },
  };
}

/** Keep `bytes` as the build's snapshot; resolves false on a failure, which is otherwise
 * ignored (the next boot starts Python). */
export async function writeSnapshot(site, build, bytes) {
  if (!globalThis.caches || !build) return false;
  try {
    const response = new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } });
    await (await caches.open(PREFIX + build)).put(key(site), response);
    return true;
  } catch {
    return false; // no space or no Cache Storage: boots stay cold, nothing else changes
  }
}

/** Forget the build's snapshot (it did not restore). */
export async function dropSnapshot(build) {
  if (globalThis.caches && build) await caches.delete(PREFIX + build).catch(() => false);
}

/** Python run once before taking the snapshot: the standard library the host needs. */
export const PRELOAD_CODE = `
import importlib
for _name in ${JSON.stringify(PRELOAD)}:
    try:
        importlib.import_module(_name)
    except ImportError:
        pass
del _name
`;

/** Python run once after restoring a snapshot: no two sessions share `random`'s state. */
export const AFTER_RESTORE_CODE = "import random\nrandom.seed()\n";

/** Python run after the snapshot is taken, once `js` is registered again as the real global
 * scope: forget the module object that still holds the snapshot's recording proxy. */
export const UNPROXY_CODE = "import sys\nsys.modules.pop('js', None)\n";
