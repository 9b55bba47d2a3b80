// Registers the offline cache (page/sw.js; SPEC §2) once the host is ready and the page is
// idle, so the first visit's precache never competes with the boot or the first interactions. When a newer build's service worker has
// installed (its files all cached), it is told to take over: this page's host has already
// booted from the old files, and the next load uses the new ones. A browser without service
// workers (or a refused registration) just stays online-only; nothing else depends on it.

import { trustedServiceWorkerUrl } from "./trusted-types.mjs";

/** How long the page waits, at most, for its service worker to take it over before it starts
 * the host worker anyway (ms). */
export const CLAIM_WAIT_MS = 3000;

/** Before the host worker starts (issue 29 item 12; docs/operations.md, "What the workers can
 * reach"): when this site's service worker is active but does not control this page — a hard
 * reload bypasses it — ask it to claim the page and wait for that, at most `ms`, so the host
 * worker starts under it (its scripts get the workers' CSP, other origins are refused). The
 * very first visit has no service worker yet and a browser may have none: nothing is held
 * then. Resolves "controlled", "claimed", "none" (no active service worker) or "timeout"
 * (the host starts anyway; said in the console). */
export async function controlBeforeBoot(ms = CLAIM_WAIT_MS) {
  if (!("serviceWorker" in navigator)) return "none";
  const container = navigator.serviceWorker;
  if (container.controller) return "controlled";
  const late = (value) => new Promise((resolve) => setTimeout(() => resolve(value), ms));
  const registration = await Promise.race([
    container.getRegistration("./").catch(() => null),
    late(null),
  ]);
  if (!registration?.active) return "none";
  const claimed = new Promise((resolve) =>
    container.addEventListener("controllerchange", () => resolve("claimed"), { once: true }),
  );
  registration.active.postMessage("claim");
  const outcome = await Promise.race([claimed, late("timeout")]);
  if (outcome === "timeout")
    console.warn(
      "The offline service worker did not take this page over in time; the host starts without it.",
    );
  return outcome;
}

function promote(registration) {
  const take = (worker) => {
    if (!worker) return;
    if (worker.state === "installed") worker.postMessage("skip-waiting");
    else worker.addEventListener("statechange", () => take(worker));
  };
  take(registration.waiting);
  registration.addEventListener("updatefound", () => take(registration.installing));
}

/** Register the site's service worker (scope: the site folder); resolves the registration or null. */
export async function registerServiceWorker() {
  if (!("serviceWorker" in navigator)) return null;
  await new Promise((resolve) =>
    globalThis.requestIdleCallback
      ? requestIdleCallback(resolve, { timeout: 3000 })
      : setTimeout(resolve, 500),
  );
  try {
    const registration = await navigator.serviceWorker.register(trustedServiceWorkerUrl(), {
      scope: "./",
      updateViaCache: "none",
    });
    promote(registration);
    return registration;
  } catch (err) {
    console.warn(`Offline cache unavailable: ${err.message}`);
    return null;
  }
}
