// The host of the Extism PDK ABI inside the Voicebox sandbox (docs/plugins.md "The ABI";
// docs/security-sandbox.md). Trusted code, kept small.
//
// `pdkHost` is a self-contained function: sandbox.js puts its source into the run worker's blob
// (`(${pdkHost})()`), so it must not close over anything outside itself. It returns
// {run, inspect, SIGNATURES}. `run(job)` runs ONE call of one export of one module and resolves
//   {ok: true, output: Uint8Array}
// | {ok: false, code, reason, message}
// code ∈ tool-output-invalid | tool-memory-exceeded | network-egress-refused (the closed list of
// core/refusals.py); reason ∈ module-invalid | import-refused | no-entry | abi | trap |
// plugin-error | memory | output-too-large | network — a finer tag for the host.
//
// What the module gets: only the kernel functions of "extism:host/env" in SIGNATURES, each
// with exactly its published signature (anything else — WASI, host functions, a memory or table
// import, a wrong signature — is refused before instantiation). Host memory ("kernel memory")
// is one resizable ArrayBuffer capped at the job's memory cap; a handle is a byte offset into it,
// 0 is "none". The module's own memory maxima are rewritten to at most the same cap. No
// network: http_request fails the call. No WASI, no clock, no randomness, no threads.
"use strict";

// build.py inlines this script just before sandbox.js, which calls pdkHost
/* exported pdkHost */
function pdkHost() {
  "use strict";
  const PAGE = 65536;
  const ENV = "extism:host/env";
  const I32 = 0x7f;
  const I64 = 0x7e;
  const MAX_ERROR_CHARS = 1000;
  const MAX_VAR_BYTES = 1 << 20;

  // The kernel functions provided, with their published signatures [params, results]
  // (docs.rs extism-pdk, module `extism`; github.com/extism/extism kernel/src/lib.rs, runtime/src/pdk.rs).
  const SIGNATURES = Object.freeze({
    input_length: [[], [I64]],
    input_load_u8: [[I64], [I32]],
    input_load_u64: [[I64], [I64]],
    input_offset: [[], [I64]],
    alloc: [[I64], [I64]],
    free: [[I64], []],
    length: [[I64], [I64]],
    length_unsafe: [[I64], [I64]],
    load_u8: [[I64], [I32]],
    load_u64: [[I64], [I64]],
    store_u8: [[I64, I32], []],
    store_u64: [[I64, I64], []],
    output_set: [[I64, I64], []],
    error_set: [[I64], []],
    config_get: [[I64], [I64]],
    var_get: [[I64], [I64]],
    var_set: [[I64, I64], []],
    http_request: [[I64, I64], [I64]],
    http_status_code: [[], [I32]],
    http_headers: [[], [I64]],
    log_info: [[I64], []],
    log_debug: [[I64], []],
    log_warn: [[I64], []],
    log_error: [[I64], []],
    log_trace: [[I64], []],
    get_log_level: [[], [I32]],
  });

  class Failure extends Error {
    constructor(code, reason, message) {
      super(message);
      this.code = code;
      this.reason = reason;
    }
  }
  const invalid = (message) => new Failure("tool-output-invalid", "module-invalid", message);

  // Read the module's sections: every import with its kind (and a function's signature), and
  // the memory section rewritten so that no memory may grow past `capPages`.
  // Returns {bytes, imports, memories: [{initial, max, declaredMax}]}; throws Failure.
  const inspect = (input, capPages) => {
    const b = new Uint8Array(input);
    if (
      b.length < 8 ||
      b[0] !== 0 ||
      b[1] !== 0x61 ||
      b[2] !== 0x73 ||
      b[3] !== 0x6d ||
      b[4] !== 1 ||
      b[5] !== 0 ||
      b[6] !== 0 ||
      b[7] !== 0
    ) {
      throw invalid("not a WebAssembly module (version 1)");
    }
    let pos = 8;
    const byte = () => {
      if (pos >= b.length) throw invalid("the module is truncated");
      return b[pos++];
    };
    const leb = () => {
      let value = 0;
      let scale = 1;
      for (let i = 0; i < 10; i++) {
        const x = byte();
        value += (x & 0x7f) * scale;
        if (!(x & 0x80)) {
          if (value > Number.MAX_SAFE_INTEGER) throw invalid("a number is too large");
          return value;
        }
        scale *= 128;
      }
      throw invalid("a LEB128 number is too long");
    };
    const enc = (n) => {
      const out = [];
      do {
        let x = n % 128;
        n = Math.floor(n / 128);
        if (n) x |= 0x80;
        out.push(x);
      } while (n);
      return out;
    };
    const utf8 = new TextDecoder("utf-8", { fatal: true });
    const name = () => {
      const n = leb();
      if (pos + n > b.length) throw invalid("a name runs past the end");
      let text;
      try {
        text = utf8.decode(b.subarray(pos, pos + n));
      } catch {
        throw invalid("a name is not UTF-8");
      }
      pos += n;
      return text;
    };
    const limits = () => {
      const flags = leb();
      if (flags & ~1) return { flags };
      const initial = leb();
      return { flags, initial, max: flags & 1 ? leb() : null };
    };
    const types = [];
    const imports = [];
    const memories = [];
    const functionTypes = [];
    const exports = new Map(); // name -> signature [params, results] of an exported function
    let rewritten = null;
    while (pos < b.length) {
      const sectionStart = pos;
      const id = byte();
      const size = leb();
      const start = pos;
      const end = start + size;
      if (end > b.length) throw invalid("a section runs past the end");
      if (id === 1) {
        for (let count = leb(); count > 0; count--) {
          if (byte() !== 0x60) throw invalid("only plain function types are supported");
          const params = [];
          for (let n = leb(); n > 0; n--) params.push(byte());
          const results = [];
          for (let n = leb(); n > 0; n--) results.push(byte());
          types.push([params, results]);
        }
      } else if (id === 2) {
        for (let count = leb(); count > 0; count--) {
          const module = name();
          const field = name();
          const kind = byte();
          const entry = { module, name: field, kind };
          imports.push(entry);
          if (kind !== 0) break; // refused by checkImports: no need to read its description
          const index = leb();
          if (index >= types.length) throw invalid("an import names an unknown type");
          entry.type = types[index];
        }
      } else if (id === 3) {
        for (let count = leb(); count > 0; count--) {
          const index = leb();
          if (index >= types.length) throw invalid("a function names an unknown type");
          functionTypes.push(types[index]);
        }
      } else if (id === 7) {
        const imported = imports.filter((imp) => imp.kind === 0).map((imp) => imp.type);
        for (let count = leb(); count > 0; count--) {
          const field = name();
          const kind = byte();
          const index = leb();
          if (kind === 0) exports.set(field, [...imported, ...functionTypes][index] || null);
        }
      } else if (id === 5) {
        const body = [];
        const count = leb();
        body.push(...enc(count));
        for (let i = 0; i < count; i++) {
          const m = limits();
          if (m.flags & ~1) {
            throw invalid("shared, 64-bit and custom-page memories are not supported");
          }
          if (m.initial > capPages) {
            throw new Failure(
              "tool-memory-exceeded",
              "memory",
              `the module starts with ${m.initial * PAGE} bytes of memory; the cap is ${capPages * PAGE}`,
            );
          }
          const max = m.max === null ? capPages : Math.min(m.max, capPages);
          memories.push({ initial: m.initial, max, declaredMax: m.max });
          body.push(1, ...enc(m.initial), ...enc(max));
        }
        if (pos !== end) throw invalid("the memory section has trailing bytes");
        rewritten = { sectionStart, end, body };
      }
      pos = end;
    }
    let bytes = b;
    if (rewritten) {
      const { sectionStart, end, body } = rewritten;
      const head = [5, ...enc(body.length)];
      bytes = new Uint8Array(sectionStart + head.length + body.length + (b.length - end));
      bytes.set(b.subarray(0, sectionStart), 0);
      bytes.set(head, sectionStart);
      bytes.set(body, sectionStart + head.length);
      bytes.set(b.subarray(end), sectionStart + head.length + body.length);
    }
    return { bytes, imports, memories, exports };
  };

  const sameSignature = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

  // Every import must be a kernel function of SIGNATURES with exactly its signature.
  const checkImports = (imports) => {
    for (const imp of imports) {
      const where = `${imp.module}.${imp.name}`;
      const expected =
        imp.module === ENV && Object.hasOwn(SIGNATURES, imp.name) ? SIGNATURES[imp.name] : null;
      if (imp.kind !== 0 || expected === null) {
        throw new Failure(
          "tool-output-invalid",
          "import-refused",
          `the module imports ${where}; only the extism:host/env kernel functions are provided`,
        );
      }
      if (!sameSignature(imp.type[0], expected[0]) || !sameSignature(imp.type[1], expected[1])) {
        throw new Failure(
          "tool-output-invalid",
          "import-refused",
          `the module imports ${where} with another signature than the kernel's`,
        );
      }
    }
  };

  // The kernel of one call: host memory, input, output, error, config, vars.
  const makeKernel = ({ input, config, capBytes, maxOutputBytes }) => {
    const buffer = new ArrayBuffer(Math.min(capBytes, PAGE), { maxByteLength: capBytes });
    let bytes = new Uint8Array(buffer);
    let view = new DataView(buffer);
    let top = 8; // offsets 0..7 are never handed out: handle 0 is "none"
    const blocks = new Map(); // start -> {size, used, free}
    const order = []; // block starts, ascending
    const vars = new Map();
    let varBytes = 0;
    const state = { output: new Uint8Array(0), error: null, failure: null, capHit: false };
    const text = new TextDecoder("utf-8");
    const encoder = new TextEncoder();

    const fail = (failure) => {
      if (!state.failure) state.failure = failure;
      throw failure;
    };
    const trap = (message) => fail(new Failure("tool-output-invalid", "trap", message));
    const offset = (h) => {
      const at = Number(h); // exact below 2^53; anything larger is out of range anyway
      if (!(at >= 0 && at <= 0xffffffff)) trap("a handle is out of range");
      return at;
    };
    const inside = (at, n) => {
      if (at < 8 || at + n > top) trap(`host memory ${at}+${n} is outside 8..${top}`);
      return at;
    };
    // The live block that starts at handle `h`, or null (never traps).
    const active = (h) => {
      const block = h > 0n && h <= 0xffffffffn ? blocks.get(Number(h)) : undefined;
      return block && !block.free ? block : null;
    };
    const alloc = (n) => {
      if (n === 0) return 0;
      for (const start of order) {
        const block = blocks.get(start);
        if (block.free && block.size >= n) {
          block.free = false;
          block.used = n;
          bytes.fill(0, start, start + block.size);
          return start;
        }
      }
      const start = (top + 7) & ~7;
      if (start + n > capBytes) {
        state.capHit = true;
        return 0;
      }
      if (start + n > buffer.byteLength) {
        buffer.resize(Math.min(capBytes, Math.max(start + n, buffer.byteLength * 2)));
        bytes = new Uint8Array(buffer);
        view = new DataView(buffer);
      }
      top = start + n;
      blocks.set(start, { size: n, used: n, free: false });
      order.push(start);
      return start;
    };
    const release = (start) => {
      const block = blocks.get(start);
      if (!block || block.free) return;
      block.free = true;
      while (order.length && blocks.get(order[order.length - 1]).free) {
        const last = order.pop();
        blocks.delete(last);
        top = order.length ? order[order.length - 1] + blocks.get(order[order.length - 1]).size : 8;
      }
    };
    const blockBytes = (h) => {
      const block = active(h);
      if (!block) trap("not a live block handle");
      const at = Number(h);
      return bytes.slice(at, at + block.used);
    };
    const storeBytes = (data) => {
      const at = alloc(data.length);
      if (at) bytes.set(data, at);
      return at;
    };

    if (input.length + 8 > capBytes) {
      throw new Failure(
        "tool-memory-exceeded",
        "memory",
        `the input (${input.length} bytes) does not fit the host memory cap of ${capBytes}`,
      );
    }
    const inputAt = storeBytes(input);
    const inputLength = input.length;

    const env = {
      input_length: () => BigInt(inputLength),
      input_offset: () => BigInt(inputAt),
      input_load_u8: (at) => {
        const o = offset(at);
        if (o >= inputLength) trap("input read past its end");
        return bytes[inputAt + o];
      },
      input_load_u64: (at) => {
        const o = offset(at);
        if (o + 8 > inputLength) trap("input read past its end");
        return view.getBigUint64(inputAt + o, true);
      },
      alloc: (n) => {
        if (n <= BigInt(capBytes)) return BigInt(alloc(Number(n)));
        state.capHit = true;
        return 0n;
      },
      free: (h) => {
        if (h !== 0n) release(offset(h));
      },
      length: (h) => BigInt((active(h) || { used: 0 }).used),
      length_unsafe: (h) => BigInt((active(h) || { used: 0 }).used),
      load_u8: (h) => bytes[inside(offset(h), 1)],
      load_u64: (h) => view.getBigUint64(inside(offset(h), 8), true),
      store_u8: (h, v) => {
        bytes[inside(offset(h), 1)] = v & 0xff;
      },
      store_u64: (h, v) => {
        view.setBigUint64(inside(offset(h), 8), v, true);
      }, // v mod 2^64
      output_set: (h, n) => {
        if (n === 0n) {
          state.output = new Uint8Array(0);
          return;
        }
        const block = active(h);
        if (!block || n < 0n || n > BigInt(block.used)) trap("output_set names no live block");
        const length = Number(n);
        if (length > maxOutputBytes) {
          fail(
            new Failure(
              "tool-output-invalid",
              "output-too-large",
              `the plugin set ${length} bytes of output; the cap is ${maxOutputBytes}`,
            ),
          );
        }
        state.output = bytes.slice(Number(h), Number(h) + length);
      },
      error_set: (h) => {
        state.error = h === 0n ? null : text.decode(blockBytes(h)).slice(0, MAX_ERROR_CHARS);
      },
      config_get: (h) => {
        const key = text.decode(blockBytes(h));
        return Object.hasOwn(config, key) ? BigInt(storeBytes(encoder.encode(config[key]))) : 0n;
      },
      var_get: (h) => {
        const key = text.decode(blockBytes(h));
        return vars.has(key) ? BigInt(storeBytes(vars.get(key))) : 0n;
      },
      var_set: (k, v) => {
        const key = text.decode(blockBytes(k));
        if (vars.has(key)) varBytes -= key.length + vars.get(key).length;
        vars.delete(key);
        if (v === 0n) return;
        const value = blockBytes(v);
        if (varBytes + key.length + value.length > MAX_VAR_BYTES) {
          fail(
            new Failure("tool-memory-exceeded", "memory", "the plugin's variables passed 1 MiB"),
          );
        }
        vars.set(key, value);
        varBytes += key.length + value.length;
      },
      http_request: () =>
        fail(
          new Failure(
            "network-egress-refused",
            "network",
            "the plugin asked for an HTTP request; plugins get no network here",
          ),
        ),
      http_status_code: () => 0,
      http_headers: () => 0n,
      get_log_level: () => 0x7fffffff, // above every level: nothing is logged
    };
    for (const level of ["log_info", "log_debug", "log_warn", "log_error", "log_trace"]) {
      env[level] = () => {};
    }
    return { env, state };
  };

  const answerOf = (failure) => ({
    ok: false,
    code: failure.code,
    reason: failure.reason,
    message: String(failure.message).slice(0, 300),
  });

  // One call: {wasm, entry, input, config, maxMemoryBytes, maxOutputBytes} → answer.
  const run = async (job) => {
    let kernel = null;
    let memory = null;
    let maxPages = 0;
    // Did the call hit a cap? The host refused a block, or the module's memory is at its maximum.
    const memoryFull = () =>
      (kernel !== null && kernel.state.capHit) ||
      (memory instanceof WebAssembly.Memory && memory.buffer.byteLength + PAGE > maxPages * PAGE);
    try {
      const capPages = Math.floor(job.maxMemoryBytes / PAGE);
      const found = inspect(job.wasm, capPages);
      maxPages = found.memories.length ? found.memories[0].max : capPages;
      checkImports(found.imports);
      let module;
      try {
        module = await WebAssembly.compile(found.bytes);
      } catch (err) {
        throw invalid(`the module does not compile: ${err && err.message}`);
      }
      const seen = WebAssembly.Module.imports(module);
      if (
        seen.length !== found.imports.length ||
        seen.some((imp, i) => imp.module !== ENV || imp.name !== found.imports[i].name)
      ) {
        throw invalid("the module's imports are not what its import section says");
      }
      const entry = WebAssembly.Module.exports(module).find((e) => e.name === job.entry);
      if (!entry || entry.kind !== "function" || !found.exports.has(job.entry)) {
        throw new Failure(
          "tool-output-invalid",
          "no-entry",
          `the module exports no function '${job.entry}'`,
        );
      }
      const signature = found.exports.get(job.entry);
      if (!signature || signature[0].length !== 0 || !sameSignature(signature[1], [I32])) {
        throw new Failure(
          "tool-output-invalid",
          "abi",
          `'${job.entry}' is not a plugin function () -> i32`,
        );
      }
      kernel = makeKernel({
        input: new Uint8Array(job.input),
        config: job.config || {},
        capBytes: job.maxMemoryBytes,
        maxOutputBytes: job.maxOutputBytes,
      });
      let instance;
      try {
        instance = await WebAssembly.instantiate(module, { [ENV]: kernel.env });
      } catch (err) {
        throw invalid(`the module could not be instantiated: ${err && err.message}`);
      }
      const x = instance.exports;
      memory = x.memory;
      if (typeof x._initialize === "function") x._initialize();
      const rc = x[job.entry]();
      const state = kernel.state;
      if (state.failure) return answerOf(state.failure);
      if (rc !== 0) {
        const said = state.error === null ? `it returned ${rc}` : state.error;
        if (memoryFull()) {
          return answerOf(
            new Failure("tool-memory-exceeded", "memory", `the plugin ran out of memory: ${said}`),
          );
        }
        return answerOf(
          new Failure("tool-output-invalid", "plugin-error", `the plugin failed: ${said}`),
        );
      }
      return { ok: true, output: state.output };
    } catch (err) {
      const first = kernel && kernel.state.failure;
      if (first) return answerOf(first);
      if (err instanceof Failure) return answerOf(err);
      const message = String((err && err.message) || err);
      if (err instanceof RangeError || memoryFull()) {
        return answerOf(new Failure("tool-memory-exceeded", "memory", message));
      }
      return answerOf(new Failure("tool-output-invalid", "trap", message));
    }
  };

  return { run, inspect, SIGNATURES };
}
