// The plugin sandbox (SPEC §7, §8; docs/security-sandbox.md, docs/plugins.md). Trusted code,
// kept minimal. It runs create-asset and every plugin: modules of the Extism PDK ABI, hosted by
// pdkHost (wasm_tools/pdk_host.js, inlined just before this script).
/* global pdkHost */
//
// build.py inlines pdk_host.js + this file into out/sandbox.html, whose CSP admits exactly that
// script by its sha256 (no 'self': nothing else can load here, not even from our own site). It
// never navigates and never creates anything but its own blob workers.
//
// Runs inside <iframe sandbox="allow-scripts"> (opaque origin). The page posts ONE message
// {type: "voicebox-sandbox-connect"} with one transferred MessagePort; from then on only that
// port is heard. On the port (usually held by the host worker):
//   sandbox → host  {type: "ready", v: 2, limits: {...}, abi: {module, functions}}  once
//   host → sandbox  {id, wasm: bytes, entry: string, input: bytes, config?: {string: string},
//                    timeMs?, maxMemoryBytes?, maxOutputBytes?}
//   sandbox → host  {id, ok: true, bytes: Uint8Array}                       (buffer transferred)
//                 | {id, ok: false, code, reason, message}
// bytes = ArrayBuffer | Uint8Array. code ∈ tool-timeout | tool-memory-exceeded |
// tool-output-invalid | network-egress-refused | sandbox-unavailable | message-malformed;
// reason refines it (pdk_host.js). Each request runs in a fresh classic worker made from a blob
// URL, terminated afterwards; answers may come back in any order (match them by id).
"use strict";

// 1. Before anything else: WebRTC ignores connect-src, so make it unreachable in this realm.
for (const name of Object.getOwnPropertyNames(self)) {
  if (/^(webkit)?RTC/.test(name)) {
    delete self[name];
    Object.defineProperty(self, name, { value: undefined, writable: false, configurable: false });
  }
}

(() => {
  const LIMITS = Object.freeze({
    timeMs: 3000, // default time limit of one run (worker start + compile + the call)
    maxTimeMs: 10000, // a request may ask for less or more, never more than this
    maxOutputBytes: 4 * 1024 * 1024, // default output cap
    maxOutputCeiling: 16 * 1024 * 1024, // a request may never raise the cap past this
    maxMemoryBytes: 16 * 1024 * 1024, // default cap of linear memory, and of host memory
    maxMemoryCeiling: 64 * 1024 * 1024, // a request may never raise the memory cap past this
    maxModuleBytes: 4 * 1024 * 1024,
    maxInputBytes: 8 * 1024 * 1024,
    maxConfigEntries: 64,
    maxConfigBytes: 64 * 1024,
    maxRunning: 4, // runs at once, each in its own worker; more are answered sandbox-unavailable
  });
  const CODES = [
    "tool-timeout",
    "tool-memory-exceeded",
    "tool-output-invalid",
    "network-egress-refused",
    "sandbox-unavailable",
  ];
  const REASONS = [
    "timeout",
    "module-invalid",
    "import-refused",
    "no-entry",
    "abi",
    "trap",
    "plugin-error",
    "memory",
    "output-too-large",
    "network",
    "worker",
  ];
  const PAGE = 65536;

  // 2. Work only when framed, with an opaque origin (sandboxed without allow-same-origin).
  if (window.parent === window || self.origin !== "null") return;

  // The run worker's whole program: the PDK host, one call, one answer.
  const workerProgram = (makeHost) => {
    "use strict";
    const host = makeHost();
    self.onmessage = async (event) => {
      self.onmessage = null;
      const answer = await host.run(event.data);
      self.postMessage(answer, answer.ok ? [answer.output.buffer] : []);
    };
  };
  const workerUrl = URL.createObjectURL(
    new Blob([`(${workerProgram})(${pdkHost});`], { type: "text/javascript" }),
  );
  const urlPolicy = self.trustedTypes
    ? self.trustedTypes.createPolicy("vbx-sandbox", {
        createScriptURL: (url) => {
          if (url !== workerUrl) throw new TypeError("only the sandbox's own worker may load");
          return url;
        },
      })
    : null;
  const trustedWorkerUrl = urlPolicy ? urlPolicy.createScriptURL(workerUrl) : workerUrl;

  const asBuffer = (value, limit) => {
    if (value instanceof ArrayBuffer) return value.byteLength <= limit ? value.slice(0) : null;
    if (value instanceof Uint8Array) {
      return value.byteLength <= limit ? value.slice().buffer : null;
    }
    return null;
  };

  const clampInt = (value, fallback, low, high) =>
    value === undefined
      ? fallback
      : Number.isInteger(value) && value >= low && value <= high
        ? value
        : null;

  // A plain {string: string} object within the limits, copied; null when it is anything else.
  const configOf = (value) => {
    if (value === undefined) return {};
    if (
      value === null ||
      typeof value !== "object" ||
      Array.isArray(value) ||
      Object.getPrototypeOf(value) !== Object.prototype
    )
      return null;
    const entries = Object.entries(value);
    if (entries.length > LIMITS.maxConfigEntries) return null;
    let size = 0;
    for (const [key, text] of entries) {
      if (typeof text !== "string") return null;
      size += key.length + text.length;
    }
    return size <= LIMITS.maxConfigBytes ? Object.fromEntries(entries) : null;
  };

  const runInWorker = (job, timeMs) =>
    new Promise((resolve) => {
      let worker;
      try {
        worker = new Worker(trustedWorkerUrl);
      } catch (err) {
        resolve({
          ok: false,
          code: "sandbox-unavailable",
          reason: "worker",
          message: "no worker could be started",
        });
        return;
      }
      let done = false;
      const finish = (answer) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        worker.terminate();
        resolve(answer);
      };
      const timer = setTimeout(
        () =>
          finish({
            ok: false,
            code: "tool-timeout",
            reason: "timeout",
            message: `the plugin ran past ${timeMs} ms and was stopped`,
          }),
        timeMs,
      );
      worker.onmessage = (event) => finish(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        finish({
          ok: false,
          code: "tool-output-invalid",
          reason: "worker",
          message: "the run worker failed",
        });
      };
      worker.onmessageerror = () =>
        finish({
          ok: false,
          code: "tool-output-invalid",
          reason: "worker",
          message: "unreadable answer",
        });
      worker.postMessage(job, [job.wasm, job.input]);
    });

  // A request's id when it is a string of at most 64 characters or a safe integer, else null.
  const idOf = (request) =>
    request &&
    ((typeof request.id === "string" && request.id.length <= 64) ||
      Number.isSafeInteger(request.id))
      ? request.id
      : null;

  // An export name: 1..128 printable ASCII characters, not a module's start function.
  const entryOf = (value) =>
    typeof value === "string" &&
    /^[\x21-\x7e]{1,128}$/.test(value) &&
    value !== "_start" &&
    value !== "_initialize"
      ? value
      : null;

  const handle = async (request) => {
    const id = idOf(request);
    const malformed = (message) => ({ id, ok: false, code: "message-malformed", message });
    if (id === null) return malformed("the request needs an id (string or integer)");
    const wasm = asBuffer(request.wasm, LIMITS.maxModuleBytes);
    if (!wasm) return malformed(`wasm must be bytes, at most ${LIMITS.maxModuleBytes}`);
    const entry = entryOf(request.entry);
    if (!entry) return malformed("entry must name the export to call (printable ASCII, <= 128)");
    const input = asBuffer(request.input, LIMITS.maxInputBytes);
    if (!input) return malformed(`input must be bytes, at most ${LIMITS.maxInputBytes}`);
    const config = configOf(request.config);
    if (!config) return malformed("config must be an object of strings within the limits");
    const timeMs = clampInt(request.timeMs, LIMITS.timeMs, 1, LIMITS.maxTimeMs);
    const maxOutputBytes = clampInt(
      request.maxOutputBytes,
      LIMITS.maxOutputBytes,
      1,
      LIMITS.maxOutputCeiling,
    );
    const maxMemoryBytes = clampInt(
      request.maxMemoryBytes,
      LIMITS.maxMemoryBytes,
      PAGE,
      LIMITS.maxMemoryCeiling,
    );
    if (timeMs === null || maxOutputBytes === null || maxMemoryBytes === null) {
      return malformed("limits out of range");
    }
    const answer = await runInWorker(
      { wasm, entry, input, config, maxOutputBytes, maxMemoryBytes },
      timeMs,
    );
    if (
      answer &&
      answer.ok === true &&
      answer.output instanceof Uint8Array &&
      answer.output.byteLength <= maxOutputBytes
    ) {
      return { id, ok: true, bytes: answer.output };
    }
    const code = answer && CODES.includes(answer.code) ? answer.code : "tool-output-invalid";
    const reason = answer && REASONS.includes(answer.reason) ? answer.reason : "worker";
    const message = answer && typeof answer.message === "string" ? answer.message : "no answer";
    return { id, ok: false, code, reason, message: message.slice(0, 300) };
  };

  const serve = (port) => {
    let running = 0;
    port.onmessage = async (event) => {
      const request = event.data;
      const failed = (message) => ({
        id: idOf(request),
        ok: false,
        code: "sandbox-unavailable",
        reason: "worker",
        message,
      });
      let answer;
      if (running >= LIMITS.maxRunning) {
        answer = failed("too many runs at once");
      } else {
        running++;
        try {
          answer = await handle(request);
        } catch {
          answer = failed("the sandbox failed");
        }
        running--;
      }
      port.postMessage(answer, answer.ok ? [answer.bytes.buffer] : []);
    };
    const abi = { module: "extism:host/env", functions: Object.keys(pdkHost().SIGNATURES) };
    port.postMessage({ type: "ready", v: 2, limits: LIMITS, abi });
  };

  // 3. The first message from the parent carrying exactly one port is the connection;
  //    everything before it, after it, or from anyone else is ignored.
  const connect = (event) => {
    if (
      event.source !== window.parent ||
      event.ports.length !== 1 ||
      !event.data ||
      event.data.type !== "voicebox-sandbox-connect"
    ) {
      return;
    }
    window.removeEventListener("message", connect);
    serve(event.ports[0]);
  };
  window.addEventListener("message", connect);
})();
