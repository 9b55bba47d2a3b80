// The create-asset sandbox (SPEC §8; docs/security-sandbox.md). Trusted code, kept minimal.
//
// build.py inlines this file into out/sandbox.html, whose CSP admits exactly this script by its
// sha256 (no 'self': nothing else can load here, not even from our own site). It never
// navigates and never creates anything but its own blob worker.
//
// Runs inside <iframe sandbox="allow-scripts"> (opaque origin). The page
// posts ONE message {type: "voicebox-sandbox-connect"} with one transferred MessagePort; from
// then on only that port is heard. On the port (usually held by the host worker):
//   sandbox → host  {type: "ready", v: 1, limits: {...}}                       once, at connect
//   host → sandbox  {id, wasm: ArrayBuffer|Uint8Array, args: ArrayBuffer|Uint8Array,
//                    timeMs?, maxOutputBytes?}
//   sandbox → host  {id, ok: true, bytes: Uint8Array}                          (transferred)
//                 | {id, ok: false, code, message}
// code ∈ tool-timeout | tool-memory-exceeded | tool-output-invalid | sandbox-unavailable |
//        message-malformed. Each request runs in a fresh classic worker made from a blob URL,
// instantiated with an EMPTY import object and terminated afterwards; answers may come back
// in any order (match them by id).
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
    timeMs: 3000, // default time limit of one run (worker start + compile + create)
    maxTimeMs: 10000, // a request may ask for less or more, never more than this
    maxOutputBytes: 4 * 1024 * 1024, // default output cap
    maxOutputCeiling: 16 * 1024 * 1024, // a request may never raise the cap past this
    maxMemoryBytes: 16 * 1024 * 1024, // a module must declare a memory maximum within this
    maxModuleBytes: 1024 * 1024,
    maxArgsBytes: 4096,
    maxRunning: 4, // runs at once, each in its own worker; more are answered sandbox-unavailable
  });
  const PAGE = 65536;

  // 2. Work only when framed, with an opaque origin (sandboxed without allow-same-origin).
  if (window.parent === window || self.origin !== "null") return;

  // The worker's whole program. It runs once: instantiate with {}, write args, create, reply.
  const workerProgram = () => {
    "use strict";
    self.onmessage = async (event) => {
      self.onmessage = null;
      const { wasm, args, maxOutputBytes, maxMemoryBytes } = event.data;
      const fail = (code, message) => self.postMessage({ ok: false, code, message });
      let memory = null;
      try {
        const module = await WebAssembly.compile(wasm);
        if (WebAssembly.Module.imports(module).length !== 0) {
          return fail("tool-output-invalid", "the module asks for imports; none are granted");
        }
        const instance = await WebAssembly.instantiate(module, {});
        const x = instance.exports;
        memory = x.memory;
        if (!(memory instanceof WebAssembly.Memory) ||
            typeof x.alloc_input !== "function" || typeof x.create !== "function" ||
            typeof x.output_ptr !== "function") {
          return fail("tool-output-invalid", "the module lacks memory, alloc_input, create or output_ptr");
        }
        const input = x.alloc_input(args.byteLength) >>> 0;
        if (input === 0 || input + args.byteLength > memory.buffer.byteLength) {
          return fail("tool-output-invalid", "the module gave no room for its arguments");
        }
        new Uint8Array(memory.buffer, input, args.byteLength).set(new Uint8Array(args));
        const n = x.create(args.byteLength);
        if (n === -3) return fail("tool-memory-exceeded", "the tool could not grow its memory");
        if (!Number.isInteger(n) || n <= 0) {
          return fail("tool-output-invalid", `the tool refused (code ${n})`);
        }
        if (n > maxOutputBytes) {
          return fail("tool-output-invalid", `the tool returned ${n} bytes; the cap is ${maxOutputBytes}`);
        }
        const at = x.output_ptr() >>> 0;
        if (at + n > memory.buffer.byteLength) {
          return fail("tool-output-invalid", "the tool's output lies outside its memory");
        }
        const bytes = new Uint8Array(memory.buffer, at, n).slice();
        self.postMessage({ ok: true, bytes }, [bytes.buffer]);
      } catch (err) {
        const text = String(err && err.message || err).slice(0, 200);
        const atCap = memory instanceof WebAssembly.Memory &&
          memory.buffer.byteLength + 65536 > maxMemoryBytes;
        if (err instanceof RangeError || atCap) return fail("tool-memory-exceeded", text);
        return fail("tool-output-invalid", text);
      }
    };
  };

  const workerUrl = URL.createObjectURL(
    new Blob([`(${workerProgram})();`], { type: "text/javascript" }));
  const urlPolicy = self.trustedTypes ? self.trustedTypes.createPolicy("vbx-sandbox", {
    createScriptURL: (url) => {
      if (url !== workerUrl) throw new TypeError("only the sandbox's own worker may load");
      return url;
    },
  }) : null;
  const trustedWorkerUrl = urlPolicy ? urlPolicy.createScriptURL(workerUrl) : workerUrl;

  // The sum of the declared memory maxima, in bytes, read from the module's memory section;
  // a string when a memory declares none or the bytes are not a readable module.
  const declaredMemory = (bytes) => {
    const b = new Uint8Array(bytes);
    if (b.length < 8 || b[0] !== 0 || b[1] !== 0x61 || b[2] !== 0x73 || b[3] !== 0x6d ||
        b[4] !== 1 || b[5] !== 0 || b[6] !== 0 || b[7] !== 0) {
      return "not a WebAssembly module";
    }
    let pos = 8;
    const leb = () => {
      let value = 0;
      let scale = 1;
      for (;;) {
        if (pos >= b.length || scale > 2 ** 63) throw new RangeError("truncated");
        const byte = b[pos++];
        value += (byte & 0x7f) * scale;
        scale *= 128;
        if (!(byte & 0x80)) return value;
      }
    };
    let total = 0;
    try {
      while (pos < b.length) {
        const id = b[pos++];
        const end = leb() + pos;
        if (end > b.length) return "a section runs past the end";
        if (id === 5) {
          for (let count = leb(); count > 0; count--) {
            const flags = leb();
            if (flags & ~0xf) return "a memory has unknown flags";
            leb(); // initial size
            if (!(flags & 1)) return "a memory declares no maximum";
            const max = leb();
            const pageSize = flags & 8 ? 2 ** leb() : PAGE;
            total += max * pageSize;
          }
        }
        pos = end;
      }
    } catch {
      return "the module is truncated";
    }
    return total;
  };

  const asBuffer = (value, limit) => {
    if (value instanceof ArrayBuffer) return value.byteLength <= limit ? value.slice(0) : null;
    if (value instanceof Uint8Array) {
      return value.byteLength <= limit ? value.slice().buffer : null;
    }
    return null;
  };

  const clampInt = (value, fallback, low, high) =>
    value === undefined ? fallback :
      Number.isInteger(value) && value >= low && value <= high ? value : null;

  const runInWorker = (job, timeMs) => new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(trustedWorkerUrl);
    } catch (err) {
      resolve({ ok: false, code: "sandbox-unavailable", message: "no worker could be started" });
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
    const timer = setTimeout(() => finish({
      ok: false, code: "tool-timeout", message: `the tool ran past ${timeMs} ms and was stopped`,
    }), timeMs);
    worker.onmessage = (event) => finish(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      finish({ ok: false, code: "tool-output-invalid", message: "the tool's worker failed" });
    };
    worker.onmessageerror = () =>
      finish({ ok: false, code: "tool-output-invalid", message: "unreadable answer" });
    worker.postMessage(job, [job.wasm, job.args]);
  });

  // A request's id when it is a string of at most 64 characters or a safe integer, else null.
  const idOf = (request) => request && (typeof request.id === "string" &&
    request.id.length <= 64 || Number.isSafeInteger(request.id)) ? request.id : null;

  const handle = async (request) => {
    const id = idOf(request);
    const malformed = (message) => ({ id, ok: false, code: "message-malformed", message });
    if (id === null) return malformed("the request needs an id (string or integer)");
    const wasm = asBuffer(request.wasm, LIMITS.maxModuleBytes);
    if (!wasm) return malformed(`wasm must be bytes, at most ${LIMITS.maxModuleBytes}`);
    const args = asBuffer(request.args, LIMITS.maxArgsBytes);
    if (!args) return malformed(`args must be bytes, at most ${LIMITS.maxArgsBytes}`);
    const timeMs = clampInt(request.timeMs, LIMITS.timeMs, 1, LIMITS.maxTimeMs);
    const maxOutputBytes = clampInt(
      request.maxOutputBytes, LIMITS.maxOutputBytes, 1, LIMITS.maxOutputCeiling);
    if (timeMs === null || maxOutputBytes === null) return malformed("limits out of range");

    const memory = declaredMemory(wasm);
    if (typeof memory === "string") {
      const code = memory.includes("maximum") ? "tool-memory-exceeded" : "tool-output-invalid";
      return { id, ok: false, code, message: memory };
    }
    if (memory > LIMITS.maxMemoryBytes) {
      return {
        id, ok: false, code: "tool-memory-exceeded",
        message: `the module may grow to ${memory} bytes; the cap is ${LIMITS.maxMemoryBytes}`,
      };
    }
    const answer = await runInWorker({ wasm, args, maxOutputBytes, maxMemoryBytes: memory }, timeMs);
    if (answer && answer.ok === true && answer.bytes instanceof Uint8Array &&
        answer.bytes.byteLength <= maxOutputBytes) {
      return { id, ok: true, bytes: answer.bytes };
    }
    const known = ["tool-timeout", "tool-memory-exceeded", "tool-output-invalid",
      "sandbox-unavailable"];
    const code = answer && known.includes(answer.code) ? answer.code : "tool-output-invalid";
    const message = answer && typeof answer.message === "string" ? answer.message : "no answer";
    return { id, ok: false, code, message: message.slice(0, 300) };
  };

  const serve = (port) => {
    let running = 0;
    port.onmessage = async (event) => {
      const request = event.data;
      const failed = (message) => ({ id: idOf(request), ok: false, code: "sandbox-unavailable", message });
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
    port.postMessage({ type: "ready", v: 1, limits: LIMITS });
  };

  // 3. The first message from the parent carrying exactly one port is the connection;
  //    everything before it, after it, or from anyone else is ignored.
  const connect = (event) => {
    if (event.source !== window.parent || event.ports.length !== 1 ||
        !event.data || event.data.type !== "voicebox-sandbox-connect") {
      return;
    }
    window.removeEventListener("message", connect);
    serve(event.ports[0]);
  };
  window.addEventListener("message", connect);
})();
