// Bench only (never shipped): the floor of the local export (issue 34) — every file of OPFS
// projects/<projectId>/ read once in JavaScript, hashing nothing, no Python, no host, by each
// of the platform's ways of reading many files, so that the bench keeps the best as the floor:
// - parallel-N: getFile().arrayBuffer() with N reads in flight in this worker;
// - sah-lanes-N: N nested dedicated workers (exportfloor-lane.mjs), each reading its share of
//   the files (runs of consecutive files, handed out as lanes ask) through read-only sync
//   access handles into one reused buffer;
// - hash-lanes-N: the same, each file also hashed as an archive must (crc32 and sha256; the
//   hashed floor, issue 34): what reading AND the required hashing cost at the platform's best.
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

async function lanes(project, workers, hash) {
  const files = await listFiles(project);
  const RUN = 8;
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
            const run = files.slice(next, next + RUN).map((f) => f.handle);
            next += RUN;
            worker.postMessage({ handles: run, hash });
          };
          worker.onmessage = (event) => {
            if (!event.data.ok) reject(new Error(event.data.message));
            else {
              bytes += event.data.bytes;
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
      if (kind === "sah-lanes" || kind === "hash-lanes")
        workers = await Promise.all(Array.from({ length: count }, startLane));
      const started = performance.now();
      seen =
        kind === "parallel"
          ? await parallel(project, count)
          : await lanes(project, workers, kind === "hash-lanes");
      figures[name] = performance.now() - started;
      for (const w of workers) w.terminate();
    }
    self.postMessage({ ok: true, ...seen, figures });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

self.postMessage({ kind: "ready" });
