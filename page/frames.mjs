// The two sandboxed frames (the plugin sandbox, SPEC §7–§8; the Python runtime, issue 32): each
// an opaque origin with its own CSP (connect-src 'none'), made here one way.
//
// Offline (docs/python.md, "Offline"): Chromium never lets a service worker answer a frame
// sandboxed by its attribute, so while the service worker controls this page the frame is made
// without the attribute and the worker answers it from its cache with the header CSP
// `sandbox allow-scripts` (page/sw.js, SANDBOXED_FRAMES) — the same opaque origin. Before the
// frame gets anything the page checks that it is opaque (its document is not ours to read); if
// not (a worker of another build), it is removed and made again with the attribute.

import { el } from "./dom.mjs";

/** The loaded frame of `src`, checked opaque; throws when even the attribute gives none. */
export async function opaqueFrame(src, title) {
  let frame = await makeFrame(src, title, !navigator.serviceWorker?.controller);
  if (!isOpaque(frame)) {
    frame.remove();
    frame = await makeFrame(src, title, true);
  }
  if (!isOpaque(frame)) {
    frame.remove();
    throw new Error(`the frame ${src} did not get an opaque origin`);
  }
  return frame;
}

async function makeFrame(src, title, sandboxAttribute) {
  const frame = el("iframe", {
    src,
    title,
    class: "sandbox-frame",
    "aria-hidden": "true",
    tabindex: "-1",
  });
  if (sandboxAttribute) frame.setAttribute("sandbox", "allow-scripts");
  const loaded = new Promise((resolve) => frame.addEventListener("load", resolve, { once: true }));
  document.body.appendChild(frame);
  await loaded;
  return frame;
}

/** An opaque-origin (or any cross-origin) frame's document is not readable from this page. */
const isOpaque = (frame) => frame.contentDocument === null;
