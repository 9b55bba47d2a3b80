// TEST ONLY: stands in for the page (and, with host_stub.js, for the host worker) so
// test_sandbox_chromium.py can drive the plugin sandbox. Never shipped.
"use strict";

const sandboxFrames = [];
const byteCache = new Map();
let nextId = 0;

window.clicks = [];
window.ticks = 0;
setInterval(() => {
  window.ticks++;
}, 20);
document.addEventListener("DOMContentLoaded", () => {
  document
    .getElementById("tick")
    .addEventListener("click", () => window.clicks.push(performance.now()));
});

const toBase64 = (bytes) => {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
};

const shown = (answer) =>
  answer && answer.bytes instanceof Uint8Array
    ? { ...answer, bytes: toBase64(answer.bytes), byteLength: answer.bytes.byteLength }
    : answer;

const bytesOf = async (name) => {
  if (!byteCache.has(name)) byteCache.set(name, await (await fetch(name)).arrayBuffer());
  return byteCache.get(name).slice(0);
};

const within = (promise, waitMs) =>
  Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(null), waitMs))]);

// Listen on `port`: the sandbox's "ready" resolves `ready`; answers go to waiters by id.
const listen = (port) => {
  const state = { port, waiters: new Map() };
  state.ready = new Promise((resolve) => {
    state.onReady = resolve;
  });
  port.onmessage = (event) => {
    const data = event.data;
    if (data && data.type === "ready") return state.onReady(data);
    const waiter = data && state.waiters.get(data.id);
    if (waiter) {
      state.waiters.delete(data.id);
      waiter(data);
    }
  };
  return state;
};

window.harness = {
  // Add an iframe on `src`; `sandbox` is its sandbox attribute (null: none). Resolves its index.
  open(sandbox = "allow-scripts", src = "sandbox.html") {
    return new Promise((resolve) => {
      const frame = document.createElement("iframe");
      if (sandbox !== null) frame.setAttribute("sandbox", sandbox);
      frame.src = src;
      sandboxFrames.push({ frame, ports: [] });
      const index = sandboxFrames.length - 1;
      frame.addEventListener("load", () => resolve(index), { once: true });
      document.body.appendChild(frame);
    });
  },

  // Post `data` to frame `index` with `nPorts` fresh ports; resolve the "ready" that arrives
  // on the first port within `waitMs`, or null. Each first port is kept for `call`.
  connect(index, data = { type: "voicebox-sandbox-connect" }, nPorts = 1, waitMs = 1500) {
    const entry = sandboxFrames[index];
    const channels = Array.from({ length: nPorts }, () => new MessageChannel());
    const state = nPorts ? listen(channels[0].port1) : null;
    if (state) entry.ports.push(state);
    entry.frame.contentWindow.postMessage(
      data,
      "*",
      channels.map((c) => c.port2),
    );
    return within(state ? state.ready : new Promise(() => {}), waitMs);
  },

  // Send `request` on frame `index`'s port number `portIndex`; resolve its answer (bytes as
  // base64), or null after `waitMs`.
  async call(index, request, { waitMs = 15000, portIndex = 0 } = {}) {
    const state = sandboxFrames[index].ports[portIndex];
    const answer = new Promise((resolve) => state.waiters.set(request.id, resolve));
    const transfer = request.wasm instanceof ArrayBuffer ? [request.wasm] : [];
    state.port.postMessage(request, transfer);
    return shown(await within(answer, waitMs));
  },

  // Run export `extra.entry` (default "create") of module `name` (fetched from the site) on the
  // input bytes `input` (array of numbers); `extra` also carries limits and config.
  async run(index, name, input, extra = {}, options = {}) {
    const id = `r${nextId++}`;
    const request = {
      id,
      wasm: await bytesOf(name),
      entry: "create",
      input: new Uint8Array(input),
      ...extra,
    };
    const started = performance.now();
    const answer = await window.harness.call(index, request, options);
    return { answer, elapsedMs: performance.now() - started, sentId: id };
  },

  // Start a run without waiting for it; `settle()` resolves it.
  start(index, name, input, extra = {}) {
    window.pending = window.harness.run(index, name, input, extra);
    return true;
  },
  settle() {
    return window.pending;
  },

  // The host-worker path: a module worker holds the port, the page never does.
  async viaWorker(index, name, input) {
    const worker = new Worker("host_stub.js", { type: "module" });
    const channel = new MessageChannel();
    const next = () =>
      new Promise((resolve) => {
        worker.onmessage = (event) => resolve(event.data);
      });
    const ready = next();
    worker.postMessage({ type: "port" }, [channel.port1]);
    sandboxFrames[index].frame.contentWindow.postMessage(
      { type: "voicebox-sandbox-connect" },
      "*",
      [channel.port2],
    );
    const hello = await within(ready, 3000);
    const answer = next();
    const wasm = await bytesOf(name);
    worker.postMessage({ id: "via-worker", wasm, entry: "create", input: new Uint8Array(input) }, [
      wasm,
    ]);
    const result = shown(await within(answer, 10000));
    worker.terminate();
    return { hello, result };
  },

  async preload(name) {
    await bytesOf(name);
    return true;
  },

  async moduleImports(name) {
    return WebAssembly.Module.imports(new WebAssembly.Module(await bytesOf(name)));
  },
};
