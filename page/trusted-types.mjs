// The page's one Trusted Types policy (SPEC §2). Its only function turns the known
// same-origin worker URL into a TrustedScriptURL; any other URL is refused. There is no
// createHTML and no default policy, so every HTML-string sink (innerHTML, outerHTML,
// insertAdjacentHTML, document.write, string timers) throws under the page's CSP.

export const POLICY_NAME = "voicebox-worker";
const WORKER_PATH = "worker/host.mjs";

export const workerUrl = new URL(WORKER_PATH, document.baseURI).href;

const policy = globalThis.trustedTypes
  ? trustedTypes.createPolicy(POLICY_NAME, {
      createScriptURL(url) {
        if (url === workerUrl) return url;
        throw new TypeError(`refused script URL ${url}`);
      },
    })
  : { createScriptURL: (url) => (url === workerUrl ? url : null) };

export function trustedWorkerUrl() {
  return policy.createScriptURL(workerUrl);
}
