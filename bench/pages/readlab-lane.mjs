// Bench only (never shipped): one reader lane of the `y-lanes-N` cases of readlab-worker.mjs
// (round five), a nested worker running readlab-pipe.mjs: {root} once, then {seg, files} per
// segment, answered {seg, blobs, count}; {times} answers the ms of each step so far.

import { makePipe } from "./readlab-pipe.mjs";

let pipe = null;
self.onmessage = (event) => {
  const d = event.data;
  if (d.root) {
    pipe = makePipe(d.root, (seg, blobs, count) => self.postMessage({ seg, blobs, count }));
    return;
  }
  if (d.times) {
    self.postMessage({ times: { ...pipe.t } });
    for (const k in pipe.t) pipe.t[k] = 0;
    return;
  }
  pipe.push(d.files, d.seg);
};

self.postMessage({ kind: "ready" });
