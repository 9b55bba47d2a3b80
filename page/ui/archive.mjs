// Downloading a whole project, or one of its folders, as a .zip (SPEC §10): the host's
// project.export streams the archive in chunks (progress shown) and the page streams them into
// the saved file (page/download.mjs, issue 34), or saves them as a Blob where it cannot.
// Shared by the Projects and Files surfaces.

import { downloadBlob, el, formatBytes, replace } from "../dom.mjs";
import { streamedDownload } from "../download.mjs";
import { acted, clearAlerts, guarded, showNotice } from "./alerts.mjs";
import { confirmDialog, promptDialog } from "./dialog.mjs";

/** Export project `p` ({id, name}) — or only its `folder` — into a download, with progress
 * in `progress` (a box). The bytes are streamed into the saved file where the page's service
 * worker can answer a one-time download URL (page/download.mjs; issue 34), else gathered into
 * a Blob and saved. The box is cleared as the export starts (a previous export's "done" bar
 * never stands beside a new one) and, while a streamed export runs, holds a Cancel button
 * (`button.export-cancel`): it drops the call — the host stops reading before its next file —
 * and fails the download, so the browser keeps no partial file (issue 34). Resolves the
 * export's answer with `delivery`: "streamed" or "blob" (which path ran; also said in the
 * notice), or null (refused, or cancelled by the person or the browser). */
export async function exportProject(app, p, progress, folder = "") {
  const what = folder ? `${p.name} /${folder}/` : p.name;
  const stop = new AbortController(); // the Cancel button
  const show = (label, value, max, { cancel = false } = {}) => {
    progress.hidden = false;
    replace(
      progress,
      el("span", { class: "progress-label" }, label),
      el("progress", { max: String(Math.max(max, 1)), value: String(value), "aria-label": label }),
      cancel
        ? el(
            "button",
            {
              type: "button",
              class: "export-cancel",
              "aria-label": `Cancel the export of ${what}`,
              onclick: () => stop.abort(),
            },
            "Cancel",
          )
        : null,
    );
    return progress.querySelector("progress");
  };
  clearAlerts(); // a new act: the last one's notice goes (said once, where it happens)
  show(`Sizing the export of ${what}…`, 0, 1); // the previous export's bar goes now
  // Where a service worker can stream it, the download is registered first and the export
  // starts at once, its bytes going from the host worker straight to the service worker
  // (`sink`): the host says the archive's name and size before its first byte (`onHead`), and
  // the download opens then — no walk of the page's own first (issue 34, round 42: that walk,
  // before the export, was a third of its time). The Blob path sizes it first, as before.
  const saver = await streamedDownload();
  const delivery = saver ? "streamed" : "blob";
  let total = 0;
  let received = 0;
  let bar = null;
  let name = null;
  const sized = (filename, bytes) => {
    total = bytes;
    name = filename;
    bar = show(`Exporting ${what}`, Math.min(received, total), total, { cancel: saver !== null });
  };
  if (saver) show(`Sizing the export of ${what}…`, 0, 1, { cancel: true });
  else {
    const walk = await guarded("Sizing the export", () =>
      app.host.call("file.walk", { project: p.id, folder }),
    );
    sized(
      walk?.result.archive_filename ?? null,
      (walk?.result.files ?? []).reduce((n, f) => n + f.size, 0),
    );
  }
  // the person's Cancel fails the download (no partial file) and drops the call
  stop.signal.addEventListener("abort", () => saver?.fail("the export was cancelled"));
  const signal = saver ? AbortSignal.any([saver.signal, stop.signal]) : null;
  const cancelled = () => signal?.aborted === true;
  const answer = await acted(`Exporting ${what}`, async () => {
    try {
      return await app.host.call(
        "project.export",
        { project: p.id, ...(folder ? { folder } : {}) },
        {
          signal,
          sink: saver?.handOff() ?? null,
          onHead: ({ filename, bytes }) => {
            sized(filename, bytes);
            saver?.open(filename); // named by the host, before its first byte is saved
          },
          onChunk: (bytes, chunk) => {
            received = bytes;
            if (bar) bar.value = Math.min(bytes, total);
            if (chunk) saver?.write(chunk);
          },
        },
      );
    } catch (err) {
      saver?.fail(err?.message ?? "the export failed"); // the browser removes its partial file
      if (cancelled()) return null; // cancelled by the person: said below, not an error
      throw err;
    }
  });
  const stopped = () => {
    // said once, beside the Cancel the person pressed (not again in the alerts region)
    show(`Export of ${what} cancelled: the download was stopped — nothing was saved`, 0, total);
    return null;
  };
  if (!answer || cancelled()) {
    if (cancelled()) return stopped();
    progress.hidden = true;
    return null;
  }
  let size = received;
  if (saver) {
    saver.close();
    show(`Saving ${what} (${formatBytes(size)})…`, total, total);
    if (!(await saver.saved)) return stopped();
  } else {
    const blob = answer.stream ?? new Blob([]);
    size = blob.size;
    downloadBlob(blob, answer.result.filename || name || `${p.name}.zip`);
  }
  show(`Exported ${what} (${formatBytes(size)}) — done`, total, total);
  const { skipped = 0, left_out: leftOut = [] } = answer.result;
  if (skipped) progress.append(leftOutList(skipped, leftOut));
  const left = skipped
    ? ` ${skipped} name${skipped === 1 ? " was" : "s were"} left out (listed under the progress bar).`
    : "";
  const how = saver ? "streamed into the saved file" : "saved from memory";
  showNotice(
    `Exported ${what}: ${count(answer.result.files, "file")}, ${formatBytes(size)} (${how}), manifest sha256 ${answer.result.manifest_sha256}.${left}${memoryWords(answer.result)}`,
  );
  return { ...answer, delivery };
}

const count = (n, one) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** What an export's summary says of the project's memory (issue 33 item 3), as words. */
export function memoryWords(summary) {
  const m = summary.memory;
  if (m) return ` With its memory: ${count(m.blocks, "block")}, ${count(m.letters, "letter")}.`;
  return summary.memory_left_out ? ` ${summary.memory_left_out}` : "";
}

/** What an export left out and why (issue 29 item 14): the host's list, shown as it is. */
function leftOutList(skipped, leftOut) {
  const more = skipped - leftOut.length;
  return el(
    "div",
    { class: "left-out", role: "status" },
    el(
      "p",
      {},
      `Left out of the archive: ${skipped} name${skipped === 1 ? "" : "s"} the path rule does not allow.`,
    ),
    el(
      "ul",
      {},
      leftOut.map((x) => el("li", {}, el("code", {}, x.path), ` — ${x.why}`)),
    ),
    more > 0 ? el("p", { class: "muted small" }, `and ${more} more`) : null,
  );
}

/** Import the .zip `file` as a new project (issue 33 item 3): the host checks it and says what
 * it would create (project.import_preview); the person sees that and confirms — the files
 * only when the archive's memory is broken, and under another name when a project already has
 * the archive's. Every rule is the host's; this only shows its words. Resolves the import's
 * answer, or null (refused or cancelled). */
export async function importArchive(app, file, progress) {
  const busy = (label) => {
    progress.hidden = false;
    replace(progress, el("span", {}, label), el("progress", { "aria-label": label }));
  };
  busy(`Checking ${file.name} (${formatBytes(file.size)})`);
  const previewed = await acted(`Checking ${file.name}`, async () =>
    app.host.call("project.import_preview", {}, { body: await file.arrayBuffer() }),
  );
  progress.hidden = true;
  if (!previewed) return null;
  const p = previewed.result;
  const problem = p.memory_problem ?? null;
  const sure = await confirmDialog({
    id: "import-preview",
    title: `Import “${p.name}”?`,
    body: previewBody(p, file),
    confirmLabel: p.name_taken
      ? "Choose another name…"
      : problem
        ? "Import the files only"
        : "Import",
  });
  if (!sure) {
    showNotice(`Import of ${file.name} cancelled; nothing was created.`);
    return null;
  }
  const send = async (name) => {
    busy(`Importing ${file.name} as “${name}”`);
    try {
      return await app.host.call(
        "project.import",
        { name, ...(problem ? { files_only: true } : {}) },
        { body: await file.arrayBuffer() },
      );
    } finally {
      progress.hidden = true;
    }
  };
  let imported;
  if (p.name_taken) {
    imported = await promptDialog({
      title: `A project is already called “${p.name}”`,
      label: "Name for the imported project",
      value: p.suggested_name,
      confirmLabel: problem ? "Import the files only" : "Import",
      act: async (typed) => {
        try {
          return { done: await send(typed) };
        } catch (err) {
          return { problem: err };
        }
      },
    });
    if (!imported) {
      showNotice(`Import of ${file.name} cancelled; nothing was created.`);
      return null;
    }
  } else {
    imported = await acted(`Importing ${file.name}`, () => send(p.name));
    if (!imported) return null;
  }
  const r = imported.result;
  showNotice(
    `Imported ${r.files} ${r.files === 1 ? "file" : "files"} (${formatBytes(r.bytes)}) into “${r.project.name}”.${memoryWords(r)}`,
  );
  return imported;
}

/** The preview's facts as text nodes: what the archive holds and what the import creates. */
function previewBody(p, file) {
  const m = p.memory;
  return el(
    "div",
    { class: "import-preview" },
    el(
      "dl",
      {},
      el("dt", {}, "Archive"),
      el("dd", {}, `${file.name}, ${formatBytes(p.archive_size)}`),
      el("dt", {}, "Project name"),
      el("dd", {}, p.name_taken ? `${p.name} — another project already has this name` : p.name),
      el("dt", {}, "Files"),
      el(
        "dd",
        {},
        `${count(p.files, "file")}, ${count(p.folders, "folder")}, ${formatBytes(p.bytes)}`,
      ),
      el("dt", {}, "Memory"),
      el(
        "dd",
        {},
        m
          ? `${count(m.blocks, "block")} (${m.green} green), ${count(m.letters, "letter")} in ${count(m.missions, "mission")}`
          : p.memory_problem
            ? "broken — see below"
            : "none",
      ),
    ),
    p.memory_problem ? el("p", { class: "field-rule", role: "alert" }, p.memory_problem) : null,
    el("p", {}, "The import will create:"),
    el(
      "ul",
      { class: "import-creates" },
      p.creates.map((line) => el("li", {}, line)),
    ),
  );
}
