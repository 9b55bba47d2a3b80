// Bench only (never shipped): the platform's floor under a mission.post (issue 34, a fresh
// host's first post). Starts postfloor-worker.mjs, which loads the site's own Pyodide (a fresh
// page of the host's weight) and then makes, per "post", the storage steps a post makes, from
// JavaScript, with no Python in between. `benchFloorPosts(n)` times n of them in a row (ms).

const status = document.getElementById("status");
const worker = new Worker("./postfloor-worker.mjs", { type: "module", name: "bench-postfloor" });
const waiting = new Map();
let next = 0;

globalThis.__bench = { ready: null, error: null };

worker.onmessage = (event) => {
  const data = event.data;
  if (data.kind === "ready") {
    globalThis.__bench.ready = performance.now();
    status.dataset.state = "ready";
  } else if (data.kind === "fatal") {
    globalThis.__bench.error = data.message;
    status.dataset.state = "error";
  } else if (data.kind === "answer") {
    waiting.get(data.id)?.(data);
    waiting.delete(data.id);
  }
};

/** `count` floor posts one after another; each round trip's duration in ms. */
globalThis.benchFloorPosts = async (count) => {
  const out = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const id = `p${++next}`;
    const answer = await new Promise((resolve) => {
      waiting.set(id, resolve);
      worker.postMessage({ kind: "post", id });
    });
    if (answer.error) throw new Error(answer.error);
    out.push(performance.now() - start);
  }
  return out;
};
