// Registers the offline cache (page/sw.js; SPEC §2) once the host is ready and the page is
// idle, so the first visit's precache never competes with the boot or the first interactions. When a newer build's service worker has
// installed (its files all cached), it is told to take over: this page's host has already
// booted from the old files, and the next load uses the new ones. A browser without service
// workers (or a refused registration) just stays online-only; nothing else depends on it.

import { trustedServiceWorkerUrl } from "./trusted-types.mjs";

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
    globalThis.requestIdleCallback ? requestIdleCallback(resolve, { timeout: 3000 }) : setTimeout(resolve, 500),
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
