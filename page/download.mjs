// A streamed download (issue 34; docs/archives.md §4, "Where the bytes go"): the bytes a call
// streams go into a stream the site's service worker (page/sw.js) answers a one-time download
// URL with — the file is written as the bytes come, never gathered into Blobs. Since round 42
// the bytes travel on a MessagePort (`sink`) whose other end the service worker holds: the
// page hands `sink` to the host worker (page/host-client.mjs, a streamed call's `sink`), so the
// archive goes host worker → service worker and never crosses this page's thread; the page may
// also write to it itself (`write`, the bench's bare floors). Thin: what is saved, and under
// which name, is the host's; here bytes are only moved. Where no service worker controls the
// page, `streamedDownload` answers null and the caller saves a Blob instead (page/dom.mjs
// downloadBlob).

import { el } from "./dom.mjs";

/** How long the service worker is waited for to register the download (ms). */
const REGISTER_WAIT_MS = 3_000;
/** While a download runs, the service worker is told so this often (ms): a browser may stop an
 * idle service worker, and with it the download. */
const ALIVE_EVERY_MS = 10_000;

/**
 * Register a streamed download with the controlling service worker. Resolves null where it
 * cannot be streamed (no controlling service worker, no answer in time); else
 *   {handOff(), open(name), write(ArrayBuffer), close(), fail(reason), signal, saved}
 * `handOff()` answers the MessagePort the bytes go on, to be transferred to the worker that
 * makes them (it posts ArrayBuffers, transferred, then {end: true} after the last, or
 * {end: false}); `write` and `close` do nothing after it. Else this page writes them: `write`
 * queues bytes in order (transferred) and `close` ends the file.
 * `open(name)` starts the download in a hidden frame, saved as `name` (the host's
 * `archive_filename`) — bytes may be posted before: they wait in the service worker. With
 * `name` given here, it is opened at once. `fail` makes the browser fail the download (no
 * file is left: the browser removes its partial one); `signal` (an AbortSignal) aborts when
 * the person cancelled the download, or the browser stopped reading it; `saved` resolves true
 * once the download has read the last byte, false when it stopped early. The URL is
 * single-use and expires (page/sw.js).
 */
export async function streamedDownload(name = null) {
  const worker = navigator.serviceWorker?.controller;
  if (!worker || typeof MessageChannel !== "function") return null;
  const stopped = new AbortController();
  const control = new MessageChannel();
  const bytes = new MessageChannel();
  let savedAs;
  const saved = new Promise((resolve) => {
    savedAs = resolve;
  });
  const url = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), REGISTER_WAIT_MS);
    control.port1.onmessage = (event) => {
      const data = event.data ?? {};
      if ("url" in data) {
        clearTimeout(timer);
        resolve(typeof data.url === "string" ? data.url : null);
      } else if ("done" in data) {
        if (data.done !== true) stopped.abort();
        savedAs(data.done === true);
      }
    };
    const message = { kind: "download", bytes: bytes.port1 };
    if (typeof name === "string") message.name = name;
    worker.postMessage(message, [control.port2, bytes.port1]);
  });
  if (url === null) {
    control.port1.close();
    bytes.port2.close();
    return null;
  }
  const alive = setInterval(() => worker.postMessage({ kind: "download-alive" }), ALIVE_EVERY_MS);
  let frame = null;
  saved.finally(() => {
    clearInterval(alive);
    control.port1.close();
    setTimeout(() => frame?.remove(), 1_000);
  });
  const open = (named) => {
    if (frame !== null || stopped.signal.aborted) return;
    control.port1.postMessage({ name: String(named) });
    frame = el("iframe", { src: url, hidden: true, title: "download", class: "download-frame" });
    document.body.appendChild(frame);
  };
  if (typeof name === "string") open(name);
  let writing = true; // this page writes the bytes (not handed off, not closed)
  let failed = false;
  return {
    handOff() {
      writing = false;
      return bytes.port2;
    },
    open,
    write(buffer) {
      if (writing && !stopped.signal.aborted) bytes.port2.postMessage(buffer, [buffer]);
    },
    close() {
      if (!writing) return;
      writing = false;
      if (!stopped.signal.aborted) bytes.port2.postMessage({ end: true });
    },
    fail(reason) {
      if (failed) return;
      failed = true;
      writing = false;
      control.port1.postMessage({ fail: String(reason) });
      if (frame === null) savedAs(false); // never opened: nothing to wait for
    },
    signal: stopped.signal,
    saved,
  };
}
