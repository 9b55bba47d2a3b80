// The page's one Trusted Types policy (SPEC §2). Its only function turns one of the known
// same-origin script URLs — the host worker, the tabs' broker (a SharedWorker, issue 33) and
// the offline cache's service worker — into a
// TrustedScriptURL; any other URL is refused. There is no createHTML and no default policy, so
// every HTML-string sink (innerHTML, outerHTML, insertAdjacentHTML, document.write, string
// timers) throws under the page's CSP.

export const POLICY_NAME = "voicebox-worker";

export const workerUrl = new URL("worker/host.mjs", document.baseURI).href;
export const brokerUrl = new URL("worker/broker.mjs", document.baseURI).href;
export const serviceWorkerUrl = new URL("sw.js", document.baseURI).href;
const ALLOWED = new Set([workerUrl, brokerUrl, serviceWorkerUrl]);

const policy = globalThis.trustedTypes
  ? trustedTypes.createPolicy(POLICY_NAME, {
      createScriptURL(url) {
        if (ALLOWED.has(url)) return url;
        throw new TypeError(`refused script URL ${url}`);
      },
    })
  : { createScriptURL: (url) => (ALLOWED.has(url) ? url : null) };

export function trustedWorkerUrl() {
  return policy.createScriptURL(workerUrl);
}

export function trustedBrokerUrl() {
  return policy.createScriptURL(brokerUrl);
}

export function trustedServiceWorkerUrl() {
  return policy.createScriptURL(serviceWorkerUrl);
}
