// The offline cache (SPEC §2): after one successful load the site boots and opens projects
// with every network request failing. Thin glue — a cache, and one rule about requests: none
// leaves for another origin.
//
// - The build stamps BUILD (the site manifest's build hash) and FILES (every pinned file of
//   site-manifest.json with its sha256) into the copy it ships, so a new build — a new lock,
//   a new wheel, any changed file — is a new script, which the browser installs.
// - install: fetch EXACTLY those files, each with browser SRI (integrity = its sha256), plus
//   site-manifest.json (checked to be this build's), into the cache "voicebox-site-<BUILD>".
//   One failure fails the install; the previous version keeps serving. A new version waits
//   until the page, once its host is ready, says "skip-waiting" (page/sw-register.mjs): a
//   booting host never has its files switched under it; the next load uses the new build.
// - activate: delete every other build's "voicebox-site-*" and "voicebox-snapshot-*" caches
//   (the host keeps the inflated Python snapshot of its build in the latter,
//   worker/snapshot.mjs), then control the open pages.
// - fetch: a request for another origin that loads anything (a script, import(), a worker, a
//   style, an image, a frame) is answered with a network error, never sent — the page's CSP
//   already forbids it, and this is what stops the workers' import() on a host that sends no
//   worker CSP header (docs/operations.md, "What the workers can reach"); a plain CORS fetch
//   (destination "") goes on: the host worker's call to a remote environment it paired,
//   which the worker's egress guard admitted (docs/security.md, "Remote environments"); a
//   GET for one of those files (or for the site folder itself, i.e. index.html) is answered
//   from the cache, falling back to the network; every other request is left alone.
// - the worker scripts (WORKER_SCRIPTS) are answered with the workers' CSP (WORKER_CSP) when
//   their response carries none — a static host that sends no headers: a worker's CSP can
//   only come from its script's response, and with it the browser refuses import() of another
//   origin even where this worker does not see the request. Both are stamped by the build from
//   worker/sitebuild/serve.py (service_worker_worker_csp), the one place the CSP is written; a
//   response with the host's own CSP keeps it (issue 29 item 12).
// - the frame pages of SANDBOXED_FRAMES (the Python runtime's, issue 32) are answered with
//   their header CSP (`sandbox allow-scripts; …`, stamped from worker/sitebuild/serve.py):
//   the page frames them without the sandbox attribute when this worker controls it, because
//   Chromium never lets a service worker answer a frame sandboxed by its attribute; the
//   header gives the document the same opaque origin, and the page checks it did before it
//   hands the frame anything (page/ui/python.mjs). This is what lets Run work offline.
// - message "claim": control the pages now (the page asks when it was loaded without this
//   worker — a hard reload — before it starts its host worker: page/sw-register.mjs).
// - streamed downloads (issue 34; docs/archives.md §4, "Where the bytes go"): a page this worker
//   controls posts {kind: "download", name} with a port (the control port) and the download's
//   bytes: a ReadableStream (transferred), or a second MessagePort (`bytes`, issue 34 round
//   42) whose other end the page hands to whoever makes the bytes — the host worker, so the
//   archive goes worker → this worker and never crosses the page's thread. On that port come
//   ArrayBuffers (transferred), then {end: true} (the last byte) or {end: false} (failed).
//   `name` may come later, as {name} on the control port: the URL is answered once it has.
//   This worker answers on the control port {url}: DOWNLOADS + a fresh 128-bit random token,
//   which it answers ONCE, within DOWNLOAD_TTL_MS, with the stream as an attachment named
//   `name`. A token asked again, expired, unknown, or whose page is gone is answered 404 with
//   no body, never from the network. {fail} on the control port fails the download (the
//   browser keeps no partial file). The port is told {done: true} when the download has read
//   the last byte, {done: false} when it stopped early (cancelled, failed, expired). The token
//   carries nothing but itself; no secret ever passes here (the archive's bytes only).
//
// Scope: this file sits in the site's root folder, so its scope is that folder, whatever path
// the site is served under.

const BUILD = "__VOICEBOX_BUILD__";
const FILES = /*__VOICEBOX_FILES__*/ [];
const WORKER_CSP = "__VOICEBOX_WORKER_CSP__";
const WORKER_SCRIPTS = /*__VOICEBOX_WORKER_SCRIPTS__*/ [];
const SANDBOXED_FRAMES = /*__VOICEBOX_SANDBOXED_FRAMES__*/ {};

const SITE_PREFIX = "voicebox-site-";
const SNAPSHOT_PREFIX = "voicebox-snapshot-";
const CACHE = SITE_PREFIX + BUILD;
const ROOT = new URL("./", self.location.href);
const MANIFEST = new URL("site-manifest.json", ROOT).href;
const INDEX = new URL("index.html", ROOT).href;
const PINNED = new Map(FILES.map(([path, sha256]) => [new URL(path, ROOT).href, sha256]));
const WORKERS = new Set(WORKER_SCRIPTS.map((path) => new URL(path, ROOT).href));
const SANDBOXED = new Map(
  Object.entries(SANDBOXED_FRAMES).map(([path, csp]) => [new URL(path, ROOT).href, csp]),
);
const PARALLEL = 6;
/** Where streamed downloads are answered: ROOT + "download/" + a token (32 hex digits). */
const DOWNLOADS = new URL("download/", ROOT).href;
/** A registered download not asked for within this long is dropped, its stream cancelled. */
const DOWNLOAD_TTL_MS = 30_000;
/** token → {stream, name, owner (the page's client id), port, timer}: registered, not yet asked. */
const downloads = new Map();

/** A fresh token: 16 random bytes as hex. */
function freshToken() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The Content-Disposition of an attachment saved as `name`: an ASCII fallback (every other
 * character, quote, backslash and control character `_`) and the exact name (RFC 6266). */
function attachment(name) {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** A ReadableStream of the chunks posted on `bytes` (a MessagePort): each ArrayBuffer, until
 * {end: true} closes it or {end: false} fails it; cancelling it closes the port. Also
 * answers `fail(reason)`, which fails it. */
function portStream(bytes) {
  let source = null;
  let open = true;
  const stop = () => {
    open = false;
    bytes.onmessage = null;
    bytes.close();
  };
  const stream = new ReadableStream({
    start(controller) {
      source = controller;
      bytes.onmessage = (event) => {
        const data = event.data;
        if (!open) return;
        if (data instanceof ArrayBuffer) controller.enqueue(new Uint8Array(data));
        else if (data?.end === true) {
          stop();
          controller.close();
        } else if (data?.end === false) {
          stop();
          controller.error(new Error(String(data.why ?? "the download failed")));
        }
      };
    },
    cancel() {
      stop();
    },
  });
  const fail = (reason) => {
    if (!open) return;
    stop();
    source.error(new Error(String(reason)));
  };
  return { stream, fail };
}

/** Register `stream` (a ReadableStream of Uint8Array/ArrayBuffer chunks) as a download named
 * `name` (null: said later, {name} on `port`) for the page `owner`; answers {url} on `port`.
 * `fail` (or null) fails the stream when the page says {fail} on `port`. */
function registerDownload(stream, name, owner, port, fail = null) {
  const token = freshToken();
  let named;
  const entry = { stream, name, owner, port, timer: null, named: null };
  entry.named =
    name !== null
      ? Promise.resolve()
      : new Promise((resolve) => {
          named = resolve;
        });
  port.onmessage = (event) => {
    const data = event.data ?? {};
    if (typeof data.name === "string" && entry.name === null) {
      entry.name = data.name || "download.zip";
      named();
    } else if ("fail" in data) fail?.(data.fail);
  };
  entry.timer = setTimeout(() => {
    if (!downloads.delete(token)) return;
    stream.cancel("the download was not started in time").catch(() => {});
    port.postMessage({ done: false, why: "expired" });
  }, DOWNLOAD_TTL_MS);
  downloads.set(token, entry);
  port.postMessage({ url: DOWNLOADS + token });
}

/** The answer to a request under DOWNLOADS: the registered stream, once; else 404. */
async function answerDownload(url) {
  const token = url.href.slice(DOWNLOADS.length);
  const entry = downloads.get(token);
  downloads.delete(token); // single use, asked or refused
  const gone = () => new Response(null, { status: 404, headers: { "Cache-Control": "no-store" } });
  if (!entry) return gone();
  clearTimeout(entry.timer);
  // a page opens the URL only once it has said the name; should it never, the fallback name
  await Promise.race([entry.named, new Promise((resolve) => setTimeout(resolve, DOWNLOAD_TTL_MS))]);
  entry.name ??= "download.zip";
  if (!(await self.clients.get(entry.owner))) {
    entry.stream.cancel("its page is gone").catch(() => {});
    return gone();
  }
  let finished = false;
  const counted = new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : chunk);
    },
    flush() {
      finished = true;
    },
  });
  entry.stream
    .pipeTo(counted.writable)
    .then(
      () => entry.port.postMessage({ done: finished }),
      () => entry.port.postMessage({ done: false, why: "stopped" }),
    )
    .finally(() => entry.port.close());
  return new Response(counted.readable, {
    status: 200,
    headers: {
      "Content-Type": "application/zip",
      "Content-Disposition": attachment(entry.name),
      "Content-Security-Policy": "default-src 'none'; sandbox",
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-store",
    },
  });
}

/** `response` with the workers' CSP when it is a worker script's and carries no CSP of its own. */
function withWorkerCsp(key, response) {
  if (!WORKERS.has(key) || !response.ok || response.headers.has("Content-Security-Policy"))
    return response;
  const headers = new Headers(response.headers);
  headers.set("Content-Security-Policy", WORKER_CSP);
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** `response` with its frame's sandbox CSP (replacing any) when it is a sandboxed frame page's. */
function withFrameCsp(key, response) {
  if (!SANDBOXED.has(key) || !response.ok) return response;
  const headers = new Headers(response.headers);
  headers.set("Content-Security-Policy", SANDBOXED.get(key));
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

function sri(hex) {
  const bytes = hex.match(/../g).map((h) => parseInt(h, 16));
  return `sha256-${btoa(String.fromCharCode(...bytes))}`;
}

async function precache() {
  const manifestResponse = await fetch(MANIFEST, { cache: "no-cache" });
  if (!manifestResponse.ok) throw new Error(`site-manifest.json: HTTP ${manifestResponse.status}`);
  const manifest = await manifestResponse.clone().json();
  if (manifest.build !== BUILD)
    throw new Error(`site-manifest.json is build ${manifest.build}, this worker is ${BUILD}`);
  const cache = await caches.open(CACHE);
  const queue = [...PINNED.entries()];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [url, sha256] = next;
      const response = await fetch(new Request(url, { cache: "no-cache", integrity: sri(sha256) }));
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      await cache.put(url, response);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  await cache.put(MANIFEST, manifestResponse);
}

self.addEventListener("install", (event) => {
  event.waitUntil(precache());
});

self.addEventListener("message", (event) => {
  if (event.data === "skip-waiting") self.skipWaiting();
  if (event.data === "claim") event.waitUntil(self.clients.claim());
  const data = event.data;
  const port = event.ports?.[0];
  const fed = data?.stream instanceof ReadableStream || data?.bytes instanceof MessagePort;
  if (data?.kind === "download" && fed && port) {
    const owner = event.source?.id;
    const name = typeof data.name === "string" ? data.name || "download.zip" : null;
    if (typeof owner !== "string" || event.origin !== ROOT.origin) {
      port.postMessage({ url: null });
      data.bytes?.close();
    } else if (data.bytes instanceof MessagePort) {
      const { stream, fail } = portStream(data.bytes);
      registerDownload(stream, name, owner, port, fail);
    } else registerDownload(data.stream, name ?? "download.zip", owner, port);
  }
  // data?.kind === "download-alive": a streamed download still running; the message itself
  // keeps this worker alive (a browser may stop an idle one mid-download)
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        const ours = name === SITE_PREFIX + BUILD || name === SNAPSHOT_PREFIX + BUILD;
        const old = !ours && (name.startsWith(SITE_PREFIX) || name.startsWith(SNAPSHOT_PREFIX));
        if (old) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== ROOT.origin) {
    // A plain fetch (destination "": fetch/XHR — the host worker's calls to a remote
    // environment it paired) goes on: the worker's egress guard already admitted it (the
    // paired origins, decided in Python), and the page's own CSP says connect-src 'self'.
    // Anything that loads code, a style, an image or a frame from another origin (import(),
    // a worker script …) is refused here.
    if (request.destination === "" && request.mode === "cors") return;
    event.respondWith(Response.error());
    return;
  }
  if (request.method !== "GET") return;
  url.hash = "";
  if (url.href.startsWith(DOWNLOADS)) {
    url.search = "";
    event.respondWith(answerDownload(url));
    return;
  }
  const key = url.href === ROOT.href ? INDEX : url.href;
  if (!PINNED.has(key) && key !== MANIFEST) return;
  event.respondWith(
    (async () => {
      const hit = await (await caches.open(CACHE)).match(key);
      return withFrameCsp(key, withWorkerCsp(key, hit ?? (await fetch(request))));
    })(),
  );
});
