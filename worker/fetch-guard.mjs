// Every fetch the host worker makes goes through here (SPEC §2):
// - a URL outside this site's origin is refused before any request leaves (no CDN, ever —
//   Pyodide's defaults mention one; this makes sure it is never used);
// - response bodies are counted as they stream, so boot can show bytes so far.
// No business rule lives here.

export function installFetchGuard(siteOrigin, onBytes) {
  const realFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input, init) => {
    const href = typeof input === "string" || input instanceof URL ? String(input) : input.url;
    const url = new URL(href, globalThis.location.href);
    if (url.origin !== siteOrigin) {
      throw new TypeError(`refused to fetch ${url.origin}: the host only loads files of this site`);
    }
    const response = await realFetch(input, init);
    if (!response.body || !onBytes) return response;
    const counter = new TransformStream({
      transform(chunk, controller) {
        onBytes(url, chunk.byteLength);
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(counter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return realFetch;
}
