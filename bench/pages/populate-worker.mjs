// Bench only (never shipped): writes a generated project (bench-data/<name>.bin + .json, see
// bench/site.py) into OPFS projects/<projectId>/, one sync access handle per file.

const folders = new Map();

async function folder(project, parts) {
  let handle = project;
  let key = "";
  for (const part of parts) {
    key += `/${part}`;
    if (!folders.has(key))
      folders.set(key, await handle.getDirectoryHandle(part, { create: true }));
    handle = folders.get(key);
  }
  return handle;
}

self.onmessage = async (event) => {
  const { name, projectId } = event.data;
  const started = performance.now();
  try {
    const index = await (await fetch(`../bench-data/${name}.json`)).json();
    const blob = new Uint8Array(await (await fetch(`../bench-data/${name}.bin`)).arrayBuffer());
    const root = await navigator.storage.getDirectory();
    const projects = await root.getDirectoryHandle("projects");
    const project = await projects.getDirectoryHandle(projectId);
    let bytes = 0;
    for (const [path, offset, size] of index) {
      const parts = path.split("/");
      const file = parts.pop();
      const dir = await folder(project, parts);
      const handle = await (
        await dir.getFileHandle(file, { create: true })
      ).createSyncAccessHandle();
      try {
        handle.truncate(0);
        const written = handle.write(blob.subarray(offset, offset + size), { at: 0 });
        if (written !== size) throw new Error(`${path}: wrote ${written} of ${size} bytes`);
        handle.flush();
      } finally {
        handle.close();
      }
      bytes += size;
    }
    self.postMessage({ ok: true, files: index.length, bytes, ms: performance.now() - started });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

self.postMessage({ kind: "ready" });
