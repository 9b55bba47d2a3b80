// Every fetch the host worker makes goes through here (SPEC §2):
// - a URL outside this site's origin is refused before any request leaves (no CDN, ever —
//   Pyodide's defaults mention one; this makes sure it is never used);
// - response bodies are counted as they stream, so boot can show bytes so far.
// No business rule lives here.
//
// The caller gets the browser's own Response, never a re-wrapped copy: a Response rebuilt
// from a stream has no URL, and Chromium then cannot reuse its compiled code for
// pyodide.asm.wasm (its code cache is keyed by the response's URL). Bytes are counted on a
// clone, read alongside.

async function count(response, url, onBytes) {
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onBytes(url, value.byteLength);
  }
}

export function installFetchGuard(siteOrigin, onBytes) {
  const realFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input, init) => {
    const href = typeof input === "string" || input instanceof URL ? String(input) : input.url;
    const url = new URL(href, globalThis.location.href);
    if (url.origin !== siteOrigin) {
      throw new TypeError(`refused to fetch ${url.origin}: the host only loads files of this site`);
    }
    const response = await realFetch(input, init);
    if (response.body && onBytes) count(response.clone(), url, onBytes).catch(() => {});
    return response;
  };
  return realFetch;
}
