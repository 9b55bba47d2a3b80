// Bench only (never shipped): helpers the benchmark calls from Python through page.evaluate.
// - benchPopulate(name, projectId): a worker writes bench-data/<name> into OPFS
//   projects/<projectId>/ (sync access handles), resolves {files, bytes, ms}.
// - benchAudit(count): a worker boots Python exactly as the host does (worker/boot.mjs) and
//   times audit appends (core AuditLog over worker/idb.mjs) against raw IndexedDB puts with
//   the same durability; resolves the figures.
// - benchExportFloor(projectId, strategies): every file of the project read from OPFS by each of
//   the platform's ways (the floors of the local export and of search in files).

function runWorker(script, message, timeoutMs = 0) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { type: "module", name: script });
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            worker.terminate();
            reject(new Error(`${script}: no answer in ${timeoutMs / 1000} s`));
          }, timeoutMs)
        : null;
    worker.onmessage = (event) => {
      const data = event.data;
      if (data.kind === "ready") {
        worker.postMessage(message);
        return;
      }
      clearTimeout(timer);
      worker.terminate();
      if (data.ok) resolve(data);
      else reject(new Error(data.message));
    };
    worker.onerror = (event) => {
      clearTimeout(timer);
      reject(new Error(event.message || `${script} failed`));
    };
  });
}

// A populate worker now and then never answers (seen 3 times in 8 runs of the projects
// section on 2026-12-03, always while writing a 10,000-file project): it is ended after
// POPULATE_MS and the project written again by a new one, at most POPULATE_TRIES times
// (each write truncates its file first, so writing again gives the same project).
const POPULATE_MS = 120_000;
const POPULATE_TRIES = 3;

globalThis.benchPopulate = async (name, projectId) => {
  for (let tries = 1; ; tries++) {
    try {
      return {
        ...(await runWorker("./populate-worker.mjs", { name, projectId }, POPULATE_MS)),
        tries,
      };
    } catch (err) {
      if (tries >= POPULATE_TRIES) throw err;
      console.warn(`benchPopulate ${name}: ${err.message}; writing it again`);
    }
  }
};

globalThis.benchAudit = (count) => runWorker("./audit-worker.mjs", { count });

// benchLab(code): run a Python snippet in a long-lived lab worker booted like the host
// (lab-worker.mjs); resolves the snippet's value (text).
let lab = null;
const labWaiting = new Map();
let labNext = 0;
globalThis.benchLab = (code) => {
  if (!lab) {
    lab = new Promise((resolve, reject) => {
      const worker = new Worker("./lab-worker.mjs", { type: "module", name: "lab-worker.mjs" });
      worker.onmessage = (event) => {
        const data = event.data;
        if (data.kind === "ready") resolve(worker);
        else if (data.kind === "fatal") reject(new Error(data.message));
        else {
          const waiter = labWaiting.get(data.id);
          labWaiting.delete(data.id);
          if (data.ok) waiter.resolve(data.value);
          else waiter.reject(new Error(data.message));
        }
      };
    });
  }
  return lab.then(
    (worker) =>
      new Promise((resolve, reject) => {
        const id = ++labNext;
        labWaiting.set(id, { resolve, reject });
        worker.postMessage({ id, code });
      }),
  );
};

// benchReadLab(projectId, cases): readlab-worker.mjs times the export's pieces on the files of
// an OPFS project; the page is the far end of the "post" cases (it keeps the chunks and makes
// one Blob, as page/host-client.mjs does) and acks with the Blob's time.
globalThis.benchReadLab = (projectId, cases) => {
  const channel = new MessageChannel();
  const chunks = [];
  channel.port1.onmessage = (event) => {
    if (event.data.done) {
      const start = performance.now();
      const blob = new Blob(chunks.splice(0));
      channel.port1.postMessage({ blob_ms: performance.now() - start, size: blob.size });
    } else if (event.data.data) chunks.push(event.data.data);
  };
  return new Promise((resolve, reject) => {
    const worker = new Worker("./readlab-worker.mjs", {
      type: "module",
      name: "readlab-worker.mjs",
    });
    worker.onmessage = (event) => {
      const data = event.data;
      if (data.kind === "ready") {
        worker.postMessage({ projectId, cases, port: channel.port2 }, [channel.port2]);
        return;
      }
      worker.terminate();
      if (data.ok) resolve(data.figures);
      else reject(new Error(data.message));
    };
    worker.onerror = (event) => reject(new Error(event.message || "readlab failed"));
  });
};

// benchExportFloor(projectId, strategies): the local export's floor (issue 34) and search's
// (issue 33, bench/search_bench.py): every file of
// the project read from OPFS in JavaScript by each strategy (exportfloor-worker.mjs), hashing
// nothing; resolves {files, bytes, figures: {strategy: ms}}.
globalThis.benchExportFloor = (projectId, strategies) =>
  runWorker("./exportfloor-worker.mjs", { projectId, strategies }, POPULATE_MS);

// benchDeliveredFloor(projectId, lanes, kind): the delivered floors (issue 34) — the hashed floor's
// reads and hashing in `lanes` lanes (exportfloor-worker.mjs `kind`-N: hash-deliver crc32 and
// sha256, crc-deliver crc32 only, deliver nothing hashed), every byte handed
// to this page and streamed into a download through the site's service worker
// (../download.mjs), as the export's streamed download is. Resolves {ok, bytes, ms} once the
// download has read the last byte (the caller waits for the file on disk).
globalThis.benchDeliveredFloor = async (projectId, lanes, kind = "hash-deliver") => {
  const { streamedDownload } = await import("../download.mjs");
  const start = performance.now();
  const saver = await streamedDownload("floor.bin");
  if (!saver) return { ok: false, message: "no streamed download (no service worker)" };
  const worker = new Worker("./exportfloor-worker.mjs", { type: "module" });
  const done = await new Promise((resolve) => {
    worker.onmessage = (event) => {
      const data = event.data;
      if (data.kind === "ready")
        worker.postMessage({ projectId, strategies: [`${kind}-${lanes}`] });
      else if (data.kind === "chunks") for (const c of data.chunks) saver.write(c.buffer);
      else resolve(data);
    };
    worker.onerror = (event) => resolve({ ok: false, message: event.message });
  });
  worker.terminate();
  if (!done.ok) {
    saver.fail(done.message);
    return done;
  }
  saver.close();
  const saved = await saver.saved;
  return { ok: saved, bytes: done.bytes, ms: performance.now() - start };
};

// benchHashCosts(bytes): what each hash the export computes costs per MB in a lane like the
// export's (exportfloor-lane.mjs hashCosts): {name: MB/s}.
globalThis.benchHashCosts = (bytes) =>
  new Promise((resolve, reject) => {
    const worker = new Worker("./exportfloor-lane.mjs", { type: "module" });
    worker.onmessage = (event) => {
      if (event.data.kind === "ready") worker.postMessage({ cost: bytes });
      else {
        worker.terminate();
        if (event.data.ok) resolve(event.data.cost);
        else reject(new Error(event.data.message));
      }
    };
    worker.onerror = (event) => reject(new Error(event.message || "hash costs failed"));
  });

// benchWsFloor(args): the remote export's floor (issue 34): a bare WebSocket reader in a worker
// (wsfloor-worker.mjs) pulls one project.export from the environment server; with args.post
// its chunks come here and are made into one Blob, as the page does with an export. Resolves
// {ms, bytes, messages, blob_ms}; ms ends when the page holds the Blob.
globalThis.benchWsFloor = (args) =>
  new Promise((resolve, reject) => {
    const worker = new Worker("./wsfloor-worker.mjs", {
      type: "module",
      name: "wsfloor-worker.mjs",
    });
    const chunks = [];
    const start = performance.now();
    worker.onmessage = (event) => {
      const data = event.data;
      if (data.kind === "ready") worker.postMessage(args);
      else if (data.kind === "chunk") chunks.push(data.data);
      else {
        worker.terminate();
        if (!data.ok) reject(new Error(data.message));
        else {
          const blob = new Blob(chunks.splice(0));
          resolve({ ...data, page_ms: performance.now() - start, blob_size: blob.size });
        }
      }
    };
    worker.onerror = (event) => reject(new Error(event.message || "wsfloor failed"));
  });

// benchWriteLab(base, count, workers, lanes, how): the write lab (issue 34): `count` one-line
// files written into OPFS `<base>/` by `workers` dedicated workers (writelab-worker.mjs), each
// taking every `workers`-th file, `lanes` files in flight in each, `how` "sync" or "writable";
// workers = 0 writes from this page with createWritable. Resolves {files, ms} (from the first
// worker's start to the last one's answer; the workers are made before the clock starts).
// `direct`: each file written in place (no temporary and move: what a bare page does).
// `files`: File objects (a folder input's) to write instead of generated lines (workers > 0).
globalThis.benchWriteLab = async (base, count, workers, lanes, how, direct = false, files) => {
  if (workers === 0) {
    const start = performance.now();
    const root = await (
      await navigator.storage.getDirectory()
    ).getDirectoryHandle(base, {
      create: true,
    });
    const folders = new Map();
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const n = next++;
        const d = `d${String(Math.floor(n / 100)).padStart(3, "0")}`;
        if (!folders.has(d)) folders.set(d, root.getDirectoryHandle(d, { create: true }));
        const dir = await folders.get(d);
        const name = `f${String(n).padStart(5, "0")}.txt`;
        const handle = await dir.getFileHandle(direct ? name : `.tmp-${name}`, { create: true });
        const w = await handle.createWritable();
        await w.write(new TextEncoder().encode(`line ${n} of the upload bench\n`));
        await w.close();
        if (!direct) await handle.move(name);
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return { files: count, ms: performance.now() - start };
  }
  const pool = await Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise((resolve) => {
          const w = new Worker("./writelab-worker.mjs", { type: "module" });
          w.onmessage = (e) => e.data.kind === "ready" && resolve(w);
        }),
    ),
  );
  const start = performance.now();
  const answers = await Promise.all(
    pool.map(
      (w, i) =>
        new Promise((resolve, reject) => {
          w.onmessage = (e) => (e.data.ok ? resolve(e.data) : reject(new Error(e.data.message)));
          w.postMessage({ base, count, lanes, how, from: i, step: workers, direct, files });
        }),
    ),
  );
  const ms = performance.now() - start;
  pool.forEach((w) => w.terminate());
  return { files: answers.reduce((n, a) => n + a.files, 0), ms };
};
