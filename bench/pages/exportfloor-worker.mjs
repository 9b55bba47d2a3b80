// Bench only (never shipped): the floor of the local export (issue 34) — every file of OPFS
// projects/<projectId>/ read once in JavaScript, hashing nothing, no Python, no host, by each
// of the platform's ways of reading many files, so that the bench keeps the best as the floor:
// - parallel-N: getFile().arrayBuffer() with N reads in flight in this worker;
// - sah-lanes-N: N nested dedicated workers (exportfloor-lane.mjs), each reading its share of
//   the files (runs of consecutive files, handed out as lanes ask) through read-only sync
//   access handles into one reused buffer;
// - sah-here-N: read-only sync access handles opened N at a time in this worker (no lane);
// - sah-paths-N: as sah-lanes-N, but each lane is given the project's folder handle and runs of
//   64 paths (not the walk's file handles) and finds each file itself, each folder's handle
//   asked once per lane and kept (issue 33: what the host's search can hand a lane);
// - getfile-lanes-N: as sah-paths-N, each lane reading with getFile().arrayBuffer(), 8 in flight;
// - hash-deliver-N: as hash-lanes-N, every byte also handed to the page (a copy per piece,
//   transferred), which streams it into a download (tools.mjs benchDeliveredFloor; issue 34);
//   deliver-N: the same hashing nothing (the platform's own limit for an export a person gets);
//   crc-deliver-N: the same with crc32 only (what a zip of stored entries must still compute)
// - hash-lanes-N: as sah-lanes-N, each file also hashed as an archive must (crc32 and sha256;
//   the hashed floor, issue 34): what reading AND the required hashing cost at the platform's best.
// {projectId, strategies} → {ok, files, bytes, figures: {strategy: ms}}. The walk of the
// folders is timed with each strategy (the export walks too); .voicebox/ is left out, as the
// export leaves it out.

async function listFiles(dir, prefix = []) {
  const out = [];
  const entries = [];
  for await (const entry of dir.values()) entries.push(entry);
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (prefix.length === 0 && entry.name === ".voicebox") continue;
    if (entry.kind === "directory") out.push(...(await listFiles(entry, [...prefix, entry.name])));
    else out.push({ parts: [...prefix, entry.name], handle: entry });
  }
  return out;
}

async function parallel(project, n) {
  const files = await listFiles(project);
  let next = 0;
  let bytes = 0;
  const one = async () => {
    while (next < files.length) {
      const f = files[next++];
      bytes += (await (await f.handle.getFile()).arrayBuffer()).byteLength;
    }
  };
  await Promise.all(Array.from({ length: n }, one));
  return { files: files.length, bytes };
}

async function sahHere(project, n) {
  const files = await listFiles(project);
  let next = 0;
  let bytes = 0;
  const one = async () => {
    while (next < files.length) {
      const f = files[next++];
      const access = await f.handle.createSyncAccessHandle({ mode: "read-only" });
      try {
        const out = new Uint8Array(access.getSize());
        access.read(out, { at: 0 });
        bytes += out.length;
      } finally {
        access.close();
      }
    }
  };
  await Promise.all(Array.from({ length: n }, one));
  return { files: files.length, bytes };
}

function startLane() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./exportfloor-lane.mjs", import.meta.url), {
      type: "module",
    });
    worker.onmessage = (event) => {
      if (event.data.kind === "ready") resolve(worker);
    };
    worker.onerror = (event) => reject(new Error(event.message || "lane failed"));
  });
}

async function lanes(project, workers, byPath = false, getFile = 0, hash = false, deliver = false) {
  const files = await listFiles(project);
  const RUN = byPath ? 64 : 8;
  let next = 0;
  let bytes = 0;
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise((resolve, reject) => {
          const give = () => {
            if (next >= files.length) {
              resolve();
              return;
            }
            const run = files.slice(next, next + RUN);
            next += RUN;
            if (byPath)
              worker.postMessage({ root: project, paths: run.map((f) => f.parts), getFile });
            else worker.postMessage({ handles: run.map((f) => f.handle), hash, deliver });
          };
          worker.onmessage = (event) => {
            if (!event.data.ok) reject(new Error(event.data.message));
            else {
              bytes += event.data.bytes;
              const chunks = event.data.chunks ?? [];
              // delivered to the page (hash-deliver-N), which streams them into a download
              if (chunks.length)
                self.postMessage(
                  { kind: "chunks", chunks },
                  chunks.map((c) => c.buffer),
                );
              give();
            }
          };
          give();
        }),
    ),
  );
  return { files: files.length, bytes };
}

self.onmessage = async (event) => {
  const { projectId, strategies } = event.data;
  try {
    const root = await navigator.storage.getDirectory();
    const project = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(projectId);
    const figures = {};
    let seen = null;
    for (const name of strategies) {
      const [kind, count] = [name.replace(/-\d+$/, ""), Number(name.split("-").at(-1))];
      let workers = [];
      const delivering = ["deliver", "crc-deliver", "hash-deliver"].includes(kind);
      if (["sah-lanes", "sah-paths", "getfile-lanes", "hash-lanes"].includes(kind) || delivering)
        workers = await Promise.all(Array.from({ length: count }, startLane));
      const started = performance.now();
      if (kind === "parallel") seen = await parallel(project, count);
      else if (kind === "sah-here") seen = await sahHere(project, count);
      else if (kind === "getfile-lanes") seen = await lanes(project, workers, true, 8);
      else if (kind === "hash-lanes") seen = await lanes(project, workers, false, 0, true);
      else if (delivering) {
        const hash = { deliver: false, "crc-deliver": "crc", "hash-deliver": true }[kind];
        seen = await lanes(project, workers, false, 0, hash, true);
      } else seen = await lanes(project, workers, kind === "sah-paths");
      figures[name] = performance.now() - started;
      for (const w of workers) w.terminate();
    }
    self.postMessage({ ok: true, ...seen, figures });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

self.postMessage({ kind: "ready" });
