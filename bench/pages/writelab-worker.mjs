// Bench only (never shipped): one writer of the write lab (issue 34, `benchWriteLab` in
// tools.mjs). Given {base, count, lanes, how, from, step}, writes the files n = from, from+step,
// ... < count as OPFS `<base>/dNNN/fNNNNN.txt` (the upload bench's folder: one line each),
// `lanes` files in flight, each through a temporary and a move (as the host does): `how` is
// "sync" (createSyncAccessHandle: write, close) or "writable" (createWritable: write, close).
// `direct`: no temporary (the file written in place, no move). `files` (File objects from a
// folder input, optional): file n is files[n], written at its webkitRelativePath (the
// upload bench's floor). Answers {ok, files, ms}.

const line = (n) => new TextEncoder().encode(`line ${n} of the upload bench\n`);

self.onmessage = async (event) => {
  const { base, count, lanes, how, from, step, direct, files: picked } = event.data;
  const started = performance.now();
  try {
    const root = await (
      await navigator.storage.getDirectory()
    ).getDirectoryHandle(base, {
      create: true,
    });
    const folders = new Map();
    const folderOf = (d) => {
      if (!folders.has(d)) folders.set(d, root.getDirectoryHandle(d, { create: true }));
      return folders.get(d);
    };
    let next = from;
    let files = 0;
    const pickedFolder = (parts) => {
      const key = parts.join("/");
      if (!folders.has(key))
        folders.set(
          key,
          parts.length
            ? pickedFolder(parts.slice(0, -1)).then((d) =>
                d.getDirectoryHandle(parts.at(-1), { create: true }),
              )
            : Promise.resolve(root),
        );
      return folders.get(key);
    };
    const one = async (n) => {
      let dir;
      let name;
      let bytes;
      if (picked) {
        const parts = picked[n].webkitRelativePath.split("/");
        name = parts.pop();
        dir = await pickedFolder(parts);
        bytes = new Uint8Array(await picked[n].arrayBuffer());
      } else {
        dir = await folderOf(`d${String(Math.floor(n / 100)).padStart(3, "0")}`);
        name = `f${String(n).padStart(5, "0")}.txt`;
        bytes = line(n);
      }
      const handle = await dir.getFileHandle(direct ? name : `.tmp-${name}`, { create: true });
      if (how === "sync") {
        const access = await handle.createSyncAccessHandle();
        try {
          access.write(bytes, { at: 0 });
        } finally {
          access.close();
        }
      } else {
        const w = await handle.createWritable();
        await w.write(bytes);
        await w.close();
      }
      if (!direct) await handle.move(name);
      files += 1;
    };
    const lane = async () => {
      while (next < count) {
        const n = next;
        next += step;
        await one(n);
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    self.postMessage({ ok: true, files, ms: performance.now() - started });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};
self.postMessage({ kind: "ready" });
