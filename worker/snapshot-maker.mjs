// Makes this build's Python memory snapshot (worker/snapshot.mjs) in a worker of its own, so
// that the first boot of a build never pays for it (issue 18, cold boot). The host worker
// starts it once its host is ready (`afterReady` in worker/host.mjs) when it booted without a
// snapshot; it starts a fresh Python in snapshot mode, imports the standard library the host
// needs (PRELOAD), keeps the snapshot in Cache Storage and says {kind: "snapshot", ok}. It
// holds no storage lock, opens no project and no HOST_DIR, and is given nothing but the build
// id: the snapshot holds no secret and no project data, exactly as before.
//
// Host worker → this worker: {kind: "make", build}
// This worker → host worker: {kind: "snapshot", ok, message?}, then it closes itself.

import { installEgressGuard } from "./egress-guard.mjs";
import { PRELOAD_CODE, writeSnapshot } from "./snapshot.mjs";

const SITE = new URL("../", import.meta.url);
installEgressGuard({ site: SITE }); // starts no worker of its own

async function make(build) {
  const { loadPyodide } = await import(new URL("pyodide/pyodide.mjs", SITE).href);
  const pyodide = await loadPyodide({
    indexURL: new URL("pyodide/", SITE).href,
    lockFileURL: new URL("pyodide/pyodide-lock.json", SITE).href,
    stdout: () => {},
    stderr: (line) => console.warn(line),
    _makeSnapshot: true,
  });
  pyodide.runPython(PRELOAD_CODE);
  return writeSnapshot(SITE, build, pyodide.makeMemorySnapshot());
}

self.onmessage = async (event) => {
  const data = event.data;
  if (!data || data.kind !== "make" || typeof data.build !== "string") return;
  try {
    const kept = await make(data.build);
    self.postMessage({ kind: "snapshot", ok: kept !== false });
  } catch (err) {
    self.postMessage({ kind: "snapshot", ok: false, message: String(err?.message ?? err).slice(0, 200) });
  }
  self.close();
};
