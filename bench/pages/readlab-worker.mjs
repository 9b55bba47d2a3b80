// Bench only (never shipped): where an export's time goes in the browser, piece by piece, on
// the files of one OPFS project (projects/<projectId>/). {projectId, cases} → {ok, figures}:
// per case its ms and MB/s over the project's bytes. Cases:
// - handles: getFileHandle of every file (folders asked once);
// - blob: getFile().arrayBuffer() per file, in turn; blob-ahead: the next file read meanwhile;
// - slice: getFile() then slice(…, 8 MiB).arrayBuffer() pieces;
// - stream: getFile().stream() read to the end;
// - sah / sah-ro: createSyncAccessHandle() (default / {mode: "read-only"}) per file, read into
//   one reused 8 MiB buffer, closed; sah-ro-ahead: the next file's handle opened meanwhile;
// - sha-subtle / sha-wasm / crc-wasm / crc-table: hashing 8 MiB buffers of the project's bytes;
// - post: transfer the project's bytes to the page in 8 MiB messages (the page acks the last);
// - x-STEP[-N] (round four): read-only sync access handles opened N (default 8) ahead, each file
//   read into the reused buffer and closed, then STEP, each timed apart (wait, read, close,
//   step): close (nothing), blob (a Blob per file), fresh-blob (read into a fresh ArrayBuffer of
//   the file's size, a Blob of it), blob8 (copied into an 8 MiB staging buffer, a Blob per
//   buffer-full), spool (written into one OPFS file through a read-write handle, its File at the
//   end), digest (WebCrypto sha256, awaited); x-snap-N reads getFile().arrayBuffer() N ahead.

import { createCRC32, createSHA256 } from "../vendor/hash-wasm.mjs";
import { makePipe } from "./readlab-pipe.mjs";

const MiB = 1 << 20;

async function listFiles(dir, prefix = []) {
  const out = [];
  for await (const [name, handle] of dir.entries()) {
    if (handle.kind === "directory") {
      if (prefix.length === 0 && name === ".voicebox") continue;
      out.push(...(await listFiles(handle, [...prefix, name])));
    } else out.push({ parts: [...prefix, name], handle });
  }
  return out;
}

async function handlesOf(root, paths) {
  const folders = new Map([["", Promise.resolve(root)]]);
  const folderOf = (parts) => {
    const key = parts.join("/");
    if (!folders.has(key))
      folders.set(
        key,
        folderOf(parts.slice(0, -1)).then((d) => d.getDirectoryHandle(parts.at(-1))),
      );
    return folders.get(key);
  };
  return Promise.all(
    paths.map(async (parts) => (await folderOf(parts.slice(0, -1))).getFileHandle(parts.at(-1))),
  );
}

const TABLE = (() => {
  const t = new Uint32Array(256 * 8);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  for (let i = 0; i < 256; i++)
    for (let s = 1; s < 8; s++)
      t[s * 256 + i] = (t[(s - 1) * 256 + i] >>> 8) ^ t[t[(s - 1) * 256 + i] & 0xff];
  return t;
})();

function crcTable(bytes, crc = 0) {
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  for (; i + 8 <= n; i += 8) {
    const a = (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)) ^ c;
    c =
      TABLE[7 * 256 + (a & 0xff)] ^
      TABLE[6 * 256 + ((a >>> 8) & 0xff)] ^
      TABLE[5 * 256 + ((a >>> 16) & 0xff)] ^
      TABLE[4 * 256 + (a >>> 24)] ^
      TABLE[3 * 256 + bytes[i + 4]] ^
      TABLE[2 * 256 + bytes[i + 5]] ^
      TABLE[256 + bytes[i + 6]] ^
      TABLE[bytes[i + 7]];
  }
  for (; i < n; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

async function timed(fn) {
  const start = performance.now();
  const extra = await fn();
  return { ms: performance.now() - start, ...(extra || {}) };
}

self.onmessage = async (event) => {
  const { projectId, cases, port } = event.data;
  try {
    const root = await navigator.storage.getDirectory();
    const project = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(projectId);
    const listed = await listFiles(project);
    listed.sort((a, b) => (a.parts.join("/") < b.parts.join("/") ? -1 : 1));
    const paths = listed.map((f) => f.parts);
    let files = await handlesOf(project, paths);
    const sizes = await Promise.all(files.map(async (h) => (await h.getFile()).size));
    const total = sizes.reduce((a, b) => a + b, 0);
    const buffer = new Uint8Array(8 * MiB);
    const figures = { files: files.length, bytes: total };
    let sample = null;
    for (const name of cases) {
      let r;
      if (name === "handles")
        r = await timed(async () => {
          files = await handlesOf(project, paths);
        });
      else if (name === "blob")
        r = await timed(async () => {
          for (const h of files) await (await h.getFile()).arrayBuffer();
        });
      else if (name === "blob-ahead")
        r = await timed(async () => {
          let next = files[0].getFile().then((f) => f.arrayBuffer());
          for (let i = 0; i < files.length; i++) {
            await next;
            next =
              i + 1 < files.length ? files[i + 1].getFile().then((f) => f.arrayBuffer()) : null;
          }
        });
      else if (name === "blob-all4")
        r = await timed(async () => {
          let i = 0;
          const lane = async () => {
            while (i < files.length) {
              const h = files[i++];
              await (await h.getFile()).arrayBuffer();
            }
          };
          await Promise.all([lane(), lane(), lane(), lane()]);
        });
      else if (name === "slice")
        r = await timed(async () => {
          for (const h of files) {
            const f = await h.getFile();
            for (let at = 0; at < f.size; at += 8 * MiB)
              await f.slice(at, at + 8 * MiB).arrayBuffer();
          }
        });
      else if (name === "stream")
        r = await timed(async () => {
          for (const h of files) {
            const reader = (await h.getFile()).stream().getReader();
            while (!(await reader.read()).done);
          }
        });
      else if (name === "sah" || name === "sah-ro") {
        const opts = name === "sah-ro" ? { mode: "read-only" } : undefined;
        let open = 0;
        let read = 0;
        r = await timed(async () => {
          for (const h of files) {
            const t0 = performance.now();
            const a = await h.createSyncAccessHandle(opts);
            const t1 = performance.now();
            const size = a.getSize();
            for (let at = 0; at < size;)
              at += a.read(buffer.subarray(0, Math.min(buffer.length, size - at)), { at });
            a.close();
            open += t1 - t0;
            read += performance.now() - t1;
          }
        });
        r.open_ms = open;
        r.read_ms = read;
      } else if (name === "sah-ro-ahead" || name === "sah-ro-all") {
        const ahead = name === "sah-ro-all" ? files.length : 4;
        r = await timed(async () => {
          const opened = [];
          const openAt = (i) => {
            if (i < files.length) {
              const p = files[i].createSyncAccessHandle({ mode: "read-only" });
              p.catch(() => {});
              opened[i] = p;
            }
          };
          for (let i = 0; i < ahead; i++) openAt(i);
          for (let i = 0; i < files.length; i++) {
            const a = await opened[i];
            opened[i] = null;
            openAt(i + ahead);
            const size = a.getSize();
            for (let at = 0; at < size;)
              at += a.read(buffer.subarray(0, Math.min(buffer.length, size - at)), { at });
            a.close();
          }
        });
      } else if (name === "y-full" || name.startsWith("y-lanes-")) {
        // round five: the whole reading pipeline (readlab-pipe.mjs) on segments of consecutive
        // files of up to 8 MiB, here (y-full) or in N nested reader lanes (y-lanes-N), each lane
        // given up to 2 segments at a time; the Blobs posted to the page in order
        const segs = [];
        for (let i = 0; i < paths.length;) {
          let bytes = 0;
          const seg = [];
          while (i < paths.length && (seg.length === 0 || bytes + sizes[i] <= 8 * MiB)) {
            bytes += sizes[i];
            seg.push(paths[i]);
            i++;
          }
          segs.push(seg);
        }
        const lanesN = name === "y-full" ? 0 : Number(name.slice(8));
        const parts = [];
        const got = new Map();
        let nextOut = 0;
        let finish;
        const finished = new Promise((resolve) => {
          finish = resolve;
        });
        const landed = (seg, blobs) => {
          got.set(seg, blobs);
          while (got.has(nextOut)) {
            for (const b of got.get(nextOut)) {
              parts.push(b);
              port.postMessage({ chunk: b });
            }
            got.delete(nextOut);
            nextOut++;
          }
          if (nextOut === segs.length) finish();
        };
        let spawn = 0;
        let lanes = [];
        if (lanesN) {
          const t0 = performance.now();
          lanes = await Promise.all(
            Array.from(
              { length: lanesN },
              () =>
                new Promise((resolve, reject) => {
                  const w = new Worker("./readlab-lane.mjs", { type: "module" });
                  w.onmessage = (e) => {
                    if (e.data.kind === "ready") {
                      w.postMessage({ root: project });
                      resolve(w);
                    }
                  };
                  w.onerror = (e) => reject(new Error(e.message || "lane failed"));
                }),
            ),
          );
          spawn = performance.now() - t0;
        }
        let times = null;
        r = await timed(async () => {
          if (!lanesN) {
            const pipe = makePipe(project, (seg, blobs) => landed(seg, blobs));
            segs.forEach((seg, i) => pipe.push(seg, i));
            await finished;
            times = pipe.t;
          } else {
            let given = 0;
            const give = (lane) => {
              if (given < segs.length) {
                lane.postMessage({ seg: given, files: segs[given] });
                given++;
              }
            };
            for (const lane of lanes) {
              lane.onmessage = (e) => {
                landed(e.data.seg, e.data.blobs);
                give(lane);
              };
              give(lane);
              give(lane);
            }
            await finished;
          }
          const b = new Blob(parts);
          port.postMessage({ blob: b });
        });
        if (lanesN) {
          const all = await Promise.all(
            lanes.map(
              (w) =>
                new Promise((resolve) => {
                  w.onmessage = (e) => resolve(e.data.times);
                  w.postMessage({ times: true });
                }),
            ),
          );
          times = {};
          all.forEach((one, i) => {
            for (const k in one) times[`${k}${i}`] = one[k];
          });
          for (const w of lanes) w.terminate();
        }
        for (const k in times) r[k + "_ms"] = Math.round(times[k]);
        r.spawn_ms = Math.round(spawn);
        r.segments = segs.length;
      } else if (name.startsWith("x-")) {
        // x-close / x-blob / x-fresh-blob / x-spool / x-digest: sah-ro-ahead (8) with one more step per file, its ms apart
        const [step, aheadText] = name.slice(2).split("-");
        const AHEAD = Number(aheadText ?? 8);
        const t = { wait: 0, read: 0, close: 0, step: 0 };
        let spool = null;
        let spoolAt = 0;
        const stage = new Uint8Array(8 * MiB);
        let staged = 0;
        const parts = [];
        if (step === "spool") {
          const h = await project.getFileHandle("spool.tmp", { create: true });
          spool = await h.createSyncAccessHandle();
          spool.truncate(0);
        }
        r = await timed(async () => {
          const opened = [];
          const snap = step === "snap";
          const openAt = (i) => {
            if (i < files.length) {
              const p = snap
                ? files[i].getFile().then((f) => f.arrayBuffer())
                : files[i].createSyncAccessHandle({ mode: "read-only" });
              p.catch(() => {});
              opened[i] = p;
            }
          };
          for (let i = 0; i < AHEAD; i++) openAt(i);
          for (let i = 0; i < files.length; i++) {
            let t0 = performance.now();
            const a = await opened[i];
            opened[i] = null;
            openAt(i + AHEAD);
            if (snap) {
              t.wait += performance.now() - t0;
              t0 = performance.now();
              buffer.set(new Uint8Array(a));
              t.read += performance.now() - t0;
              continue;
            }
            t.wait += performance.now() - t0;
            t0 = performance.now();
            const size = a.getSize();
            const view = step === "fresh-blob" ? new Uint8Array(size) : buffer.subarray(0, size);
            for (let at = 0; at < size;) at += a.read(view.subarray(at), { at });
            t.read += performance.now() - t0;
            t0 = performance.now();
            a.close();
            t.close += performance.now() - t0;
            t0 = performance.now();
            if (step === "blob" || step === "fresh-blob") parts.push(new Blob([view]));
            else if (step === "blob8") {
              for (let at = 0; at < size;) {
                const n = Math.min(size - at, stage.length - staged);
                stage.set(view.subarray(at, at + n), staged);
                staged += n;
                at += n;
                if (staged === stage.length) {
                  parts.push(new Blob([stage]));
                  staged = 0;
                }
              }
            } else if (step === "spool") {
              spoolAt += spool.write(view, { at: spoolAt });
            } else if (step === "digest") await crypto.subtle.digest("SHA-256", view);
            t.step += performance.now() - t0;
          }
          if (spool) {
            spool.flush();
            spool.close();
            const f = await (await project.getFileHandle("spool.tmp")).getFile();
            parts.push(f);
          }
          if (parts.length) {
            const b = new Blob(parts);
            port.postMessage({ blob: b });
          }
        });
        for (const k in t) r[k + "_ms"] = Math.round(t[k]);
        if (spool) await project.removeEntry("spool.tmp");
      } else if (name.startsWith("sha-") || name.startsWith("crc-")) {
        sample ??= new Uint8Array(
          await (await files[files.length - 1].getFile()).slice(0, 8 * MiB).arrayBuffer(),
        );
        const reps = Math.ceil(total / sample.length);
        const sha = await createSHA256();
        const crc = await createCRC32();
        r = await timed(async () => {
          if (name === "sha-subtle")
            for (let i = 0; i < reps; i++) await crypto.subtle.digest("SHA-256", sample);
          else if (name === "sha-wasm") {
            sha.init();
            for (let i = 0; i < reps; i++) sha.update(sample);
            sha.digest("hex");
          } else if (name === "crc-wasm") {
            crc.init();
            for (let i = 0; i < reps; i++) crc.update(sample);
            crc.digest("hex");
          } else if (name === "crc-table") {
            let c = 0;
            for (let i = 0; i < reps; i++) c = crcTable(sample, c);
          }
        });
        r.bytes = reps * sample.length;
      } else if (name === "post" || name === "post1") {
        const piece = name === "post" ? 8 * MiB : MiB;
        r = await timed(async () => {
          const acked = new Promise((resolve) => {
            port.onmessage = (e) => resolve(e.data);
          });
          let left = total;
          while (left > 0) {
            const n = Math.min(piece, left);
            const b = new Uint8Array(n);
            port.postMessage({ data: b.buffer }, [b.buffer]);
            left -= n;
          }
          port.postMessage({ done: true });
          return { page: await acked };
        });
      } else continue;
      const bytes = r.bytes ?? total;
      figures[name] = { ...r, ms: Math.round(r.ms), mb_per_s: Math.round(bytes / 1e3 / r.ms) };
    }
    self.postMessage({ ok: true, figures });
  } catch (err) {
    self.postMessage({ ok: false, message: `${err?.name}: ${err?.message ?? err}` });
  }
};

self.postMessage({ kind: "ready" });
