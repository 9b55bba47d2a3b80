// Bench only (never shipped): the floor of search in files (bench/search_bench.py) — every
// file of OPFS projects/<projectId>/ read once, straight from storage in JavaScript (a walk of
// the folders, then getFile().arrayBuffer() per file), no Python, no host. Resolves
// {files, bytes, ms}. The project's .voicebox/ is left out, as search leaves it out.

async function* walk(dir, depth) {
  const entries = [];
  for await (const entry of dir.values()) entries.push(entry);
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (depth === 0 && entry.name === ".voicebox") continue;
    if (entry.kind === "directory") yield* walk(entry, depth + 1);
    else yield entry;
  }
}

self.onmessage = async (event) => {
  const { projectId } = event.data;
  try {
    const root = await navigator.storage.getDirectory();
    const project = await (await root.getDirectoryHandle("projects")).getDirectoryHandle(projectId);
    const started = performance.now();
    let files = 0;
    let bytes = 0;
    for await (const handle of walk(project, 0)) {
      bytes += (await (await handle.getFile()).arrayBuffer()).byteLength;
      files += 1;
    }
    self.postMessage({ ok: true, files, bytes, ms: performance.now() - started });
  } catch (err) {
    self.postMessage({ ok: false, message: String(err?.message ?? err) });
  }
};

self.postMessage({ kind: "ready" });
