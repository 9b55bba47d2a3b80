// A streamed download (issue 34; docs/archives.md §4, "Where the bytes go"): the bytes a call
// streams go from the host worker through this page into a ReadableStream the site's service
// worker (page/sw.js) answers a one-time download URL with — the file is written as the bytes
// come, never gathered into Blobs. Thin: what is saved, and under which name, is the host's;
// here bytes are only moved. Where no service worker controls the page, or the browser cannot
// transfer a stream, `streamedDownload` answers null and the caller saves a Blob instead
// (page/dom.mjs downloadBlob).

import { el } from "./dom.mjs";

/** How long the service worker is waited for to register the download (ms). */
const REGISTER_WAIT_MS = 3_000;
/** While a download runs, the service worker is told so this often (ms): a browser may stop an
 * idle service worker, and with it the download. */
const ALIVE_EVERY_MS = 10_000;

/**
 * Start a streamed download saved as `name` (the host's `archive_filename`). Resolves null
 * where it cannot be streamed (no controlling service worker, no transferable streams, no
 * answer in time); else a download already started in a hidden frame:
 *   {write(ArrayBuffer), close(), fail(reason), signal, saved}
 * `write` queues bytes in order; `close` ends the file; `fail` makes the browser fail the
 * download (no file is left: the browser removes its partial one); `signal` (an AbortSignal)
 * aborts when the person cancelled the download, or the browser stopped reading it; `saved`
 * resolves true once the download has read the last byte after `close`, false when it stopped
 * early. The URL is single-use and expires (page/sw.js).
 */
export async function streamedDownload(name) {
  const worker = navigator.serviceWorker?.controller;
  if (!worker || typeof ReadableStream !== "function") return null;
  const stopped = new AbortController();
  let source = null;
  const stream = new ReadableStream({
    start(controller) {
      source = controller;
    },
    cancel() {
      stopped.abort();
    },
  });
  const channel = new MessageChannel();
  let savedAs;
  const saved = new Promise((resolve) => {
    savedAs = resolve;
  });
  const url = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), REGISTER_WAIT_MS);
    channel.port1.onmessage = (event) => {
      const data = event.data ?? {};
      if ("url" in data) {
        clearTimeout(timer);
        resolve(typeof data.url === "string" ? data.url : null);
      } else if ("done" in data) {
        if (data.done !== true) stopped.abort();
        savedAs(data.done === true);
      }
    };
    try {
      worker.postMessage({ kind: "download", name, stream }, [stream, channel.port2]);
    } catch {
      clearTimeout(timer); // streams cannot be transferred here
      resolve(null);
    }
  });
  if (url === null) {
    channel.port1.close();
    return null;
  }
  const alive = setInterval(() => worker.postMessage({ kind: "download-alive" }), ALIVE_EVERY_MS);
  saved.finally(() => {
    clearInterval(alive);
    channel.port1.close();
    setTimeout(() => frame.remove(), 1_000);
  });
  const frame = el("iframe", {
    src: url,
    hidden: true,
    title: "download",
    class: "download-frame",
  });
  document.body.appendChild(frame);
  let open = true;
  return {
    write(buffer) {
      if (open && !stopped.signal.aborted) source.enqueue(new Uint8Array(buffer));
    },
    close() {
      if (!open) return;
      open = false;
      if (!stopped.signal.aborted) source.close();
    },
    fail(reason) {
      if (!open) return;
      open = false;
      source.error(new Error(String(reason)));
    },
    signal: stopped.signal,
    saved,
  };
}
