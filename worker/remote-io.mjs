// What the host worker's remote link (browser_host/remote.py) measures in JavaScript, because
// reading it from Python would convert it first (issue 29 items 6 and 15). Measures only: every
// bound and every refusal is Python's (core/custody/remote.py).
//
// - messageSize / isBinary: a WebSocket message's size — UTF-16 units of a text, bytes of a
//   binary one — read without copying it into the Wasm heap (a JS string is converted to a
//   Python str the moment Python touches it);
// - refusedByPolicy: whether this worker's own Content-Security-Policy kept a connection to an
//   origin in the browser (a `securitypolicyviolation` event, connect-src): the request never
//   left, and the person is told how to serve the site rather than "could not be reached".

/** connect-src violations seen in this worker, newest last (a few: the last claim's), each
 * {seq, origin}; `total` counts every one ever seen. */
const violations = [];
let total = 0;
const waiting = new Set();
const KEPT = 32;

function originOf(text) {
  try {
    return new URL(text).origin;
  } catch {
    return "";
  }
}

self.addEventListener("securitypolicyviolation", (event) => {
  const directive = String(event.effectiveDirective || event.violatedDirective || "");
  if (!directive.startsWith("connect-src")) return;
  total += 1;
  violations.push({ seq: total, origin: originOf(event.blockedURI) });
  if (violations.length > KEPT) violations.shift();
  for (const wake of waiting) wake();
});

/** The size of a MessageEvent's data: UTF-16 units of a text, bytes of a binary message. */
export function messageSize(event) {
  const data = event.data;
  if (typeof data === "string") return data.length;
  return data?.byteLength ?? data?.size ?? 0;
}

/** True when a MessageEvent carries a binary message. */
export function isBinary(event) {
  return typeof event.data !== "string";
}

/** How many connect-src violations this worker has seen so far (a mark to look from). */
export function violationMark() {
  return total;
}

/**
 * Resolves true when a connect-src violation for one of `origins` (an array of origins) is seen
 * after `mark` (violationMark() taken before the request), waiting at most `ms` for it: the
 * browser queues the event as a task of its own, which may come after the request's rejection.
 */
export function refusedByPolicy(origins, mark, ms) {
  const wanted = new Set(Array.from(origins, String));
  const seen = () => violations.some((v) => v.seq > mark && wanted.has(v.origin));
  if (seen()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value) => {
      waiting.delete(wake);
      clearTimeout(timer);
      resolve(value);
    };
    const wake = () => {
      if (seen()) done(true);
    };
    const timer = setTimeout(() => done(seen()), ms);
    waiting.add(wake);
  });
}
