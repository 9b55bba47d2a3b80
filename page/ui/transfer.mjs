// Getting files into the project, and moving them, without silent loss (docs/ui.md, "The file
// explorer" and "No silent overwrite"). Dropped folders are read with the browser's entries API
// (DataTransferItem.webkitGetAsEntry), falling back to a handle (getAsFileSystemHandle) or the
// plain file. Every write first asks the host for a new file (file.write with if_absent); when
// the host answers already-exists, the person chooses: Replace, Keep both (the host writes the
// new one under a free name), or Cancel. Moves do the same (file.move refuses an existing
// target unless told on_conflict).

import { joinPath, parentOf, baseName } from "./explorer.mjs";
import { choiceDialog } from "./dialog.mjs";

/**
 * Read a drop: resolves [{path, file} | {path, dir: true}] with paths relative to the drop
 * (a dropped folder "docs" gives "docs/…"; its empty folders too). MUST be called inside the
 * drop event, before any await: the browser empties the DataTransfer once the event ends.
 */
export function readDrop(dataTransfer) {
  const items = [...(dataTransfer.items ?? [])].filter((i) => i.kind === "file");
  const entries = items.map((i) => i.webkitGetAsEntry?.() ?? null);
  const handles = items.map((i, n) =>
    entries[n] || !i.getAsFileSystemHandle ? null : i.getAsFileSystemHandle(),
  );
  const files = items.map((i) => i.getAsFile());
  return (async () => {
    const out = [];
    for (let n = 0; n < items.length; n += 1) {
      if (entries[n]) await walkEntry(entries[n], "", out);
      else if (handles[n]) await walkHandle(await handles[n].catch(() => null), "", out, files[n]);
      else if (files[n]) out.push({ path: files[n].name, file: files[n] });
    }
    return out;
  })();
}

async function walkEntry(entry, prefix, out) {
  const path = joinPath(prefix, entry.name);
  if (entry.isFile) {
    out.push({ path, file: await new Promise((resolve, reject) => entry.file(resolve, reject)) });
    return;
  }
  const reader = entry.createReader();
  const children = [];
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) break;
    children.push(...batch);
  }
  if (!children.length) out.push({ path, dir: true });
  children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const child of children) await walkEntry(child, path, out);
}

async function walkHandle(handle, prefix, out, fallback) {
  if (!handle) {
    if (fallback) out.push({ path: fallback.name, file: fallback });
    return;
  }
  const path = joinPath(prefix, handle.name);
  if (handle.kind === "file") {
    out.push({ path, file: await handle.getFile() });
    return;
  }
  const children = [];
  for await (const child of handle.values()) children.push(child);
  if (!children.length) out.push({ path, dir: true });
  children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const child of children) await walkHandle(child, path, out, null);
}

/**
 * Asks what to do when a target exists, once per conflict or once for all (`state.all`).
 * `state`: {all: null | "replace" | "keep", left: number of conflicts that may follow}.
 * The name "Keep both" gives is the host's rule (core/projects/tree.py): the page never
 * makes it up, it shows the path the host answers.
 */
export async function askConflict(path, act, state, { kind = "file" } = {}) {
  if (state.all) return state.all;
  const leaf = baseName(path);
  const where = parentOf(path) ? `The folder /${parentOf(path)}/` : "The project root";
  const what = kind === "dir" ? "a folder" : "a file";
  const { choice, all } = await choiceDialog({
    id: "conflict-dialog",
    title: `“${leaf}” already exists`,
    text: `${where} already holds ${what} named “${leaf}”. Replace it with the one you are ${act}${act === "moving" ? " (the one there now goes to the trash)" : " (its bytes are overwritten)"}, keep both (yours is saved beside it under a free name with a number), or cancel.`,
    choices: [
      { value: "keep", label: "Keep both" },
      { value: "replace", label: "Replace" },
    ],
    rest: state.left ?? 0,
    more: state.more === true, // later batches may hold more: their count is not known yet
  });
  if (all && choice !== "cancel") state.all = choice;
  return choice;
}

/**
 * Write `body` (ArrayBuffer factory: `bytes()`) at `path` without overwriting by surprise:
 * resolves the path written, as the host answers it (the free name after "Keep both"; a name
 * sent in Unicode NFD is stored in NFC), or null when the person cancelled; `seen` (an array)
 * collects the host's answer (`composed_from` says a name was composed). Throws the host's refusal for anything but a conflict. `call(op, args, options)`
 * is the surface's host call.
 */
export async function writeAsking(call, path, bytes, { act, state, seen = null }) {
  const written = (answer) => {
    seen?.push(answer.result);
    return answer.result.path;
  };
  try {
    return written(await call("file.write", { path, if_absent: true }, { body: await bytes() }));
  } catch (err) {
    if (err.code !== "already-exists") throw err;
  }
  const choice = await askConflict(path, act, state);
  if (choice === "replace")
    return written(await call("file.write", { path }, { body: await bytes() }));
  if (choice === "keep")
    return written(await call("file.write", { path, keep_both: true }, { body: await bytes() }));
  return null;
}

/**
 * Move the file or folder `src` to `dst`, asking when `dst` exists: resolves the host's answer
 * (`{path, src, kind, files, replaced}`), or null when cancelled. "Replace" is one host call
 * (file.move on_conflict=replace: what was at `dst` goes to the trash, and comes back if the
 * move fails); "Keep both" lets the host pick the free name.
 */
export async function moveAsking(call, src, dst, { state, kind = "file" }) {
  try {
    return (await call("file.move", { src, dst })).result;
  } catch (err) {
    if (err.code !== "already-exists") throw err;
  }
  const choice = await askConflict(dst, "moving", state, { kind });
  if (choice === "replace" || choice === "keep") {
    return (
      await call("file.move", {
        src,
        dst,
        on_conflict: choice === "keep" ? "keep-both" : "replace",
      })
    ).result;
  }
  return null;
}
