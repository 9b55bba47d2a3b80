// Bench only (never shipped): the floor the host is measured against. Starts a module worker
// that loads the site's own Pyodide files and nothing else, records when it is ready
// (ms since navigation), and offers a raw echo of the host protocol's message shape.

const status = document.getElementById("status");
const worker = new Worker("./bare-worker.mjs", { type: "module", name: "bench-bare" });
const waiting = new Map();
let next = 0;

globalThis.__bench = { ready: null, detail: null, error: null };

worker.onmessage = (event) => {
  const data = event.data;
  if (data.kind === "ready") {
    globalThis.__bench.ready = performance.now();
    globalThis.__bench.detail = data;
    status.dataset.state = "ready";
  } else if (data.kind === "fatal") {
    globalThis.__bench.error = data.message;
    status.dataset.state = "error";
  } else if (data.kind === "answer") {
    waiting.get(data.id)?.(data);
    waiting.delete(data.id);
  }
};

/** One raw round trip: a call-shaped message with `size` body bytes out, the same back. */
function echo(size) {
  const id = `e${++next}`;
  const body = new Uint8Array(size).fill(7).buffer;
  const text = JSON.stringify({ v: 1, id, op: "echo", args: {} });
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    worker.postMessage({ kind: "call", id, text, body }, [body]);
  });
}

/** `count` sequential echoes of `size` bytes; each round trip's duration in ms. */
globalThis.benchEcho = async (count, size, python = false) => {
  const out = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const id = `e${++next}`;
    const body = new Uint8Array(size).fill(7).buffer;
    const text = JSON.stringify({ v: 1, id, op: python ? "py-echo" : "echo", args: {} });
    await new Promise((resolve) => {
      waiting.set(id, resolve);
      worker.postMessage({ kind: "call", id, text, body }, [body]);
    });
    out.push(performance.now() - start);
  }
  return out;
};

globalThis.benchEchoOnce = echo;
