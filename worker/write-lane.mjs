// A writer of the batch writes (issue 34, stop 41): a dedicated worker the HOST worker starts
// (worker/opfs-io.mjs, "Writers") so that many small files' sync-handle writes run beside the
// host's own thread. It holds no credential and runs no Python: it is given the project's
// folder handle, a shard of the batch's rows ([folder, name, tmp, size], planned by Python) and
// their bytes, and answers what `writeRows` did. Thin: no rule lives here.
//
// Host → writer: {id, root, rows, bytes, lanes}
// Writer → host: {kind: "ready", protocol} once started; {id, answer: {done, failure}}

import { installEgressGuard } from "./egress-guard.mjs";
import { WRITER_PROTOCOL, writeRows } from "./opfs-io.mjs";

installEgressGuard({ site: new URL("../", import.meta.url) }); // starts no worker, fetches nothing

self.onmessage = async (event) => {
  const { id, root, rows, bytes, lanes } = event.data ?? {};
  let answer;
  try {
    answer = await writeRows(root, rows, bytes, lanes);
  } catch (err) {
    answer = {
      done: null,
      failure: {
        index: 0,
        step: "write",
        name: String(err?.name ?? "Error"),
        message: String(err?.message ?? err),
        fits: null,
      },
    };
  }
  self.postMessage({ id, answer });
};

self.postMessage({ kind: "ready", protocol: WRITER_PROTOCOL });
