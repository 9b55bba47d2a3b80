// The egress guard of a worker that runs Python (the host worker, each environment server):
// every way the worker's code could send a request or open a connection asks ONE decision,
// `allowed(url)` — this site's own origin, nothing else — before anything leaves (SPEC §2,
// §12; what holds with and without the worker's CSP header: docs/operations.md).
//
// - fetch: the arguments become a Request first; its URL is checked and that very Request is
//   sent, so an argument that reads differently the second time (an object whose toString
//   changes) cannot pass the check with one URL and leave with another;
// - XMLHttpRequest.open, WebSocket, WebSocketStream, EventSource, WebTransport, Cache add and
//   addAll: the URL is read once, checked, and only the checked text is passed on;
// - Worker: only the worker scripts named at install (a blob: or data: worker would run with no
//   guard at all); importScripts, Notification and FontFace from a URL: refused (none is used);
// - import(): cannot be wrapped from JavaScript. The worker's CSP header covers it, and so does
//   the service worker once it controls the site (page/sw.js refuses every other origin).
//
// The originals stay inside this module; the replacements cannot be reassigned, on the global
// object nor on the prototype that defines the original (WorkerGlobalScope.prototype). No business
// rule lives here: a later allow-list (remote environments, decided in Python) is one more
// answer of `allowed` (`allowAlso`), never another check. Bytes fetched are counted on a clone
// for the boot's progress bar; the caller gets the browser's own Response (Chromium caches the
// compiled pyodide.asm.wasm by the response's URL).

const NativeRequest = globalThis.Request;
const nativeFetch = globalThis.fetch.bind(globalThis);
let installed = null;

async function count(response, url, onBytes) {
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onBytes(url, value.byteLength);
  }
}

function lock(target, name, value) {
  Object.defineProperty(target, name, {
    value,
    writable: false,
    configurable: false,
    enumerable: false,
  });
}

/** Lock `name` on the global object AND wherever its prototype chain defines it: a global
 * function such as fetch lives on WorkerGlobalScope.prototype, whose original stays reachable
 * (`WorkerGlobalScope.prototype.fetch.call(self, url)`) when only the global's own property is
 * replaced (issue 29, the tryout of item 12). */
function lockChain(name, value) {
  for (let o = Object.getPrototypeOf(globalThis); o !== null; o = Object.getPrototypeOf(o)) {
    if (Object.prototype.hasOwnProperty.call(o, name)) lock(o, name, value);
  }
  lock(globalThis, name, value);
}

/** Replace the constructor `name` by one that passes its arguments through `checked` first. */
function guardConstructor(name, checked) {
  const Native = globalThis[name];
  if (typeof Native !== "function") return;
  const Guarded = function (...args) {
    if (!new.target)
      throw new TypeError(`Failed to construct '${name}': Please use the 'new' operator.`);
    return Reflect.construct(Native, checked(args), new.target);
  };
  Guarded.prototype = Native.prototype;
  Object.setPrototypeOf(Guarded, Object.getPrototypeOf(Native));
  for (const key of Reflect.ownKeys(Native)) {
    if (!["prototype", "length", "name", "caller", "arguments"].includes(key)) {
      Object.defineProperty(Guarded, key, Object.getOwnPropertyDescriptor(Native, key));
    }
  }
  Object.defineProperty(Guarded, "name", { value: name });
  // instances (and Guarded.prototype) lead back to Guarded, never to the unguarded original
  Object.defineProperty(Native.prototype, "constructor", {
    value: Guarded,
    writable: true,
    configurable: true,
  });
  lock(globalThis, name, Guarded);
}

function refuse(what, why) {
  throw new TypeError(`refused ${what}: ${why}`);
}

/**
 * Install the guard in this worker, once, before anything else runs. `site` is the site's root
 * URL; `workers` the only script URLs a nested worker may be started from. Returns the guard:
 * `countBytes(fn)` sets the byte counter `fn(url, n)` (or null), `fetchUncounted` is the checked
 * fetch without counting, `allowAlso(fn)` adds the later allow-list's answer (once).
 */
export function installEgressGuard({ site, workers = [] }) {
  if (installed) throw new Error("the egress guard is installed once, by the worker's own script");
  const origin = new URL(site).origin;
  const scripts = new Set(workers.map((w) => new URL(w, site).href));
  let also = null;
  let onBytes = null;
  const allowed = (url) => url.origin === origin || (also !== null && also(url) === true);

  /** The checked absolute URL text of `target` (read once), or a refusal naming `what`. */
  const check = (target, what) => {
    let url;
    try {
      url = new URL(String(target), globalThis.location.href);
    } catch {
      refuse(what, "not a URL");
    }
    if (!allowed(url))
      refuse(what, `${url.origin} is not this site; the worker only reaches its own site`);
    return url.href;
  };
  const firstChecked = (what) => (args) => [check(args[0], what), ...args.slice(1)];

  const guardedFetch = (counted) =>
    async function fetch(input, init) {
      const request = new NativeRequest(input, init);
      check(request.url, "fetch");
      const response = await nativeFetch(request);
      if (counted && onBytes && response.body)
        count(response.clone(), request.url, onBytes).catch(() => {});
      return response;
    };
  lockChain("fetch", guardedFetch(true));

  if (globalThis.XMLHttpRequest) {
    const open = XMLHttpRequest.prototype.open;
    lock(XMLHttpRequest.prototype, "open", function (method, url, ...rest) {
      return open.call(this, method, check(url, "XMLHttpRequest"), ...rest);
    });
  }
  for (const name of ["WebSocket", "WebSocketStream", "EventSource", "WebTransport"]) {
    guardConstructor(name, firstChecked(name));
  }
  guardConstructor("Worker", (args) => {
    const href = check(args[0], "Worker");
    if (!scripts.has(href))
      refuse("Worker", "only this worker's own environment servers may be started");
    return [href, ...args.slice(1)];
  });
  guardConstructor("FontFace", (args) => {
    if (!(args[1] instanceof ArrayBuffer || ArrayBuffer.isView(args[1])))
      refuse("FontFace", "a font is never loaded from a URL");
    return args;
  });
  guardConstructor("Notification", () => refuse("Notification", "the worker shows none"));
  if (globalThis.Cache) {
    const { add, addAll } = Cache.prototype;
    const checkedRequest = (r) => {
      const request = new NativeRequest(r);
      check(request.url, "Cache");
      return request;
    };
    lock(Cache.prototype, "add", function (r) {
      return add.call(this, checkedRequest(r));
    });
    lock(Cache.prototype, "addAll", function (rs) {
      return addAll.call(this, Array.from(rs, checkedRequest));
    });
  }
  // Pyodide asks importScripts whether this is a classic worker: a TypeError says it is not
  if (typeof globalThis.importScripts === "function") {
    lockChain("importScripts", function importScripts() {
      throw new TypeError("refused importScripts: this worker loads modules of its own site only");
    });
  }

  installed = Object.freeze({
    fetchUncounted: guardedFetch(false),
    countBytes(fn) {
      onBytes = typeof fn === "function" ? fn : null;
    },
    allowAlso(fn) {
      if (also !== null) throw new Error("the allow-list is set once");
      also = fn;
    },
  });
  return installed;
}

/** The guard this worker installed; throws if its script did not install one first. */
export function egressGuard() {
  if (!installed) throw new Error("the egress guard was not installed");
  return installed;
}
