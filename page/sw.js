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
  const key = url.href === ROOT.href ? INDEX : url.href;
  if (!PINNED.has(key) && key !== MANIFEST) return;
  event.respondWith(
    (async () => {
      const hit = await (await caches.open(CACHE)).match(key);
      return withFrameCsp(key, withWorkerCsp(key, hit ?? (await fetch(request))));
    })(),
  );
});
