// Bench only (never shipped): a module worker that loads the site's own Pyodide runtime
// (../pyodide/, the same files the host loads) and nothing else — no wheels, no fetch guard,
// no storage — then echoes call-shaped messages: "echo" in JavaScript (the floor of a worker
// round trip), "py-echo" through one Python function call (the floor of crossing into Python).

import { loadPyodide } from "../pyodide/pyodide.mjs";

const started = performance.now();
let echoPy = null;

self.onmessage = async (event) => {
  const { id, text, body } = event.data;
  let out = body;
  if (JSON.parse(text).op === "py-echo") {
    const proxy = echoPy(text, new Uint8Array(body));
    out = proxy.toJs().buffer;
    proxy.destroy();
  }
  self.postMessage({ kind: "answer", id, text, body: out }, [out]);
};

try {
  const pyodide = await loadPyodide({ indexURL: new URL("../pyodide/", import.meta.url).href });
  echoPy = pyodide.runPython("lambda text, body: body.to_bytes()");
  const memory = pyodide._module.HEAP8.length;
  self.postMessage({
    kind: "ready",
    worker_ms: performance.now() - started,
    wasm_memory_bytes: memory,
  });
} catch (err) {
  self.postMessage({ kind: "fatal", message: String(err?.message ?? err) });
}
