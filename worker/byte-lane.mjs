// A reader lane of the export's byte path (docs/archives.md §4; issue 18, round five): a
// dedicated worker the HOST worker starts (worker/byte-path.mjs) so that the files' reads, their
// handles' synchronous closes, the hashing and the Blobs run beside the host's own thread — on
// another core when there is one. It holds no credential and runs no Python: it is given the
// project's folder handle and runs of consecutive planned files, and answers each run with its
// Blobs (the archive's bytes for that run, in order) and each file's {size, crc32, sha256}.
// Thin: the plan comes from Python through the host; the reading is worker/byte-reader.mjs.
//
// Host → lane: {kind: "run", n, seg, root, items, wholeLimit, chunkBytes, buffers}  read one run
//                (n: the export, seg: the run's place in it; buffers: answer Uint8Arrays,
//                transferred, instead of Blobs — a streamed download, issue 34)
//              {kind: "cancel", n}   runs of export n not read yet are answered AbortError
//              {kind: "hold", h}     the host is about to change its storage: close every handle
//                                    opened ahead, open none until "release"; answered
//                                    {kind: "held", h} once no handle of this lane is open
//                                    (worker/opfs-io.mjs, "Lent handles")
//              {kind: "release"}     after that change (each hold is released once)
// Lane → host: {kind: "ready", protocol} once started (LANE_PROTOCOL: a lane of another build,
//              served by a newer service worker to an older host, is not used);
//              {kind: "run", n, seg, ok: true, blobs, out, peakHeld} or
//              {kind: "run", n, seg, ok: false, name, message}

import { installEgressGuard } from "./egress-guard.mjs";
import { ByteReader, LANE_PROTOCOL } from "./byte-reader.mjs";
import { holdHandles, releaseHandles } from "./opfs-io.mjs";

installEgressGuard({ site: new URL("../", import.meta.url) }); // starts no worker, fetches nothing

const figures = { files: 0, bytes: 0, held: 0, peakHeld: 0 };
const reader = new ByteReader(figures);

self.onmessage = (event) => {
  const data = event.data;
  if (!data || typeof data !== "object") return;
  if (data.kind === "run") {
    const { n, seg } = data;
    const blobs = [];
    reader
      .run(data.root, data.items, (blob) => blobs.push(blob), {
        wholeLimit: data.wholeLimit,
        chunkBytes: data.chunkBytes,
        owner: n,
        buffers: data.buffers === true,
      })
      .then(
        (out) =>
          self.postMessage(
            { kind: "run", n, seg, ok: true, blobs, out, peakHeld: figures.peakHeld },
            data.buffers === true ? blobs.map((bytes) => bytes.buffer) : [],
          ),
        (err) =>
          self.postMessage({
            kind: "run",
            n,
            seg,
            ok: false,
            name: String(err?.name ?? "Error"),
            message: String(err?.message ?? err),
          }),
      );
  } else if (data.kind === "cancel") reader.cancel(data.n);
  else if (data.kind === "hold") {
    Promise.resolve(holdHandles()).then(() => self.postMessage({ kind: "held", h: data.h }));
  } else if (data.kind === "release") releaseHandles();
};

self.postMessage({ kind: "ready", protocol: LANE_PROTOCOL });
