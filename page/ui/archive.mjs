// Downloading a whole project, or one of its folders, as a .zip (SPEC §10): the host's
// project.export streams the archive in chunks (progress shown) and the page saves it as a
// Blob. Shared by the Projects and Files surfaces.

import { downloadBlob, el, formatBytes, replace } from "../dom.mjs";
import { acted, guarded, showNotice } from "./alerts.mjs";

/** Export project `p` ({id, name}) — or only its `folder` — into a download, with progress
 * in `progress` (a box). */
export async function exportProject(app, p, progress, folder = "") {
  const show = (label, value, max) => {
    progress.hidden = false;
    replace(progress, el("span", { class: "progress-label" }, label),
      el("progress", { max: String(Math.max(max, 1)), value: String(value), "aria-label": label }));
    return progress.querySelector("progress");
  };
  const walk = await guarded("Sizing the export", () => app.host.call("file.walk", { project: p.id, folder }));
  const total = (walk?.result.files ?? []).reduce((n, f) => n + f.size, 0);
  const what = folder ? `${p.name} /${folder}/` : p.name;
  const bar = show(`Exporting ${what}`, 0, total);
  const answer = await acted(`Exporting ${what}`, () => app.host.call("project.export", { project: p.id, ...(folder ? { folder } : {}) },
    { onChunk: (received) => { bar.value = Math.min(received, total); } }));
  if (!answer) { progress.hidden = true; return null; }
  const blob = answer.stream ?? new Blob([]);
  show(`Exported ${what} (${formatBytes(blob.size)}) — done`, total, total);
  const { skipped = 0, left_out: leftOut = [] } = answer.result;
  if (skipped) progress.append(leftOutList(skipped, leftOut));
  downloadBlob(blob, answer.result.filename || `${p.name}.zip`);
  const left = skipped ? ` ${skipped} name${skipped === 1 ? " was" : "s were"} left out (listed under the progress bar).` : "";
  showNotice(`Exported ${what}: ${answer.result.files} files, ${formatBytes(blob.size)}, manifest sha256 ${answer.result.manifest_sha256}.${left}`);
  return answer;
}

/** What an export left out and why (issue 29 item 14): the host's list, shown as it is. */
function leftOutList(skipped, leftOut) {
  const more = skipped - leftOut.length;
  return el("div", { class: "left-out", role: "status" },
    el("p", {}, `Left out of the archive: ${skipped} name${skipped === 1 ? "" : "s"} the path rule does not allow.`),
    el("ul", {}, leftOut.map((x) => el("li", {}, el("code", {}, x.path), ` — ${x.why}`))),
    more > 0 ? el("p", { class: "muted small" }, `and ${more} more`) : null);
}
