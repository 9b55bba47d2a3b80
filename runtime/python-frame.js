// The person's Python runtime frame (issue 32; docs/python.md). Trusted code, kept minimal.
//
// worker/sitebuild/runtime_frame.py inlines this file into runtime/python.html, whose CSP
// admits exactly this script by its sha256, plus blob: scripts (the Pyodide files the host
// sent, which only this frame and its worker can mint), and no connection anywhere
// (connect-src 'none'). It never navigates and never fetches.
//
// Runs sandboxed allow-scripts — by the <iframe sandbox> attribute, or offline by the header CSP
// `sandbox allow-scripts` the service worker sends (docs/python.md, "Offline") — an opaque
// origin: no OPFS, IndexedDB, cookies or host state. The page posts ONE message {type: "voicebox-runtime-connect"} with one port;
// from then on only that port is heard — the host worker holds its other end. Protocol:
// browser_host/python_runtime.py. The runtime is a module worker made here from a blob URL; it
// gets the Pyodide files from this frame, copies of the project's files per run, and nothing
// else. Its messages are checked here (types, the run's id, output bounded and coalesced to
// at most one message per FLUSH_MS) before the host sees them: the worker runs hostile code.
"use strict";

// 1. Before anything else: WebRTC ignores connect-src, so make it unreachable in this realm.
for (const name of Object.getOwnPropertyNames(self)) {
  if (/^(webkit)?RTC/.test(name)) {
    delete self[name];
    Object.defineProperty(self, name, { value: undefined, writable: false, configurable: false });
  }
}

(() => {
  const FLUSH_MS = 50;
  const MAX_OUTPUT_CHARS = 1 << 20; // per run; the rest is counted as dropped (core: 1 MiB)
  const MAX_MESSAGES = 20_000; // per run: a worker flooding the frame is restarted
  const NAMES = [
    "pyodide.asm.mjs",
    "pyodide.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
  ];

  // 2. Work only when framed, with an opaque origin (sandboxed without allow-same-origin).
  if (window.parent === window || self.origin !== "null") return;

  // The runtime worker's whole program (a classic worker from a blob URL, as the plugin
  // sandbox's: a module worker cannot load from an opaque origin's blob URL).
  const workerProgram = () => {
    "use strict";
    const SETUP = String.raw`
import os, sys, ast, hashlib, inspect, shutil, traceback, importlib
_VBX_ROOT = "/project"
os.makedirs(_VBX_ROOT, exist_ok=True)
_vbx_ns = {"__name__": "__main__", "__builtins__": __builtins__}
_vbx_before = {}

def _vbx_reset():
    os.chdir("/")
    shutil.rmtree(_VBX_ROOT, ignore_errors=True)
    os.makedirs(_VBX_ROOT)

def _vbx_files():
    out = []
    for base, dirs, names in os.walk(_VBX_ROOT):
        dirs.sort()
        for n in sorted(names):
            full = os.path.join(base, n)
            if os.path.isfile(full) and not os.path.islink(full):
                out.append(os.path.relpath(full, _VBX_ROOT))
    return out

def _vbx_digest(rel):
    with open(os.path.join(_VBX_ROOT, rel), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()

def _vbx_mark():
    global _vbx_before
    _vbx_before = {p: _vbx_digest(p) for p in _vbx_files()}
    os.chdir(_VBX_ROOT)
    if _VBX_ROOT not in sys.path:
        sys.path.insert(0, _VBX_ROOT)
    for name, mod in list(sys.modules.items()):
        if (getattr(mod, "__file__", None) or "").startswith(_VBX_ROOT + "/"):
            del sys.modules[name]
    importlib.invalidate_caches()

def _vbx_changes():
    try:
        os.chdir(_VBX_ROOT)
    except OSError:
        pass
    present = _vbx_files()
    return present, [p for p in present if _vbx_before.get(p) != _vbx_digest(p)]

def _vbx_status(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1

class NoNetworkError(RuntimeError):
    """micropip asked for something that is not a file of this runtime."""

_VBX_NO_NETWORK = ("this Python runtime has no network (connect-src 'none'; docs/python.md), "
                   "so micropip installs only a wheel file uploaded into the project, e.g. "
                   "await micropip.install('emfs:wheels/name-1.0-py3-none-any.whl')")

def _vbx_offline_micropip():
    # micropip (a runtime wheel) would ask an index or the host's pyodide-lock.json: neither
    # is reachable here, so each way out says so instead of a fetch's stack trace
    try:
        import micropip.package_index as index
        from micropip._compat import compatibility_layer as layer
    except ImportError:
        return
    async def query_package(name, *args, **kwargs):
        raise NoNetworkError(f"Cannot install '{name}' from an index: {_VBX_NO_NETWORK}.")
    def not_here(url):
        return NoNetworkError(f"Cannot fetch {url}: {_VBX_NO_NETWORK}.")
    local = layer.fetch_bytes
    async def fetch_bytes(url, kwargs):
        if str(url).startswith("emfs:"):
            return await local(url, kwargs)
        raise not_here(url)
    async def fetch_string_and_headers(url, kwargs):
        raise not_here(url)
    def load_package(names, *args, **kwargs):
        raise NoNetworkError(f"Cannot load {names}: {_VBX_NO_NETWORK}.")
    index.query_package = query_package
    layer.fetch_bytes = staticmethod(fetch_bytes)
    layer.fetch_string_and_headers = staticmethod(fetch_string_and_headers)
    layer.loadPackage = staticmethod(load_package)
    layer.lockfile_packages.clear()  # the host's packages: not in this runtime

_vbx_offline_micropip()

def _vbx_traceback(exc):
    if isinstance(exc, NoNetworkError):
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)  # a sentence, not a stack
        return
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == "<exec>":
        tb = tb.tb_next  # this wrapper's own frames: the person's come first
    traceback.print_exception(type(exc), exc, tb)

def _vbx_input(prompt=""):
    from pyodide.ffi import can_run_sync, run_sync
    import js
    if not can_run_sync():
        raise EOFError("input() needs WebAssembly stack switching (JSPI), which this browser lacks")
    sys.stdout.write(str(prompt))
    sys.stdout.flush()
    line = run_sync(js._vbxAsk(str(prompt)))
    if line is None:
        raise EOFError
    return str(line)

import builtins
builtins.input = _vbx_input

def _vbx_complete(text):
    import rlcompleter
    completer = rlcompleter.Completer(_vbx_ns)
    out = []
    for i in range(200):
        match = completer.complete(text, i)
        if match is None:
            break
        out.append(match)
    return out

_VBX_AWAIT = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # await micropip.install(...) at top level

async def _vbx_exec(code):
    result = eval(code, _vbx_ns)
    if inspect.iscoroutine(result):
        await result

async def _vbx_run_file(rel):
    global _vbx_ns
    _vbx_ns = {"__name__": "__main__", "__file__": os.path.join(_VBX_ROOT, rel),
               "__builtins__": __builtins__}
    sys.argv = [rel]
    try:
        with open(rel, "rb") as f:
            code = compile(f.read(), rel, "exec", flags=_VBX_AWAIT)
        await _vbx_exec(code)
        return 0
    except SystemExit as exc:
        return _vbx_status(exc)
    except BaseException as exc:
        _vbx_traceback(exc)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()

async def _vbx_eval(source):
    try:
        try:
            code = compile(source, "<console>", "single", flags=_VBX_AWAIT)
        except SyntaxError:
            code = compile(source, "<console>", "exec", flags=_VBX_AWAIT)
        await _vbx_exec(code)
        return 0
    except SystemExit as exc:
        return _vbx_status(exc)
    except BaseException as exc:
        _vbx_traceback(exc)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
`;
    // importScripts needs a trusted URL here too (the frame's CSP is inherited); this
    // worker's own policy admits only the blob: URLs it just made
    const scriptPolicy = self.trustedTypes
      ? self.trustedTypes.createPolicy("vbx-runtime", {
          createScriptURL: (url) => {
            if (!url.startsWith("blob:"))
              throw new TypeError("only the runtime's own files may load");
            return url;
          },
        })
      : null;
    const FLUSH_MS = 16;
    const MAX_PENDING = 8192;
    const MAX_OUTPUT = 1 << 20;
    let pyodide = null;
    let run = null;
    let sitePackages = null;
    const later = new Map(); // wheel file → bytes: the offline set, installed when a run asks
    const held = new Map();
    const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };

    // The runtime's only "fetch": the files it was given. connect-src 'none' refuses every
    // real request anyway; this serves Pyodide's own loads and refuses anything else.
    const served = async (input) => {
      const url = String(input && input.url ? input.url : input);
      const name = url.slice(url.lastIndexOf("/") + 1);
      const bytes = held.get(name);
      if (!bytes) throw new TypeError("This Python runtime has no network.");
      const type = name.endsWith(".wasm") ? "application/wasm" : "application/octet-stream";
      return new Response(bytes, { headers: { "Content-Type": type } });
    };

    const flush = () => {
      if (!run || !run.pending.length) return;
      self.postMessage({ type: "out", id: run.id, chunks: run.pending });
      run.pending = [];
      run.pendingChars = 0;
      run.last = performance.now();
    };
    const say = (text) => {
      run.pending.push(["stderr", text]);
      run.sent += text.length;
    };
    const write = (stream) => ({
      write(bytes) {
        if (!run) return bytes.length;
        const text = decoders[stream].decode(bytes, { stream: true });
        if (run.sent + text.length > MAX_OUTPUT) {
          run.dropped += bytes.length;
          return bytes.length;
        }
        run.sent += text.length;
        const last = run.pending[run.pending.length - 1];
        if (last && last[0] === stream) last[1] += text;
        else run.pending.push([stream, text]);
        run.pendingChars += text.length;
        if (performance.now() - run.last >= FLUSH_MS || run.pendingChars >= MAX_PENDING) flush();
        return bytes.length;
      },
    });

    const boot = async (files, module, wheels, atBoot) => {
      const started = performance.now();
      try {
        for (const name of Object.keys(files)) held.set(name, files[name]);
        if (module instanceof WebAssembly.Module) {
          // compiled once by the frame: a restart only instantiates it
          held.set("pyodide.asm.wasm", new ArrayBuffer(0));
          WebAssembly.instantiateStreaming = async (_source, imports) => ({
            module,
            instance: await WebAssembly.instantiate(module, imports),
          });
        }
        self.fetch = served;
        // The pinned loader files are ES modules, but a module script cannot load from a blob
        // URL of an opaque origin: each is turned into a classic script by rewriting its one
        // export (and import.meta, which only Node reaches) and loaded with importScripts.
        const classic = (name, rewrites) => {
          let text = new TextDecoder().decode(held.get(name));
          for (const [pattern, replacement] of rewrites) {
            if (!pattern.test(text))
              throw new Error(`${name} is not the loader this runtime knows`);
            text = text.replace(pattern, replacement);
          }
          const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
          importScripts(scriptPolicy ? scriptPolicy.createScriptURL(url) : url);
          URL.revokeObjectURL(url);
        };
        classic("pyodide.asm.mjs", [
          [/export\s+default\s+([\w$]+)\s*;/, "self.__vbxCreate = $1;"],
          [/import\.meta\.url/g, JSON.stringify("https://runtime.invalid/pyodide/pyodide.asm.mjs")],
        ]);
        classic("pyodide.mjs", [
          [
            /export\s*\{\s*([\w$]+)\s+as\s+loadPyodide\s*,\s*([\w$]+)\s+as\s+version\s*\}\s*;/,
            "self.__vbxLoad = $1;",
          ],
        ]);
        const loadPyodide = self.__vbxLoad;
        const asm = { default: self.__vbxCreate };
        delete self.__vbxLoad;
        delete self.__vbxCreate;
        const lock = JSON.parse(new TextDecoder().decode(held.get("pyodide-lock.json")));
        pyodide = await loadPyodide({
          indexURL: "https://runtime.invalid/pyodide/",
          lockFileContents: lock,
          createPyodideModule: asm.default,
          env: { HOME: "/home/pyodide" },
        });
        held.clear();
        pyodide.setStdout(write("stdout"));
        pyodide.setStderr(write("stderr"));
        pyodide.setStdin({ stdin: () => undefined }); // input() reads end of file (docs/python.md)
        const site = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
        sitePackages = site;
        for (const name of Object.keys(wheels)) {
          if (atBoot && !atBoot.includes(name))
            later.set(name, wheels[name]); // the offline set: on a run's demand
          else pyodide.unpackArchive(wheels[name], "zip", { extractDir: site });
        }
        pyodide.runPython(SETUP);
        self.postMessage({ type: "up", ms: Math.round(performance.now() - started) });
      } catch (err) {
        self.postMessage({ type: "down", message: String(err && err.message ? err.message : err) });
      }
    };

    // input(): the run's stack is suspended (JSPI, pyodide.ffi.run_sync) until the person's
    // line comes back through the frame and the host; no SharedArrayBuffer needed
    let asking = null;
    self._vbxAsk = (prompt) =>
      new Promise((resolve) => {
        flush();
        asking = resolve;
        self.postMessage({
          type: "ask",
          id: run ? run.id : null,
          prompt: String(prompt).slice(0, 1000),
        });
      });

    const execute = async (job) => {
      const started = performance.now();
      run = { id: job.id, pending: [], pendingChars: 0, last: 0, sent: 0, dropped: 0 };
      let exit = 1;
      let error;
      try {
        // the offline set's wheels the project's requirements named (the host decided), once
        // each until a restart, each said in the run's output
        const wanted = (job.load || []).filter((name) => later.has(name));
        for (const name of wanted) {
          const began = performance.now();
          const [dist, version] = name.split("-");
          pyodide.unpackArchive(later.get(name), "zip", { extractDir: sitePackages });
          later.delete(name);
          say(
            `Installed ${dist.replace(/_/g, "-")} ${version} from the offline set (${Math.round(performance.now() - began)} ms)\n`,
          );
          flush();
        }
        if (wanted.length) pyodide.runPython("import importlib; importlib.invalidate_caches()");
        pyodide.runPython("_vbx_reset()");
        const FS = pyodide.FS;
        for (const [path, buffer] of job.files) {
          const full = `/project/${path}`;
          FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
          FS.writeFile(full, new Uint8Array(buffer));
        }
        pyodide.runPython("_vbx_mark()");
        pyodide.globals.set("_vbx_arg", job.mode === "eval" ? job.code : job.path);
        exit = await pyodide.runPythonAsync(
          job.mode === "eval" ? "await _vbx_eval(_vbx_arg)" : "await _vbx_run_file(_vbx_arg)",
        );
      } catch (err) {
        error = `The runtime failed: ${String(err && err.message ? err.message : err)}`;
      }
      flush();
      const ms = Math.round(performance.now() - started);
      let present = null; // null: the host applies nothing (absence is never guessed)
      const changed = [];
      try {
        const result = pyodide.runPython("_vbx_changes()");
        const [all, differing] = result.toJs();
        result.destroy();
        for (const path of differing) {
          const bytes = pyodide.FS.readFile(`/project/${path}`);
          changed.push([path, bytes.buffer]);
        }
        present = all;
      } catch (err) {
        error ??= `The runtime could not list its files: ${String(err && err.message ? err.message : err)}`;
      }
      const answer = {
        type: "done",
        id: job.id,
        exit: typeof exit === "number" ? exit : 1,
        ms,
        present,
        changed,
        dropped: run.dropped,
      };
      if (error) answer.error = error;
      run = null;
      self.postMessage(
        answer,
        changed.map(([, b]) => b),
      );
    };

    const said = (err) => String(err && err.message ? err.message : err);
    self.addEventListener("unhandledrejection", (event) => {
      if (!pyodide) self.postMessage({ type: "down", message: said(event.reason) });
    });
    self.onmessage = (event) => {
      const m = event.data;
      if (m && m.type === "boot")
        boot(m.files, m.module, m.wheels || {}, Array.isArray(m.atBoot) ? m.atBoot : null);
      else if (m && m.type === "run" && pyodide) execute(m);
      else if (m && m.type === "complete") {
        let matches = [];
        if (pyodide && !run)
          try {
            const found = pyodide.globals.get("_vbx_complete")(String(m.text));
            matches = found.toJs();
            found.destroy();
          } catch {
            // no completion is no error
          }
        self.postMessage({ type: "completed", id: m.id, matches });
      } else if (m && m.type === "answer" && asking) {
        const resolve = asking;
        asking = null;
        resolve(typeof m.text === "string" ? m.text : null);
      }
    };
  };

  const workerUrl = URL.createObjectURL(
    new Blob([`(${workerProgram})();`], { type: "text/javascript" }),
  );
  const urlPolicy = self.trustedTypes
    ? self.trustedTypes.createPolicy("vbx-runtime", {
        createScriptURL: (url) => {
          if (url !== workerUrl) throw new TypeError("only the runtime's own worker may load");
          return url;
        },
      })
    : null;
  const trustedWorkerUrl = urlPolicy ? urlPolicy.createScriptURL(workerUrl) : workerUrl;

  let port = null;
  let files = null;
  let wheels = {};
  let atBoot = null; // the wheels installed at boot (micropip); the others wait for a run's load
  let compiled = Promise.resolve(null);
  let worker = null;
  let generation = 0;
  let up = false;
  let current = null; // {id, chunks, chars, dropped, messages, timer, started}
  let completing = null; // the id of the completion asked of the worker

  const forwardOutput = () => {
    if (!current) return;
    current.timer = null;
    if (!current.chunks.length) return;
    port.postMessage({ type: "out", id: current.id, chunks: current.chunks });
    current.chunks = [];
  };

  const finish = (answer, transfer = []) => {
    if (!current) return;
    clearTimeout(current.timer);
    forwardOutput();
    answer.dropped = (typeof answer.dropped === "number" ? answer.dropped : 0) + current.dropped;
    current = null;
    port.postMessage(answer, transfer);
  };

  const start = () => {
    worker?.terminate();
    up = false;
    if (completing) port.postMessage({ type: "completed", id: completing, matches: [] });
    completing = null;
    const mine = ++generation;
    worker = new Worker(trustedWorkerUrl);
    worker.onmessage = (event) => {
      if (mine === generation) fromWorker(event.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (mine !== generation) return;
      const message = event.message
        ? `${event.message} (${event.filename}:${event.lineno})`
        : "the runtime worker stopped";
      if (current)
        finish({
          type: "done",
          id: current.id,
          exit: 1,
          ms: Math.round(performance.now() - current.started),
          present: null,
          changed: [],
          error: `The runtime stopped: ${message}`,
        });
      if (!up) port.postMessage({ type: "down", message });
      else start(); // crashed after boot: a fresh one
    };
    compiled.then((module) => {
      if (mine !== generation) return;
      const names = module ? NAMES.filter((n) => n !== "pyodide.asm.wasm") : NAMES;
      worker.postMessage({
        type: "boot",
        module,
        files: Object.fromEntries(names.map((n) => [n, files[n].slice(0)])),
        wheels: Object.fromEntries(Object.entries(wheels).map(([n, b]) => [n, b.slice(0)])),
        atBoot,
      });
    });
  };

  const restart = () => {
    if (current) {
      const id = current.id;
      finish({
        type: "done",
        id,
        stopped: true,
        ms: Math.round(performance.now() - current.started),
      });
    }
    start();
  };

  const fromWorker = (data) => {
    if (!data || typeof data !== "object") return;
    if (data.type === "up" && !up) {
      up = true;
      port.postMessage({ type: "up", ms: typeof data.ms === "number" ? data.ms : 0 });
    } else if (data.type === "down" && !up) {
      port.postMessage({ type: "down", message: String(data.message).slice(0, 300) });
    } else if (
      data.type === "out" &&
      current &&
      data.id === current.id &&
      Array.isArray(data.chunks)
    ) {
      if (++current.messages > MAX_MESSAGES) {
        restart();
        return;
      }
      for (const pair of data.chunks.slice(0, 64)) {
        if (
          !Array.isArray(pair) ||
          (pair[0] !== "stdout" && pair[0] !== "stderr") ||
          typeof pair[1] !== "string"
        )
          continue;
        let text = pair[1];
        const room = MAX_OUTPUT_CHARS - current.chars;
        if (text.length > room) {
          current.dropped += text.length - Math.max(room, 0);
          text = text.slice(0, Math.max(room, 0));
        }
        if (!text) continue;
        current.chars += text.length;
        const last = current.chunks[current.chunks.length - 1];
        if (last && last[0] === pair[0]) last[1] += text;
        else current.chunks.push([pair[0], text]);
      }
      current.timer ??= setTimeout(forwardOutput, FLUSH_MS);
    } else if (data.type === "ask" && current && data.id === current.id) {
      clearTimeout(current.timer);
      forwardOutput(); // the prompt first
      port.postMessage({ type: "ask", id: current.id, prompt: String(data.prompt).slice(0, 1000) });
    } else if (data.type === "completed" && completing && data.id === completing) {
      completing = null;
      const matches = Array.isArray(data.matches)
        ? data.matches
            .filter((m) => typeof m === "string")
            .slice(0, 200)
            .map((m) => m.slice(0, 200))
        : [];
      port.postMessage({ type: "completed", id: data.id, matches });
    } else if (data.type === "done" && current && data.id === current.id) {
      const present = Array.isArray(data.present)
        ? data.present.filter((p) => typeof p === "string")
        : null;
      const changed = Array.isArray(data.changed)
        ? data.changed.filter(
            (c) => Array.isArray(c) && typeof c[0] === "string" && c[1] instanceof ArrayBuffer,
          )
        : [];
      const answer = {
        type: "done",
        id: data.id,
        exit: Number.isInteger(data.exit) ? data.exit : 1,
        ms: typeof data.ms === "number" ? data.ms : 0,
        present,
        changed,
        dropped: typeof data.dropped === "number" ? data.dropped : 0,
      };
      if (typeof data.error === "string") answer.error = data.error.slice(0, 2000);
      finish(
        answer,
        changed.map((c) => c[1]),
      );
    }
  };

  const serve = (p) => {
    port = p;
    port.onmessage = (event) => {
      const m = event.data;
      if (!m || typeof m !== "object") return;
      if (m.type === "boot" && m.files && NAMES.every((n) => m.files[n] instanceof ArrayBuffer)) {
        files = m.files;
        // the runtime's own pinned wheels (micropip), checked by the host against their pins
        wheels = Object.fromEntries(
          Object.entries(m.wheels && typeof m.wheels === "object" ? m.wheels : {}).filter(
            ([n, b]) => /^[\w.+-]+\.whl$/.test(n) && b instanceof ArrayBuffer,
          ),
        );
        // compiled once here ('wasm-unsafe-eval'); each (re)started worker only instantiates it
        atBoot = Array.isArray(m.atBoot) ? m.atBoot.filter((n) => typeof n === "string") : null;
        compiled = WebAssembly.compile(files["pyodide.asm.wasm"]).catch(() => null);
        start();
      } else if (m.type === "complete" && typeof m.id === "string" && typeof m.text === "string") {
        if (!up || current || completing) {
          port.postMessage({ type: "completed", id: m.id, matches: [] });
          return;
        }
        completing = m.id;
        worker.postMessage({ type: "complete", id: m.id, text: m.text.slice(0, 1000) });
      } else if (m.type === "answer" && current && m.id === current.id) {
        worker.postMessage({
          type: "answer",
          text: typeof m.text === "string" ? m.text.slice(0, 65536) : null,
        });
      } else if (m.type === "restart" && files) {
        restart();
      } else if (m.type === "run" && typeof m.id === "string") {
        if (!up || current) {
          port.postMessage({
            type: "done",
            id: m.id,
            exit: 1,
            ms: 0,
            present: null,
            changed: [],
            error: up ? "Python is busy." : "The Python runtime is not running.",
          });
          return;
        }
        current = {
          id: m.id,
          chunks: [],
          chars: 0,
          dropped: 0,
          messages: 0,
          timer: null,
          started: performance.now(),
        };
        const load = Array.isArray(m.load)
          ? m.load.filter((n) => typeof n === "string" && n in wheels).slice(0, 100)
          : [];
        const job = {
          type: "run",
          id: m.id,
          mode: m.mode === "eval" ? "eval" : "file",
          path: m.path,
          code: m.code,
          files: m.files,
          load,
        };
        worker.postMessage(
          job,
          (m.files || []).map((f) => f[1]).filter((b) => b instanceof ArrayBuffer),
        );
      }
    };
    port.postMessage({ type: "ready", v: 1 });
  };

  // 3. The first message from the parent carrying exactly one port is the connection.
  const connect = (event) => {
    if (
      event.source !== window.parent ||
      event.ports.length !== 1 ||
      !event.data ||
      event.data.type !== "voicebox-runtime-connect"
    ) {
      return;
    }
    window.removeEventListener("message", connect);
    serve(event.ports[0]);
  };
  window.addEventListener("message", connect);
})();
