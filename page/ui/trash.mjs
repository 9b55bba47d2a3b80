// The project trash on the Files surface (docs/ui.md, "No silent loss"): what file.delete put
// in `.voicebox/trash/`, newest first, with Restore (byte-identical: the host checks every
// file's sha256 against the one it recorded at delete), Delete for good and Empty trash. The
// page never names `.voicebox/`: it lists, restores and empties through trash.* only.

import { el, formatBytes, name, replace, tableBox } from "../dom.mjs";
import { acted, clearAlerts, guarded, showRefusal } from "./alerts.mjs";
import { choiceDialog, confirmDialog } from "./dialog.mjs";
import { folderLabel } from "./explorer.mjs";
import { blocked, guard } from "./safe.mjs";

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

function shown(entry) {
  return entry.kind === "dir" ? folderLabel(entry.path) : entry.path;
}

/**
 * Restore trash entries `ids` for the Files view `view`; an entry whose place is taken again
 * asks Keep both / Cancel. Resolves the host's answers ({entry, path}) of those restored.
 */
export async function restoreEntries(view, ids) {
  const reason = blocked(view.app, "trash.restore");
  if (reason) {
    view.say(reason);
    return [];
  }
  const back = [];
  for (const id of ids) {
    let done;
    try {
      done = (await view.call("trash.restore", { id })).result;
    } catch (err) {
      if (err.code !== "already-exists") {
        showRefusal(err, "Restoring from the trash");
        break;
      }
      const { choice } = await choiceDialog({
        id: "restore-conflict-dialog",
        title: "That name is taken again",
        text: `${err.message} Keep both restores it beside what is there now, under a free name with a number.`,
        choices: [{ value: "keep", label: "Keep both", primary: true }],
      });
      if (choice !== "keep") break;
      const kept = await acted("Restoring from the trash", () =>
        view.call("trash.restore", { id, on_conflict: "keep-both" }),
      );
      if (!kept) break;
      done = kept.result;
    }
    back.push(done);
  }
  if (back.length) {
    clearAlerts();
    await view.afterChange();
    for (const b of back) await view.explorer.reveal(b.path);
    view.explorer.select(back.map((b) => b.path));
  }
  return back;
}

/** Render the trash of `view`'s project into its viewer. */
export async function showTrash(view) {
  const listing = await guarded("Reading the trash", () => view.call("trash.list"));
  if (!listing) return;
  const entries = listing.result.entries;
  const again = () => showTrash(view);
  const rows = entries.map((e) =>
    el(
      "tr",
      { "data-trash-id": e.id },
      el(
        "td",
        {},
        e.damaged
          ? el("span", { class: "muted" }, "(damaged record)")
          : name(shown(e), { class: "literal name" }),
      ),
      el("td", {}, e.kind === "dir" ? `folder, ${plural(e.files.length, "file")}` : "file"),
      el("td", {}, formatBytes(e.bytes)),
      el(
        "td",
        {},
        e.deleted_at ? new Date(e.deleted_at).toISOString().replace("T", " ").slice(0, 19) : "",
      ),
      el(
        "td",
        { class: "actions" },
        e.damaged
          ? null
          : guard(
              view.app,
              "trash.restore",
              el(
                "button",
                {
                  type: "button",
                  class: "trash-restore",
                  "aria-label": `Restore: ${shown(e)}`,
                  onclick: async () => {
                    const [done] = await restoreEntries(view, [e.id]);
                    if (!done) return;
                    await again();
                    view.say(
                      `Restored ${done.path}${done.path === done.entry.path ? "" : ` (beside ${done.entry.path})`} — ${plural(done.entry.files.length, "file")}, sha256 checked.`,
                    );
                  },
                },
                "Restore",
              ),
            ),
        guard(
          view.app,
          "trash.empty",
          el(
            "button",
            {
              type: "button",
              class: "danger trash-forget",
              "aria-label": `Delete for good: ${e.damaged ? "this item" : shown(e)}`,
              onclick: async () => {
                const sure = await confirmDialog({
                  id: "forget-dialog",
                  title: "Delete for good",
                  danger: true,
                  confirmLabel: "Delete for good",
                  text: `This removes ${e.damaged ? "this item" : shown(e)} (${plural(e.files.length, "file")}, ${formatBytes(e.bytes)}) from the trash. It cannot be undone.`,
                });
                if (
                  !sure ||
                  !(await acted("Emptying the trash", () => view.call("trash.empty", { id: e.id })))
                )
                  return;
                await again();
                view.say("Deleted for good.");
              },
            },
            "Delete for good",
          ),
        ),
      ),
    ),
  );
  const files = entries.reduce((n, e) => n + e.files.length, 0);
  const bytes = entries.reduce((n, e) => n + e.bytes, 0);
  const empty = guard(
    view.app,
    "trash.empty",
    el(
      "button",
      {
        type: "button",
        class: "danger",
        id: "empty-trash",
        disabled: entries.length === 0,
        onclick: async () => {
          const sure = await confirmDialog({
            id: "empty-trash-dialog",
            title: "Empty the trash",
            danger: true,
            confirmLabel: "Empty trash",
            text: `This deletes ${plural(entries.length, "item")} (${plural(files, "file")}, ${formatBytes(bytes)}) for good. It cannot be undone.`,
          });
          if (!sure || !(await acted("Emptying the trash", () => view.call("trash.empty", {}))))
            return;
          await again();
          view.say("The trash is empty.");
        },
      },
      "Empty trash",
    ),
  );
  replace(
    view.viewer,
    el("h3", { id: "trash-title" }, "Trash"),
    el(
      "p",
      { class: "muted" },
      entries.length
        ? `${plural(entries.length, "item")}, ${plural(files, "file")}, ${formatBytes(bytes)}. A restore puts the bytes back exactly as they were deleted (the host checks each file's sha256).`
        : "The trash is empty. Deleted files and folders wait here until the trash is emptied.",
    ),
    el(
      "div",
      { class: "toolbar", role: "group", "aria-label": "Trash actions" },
      empty,
      el(
        "button",
        { type: "button", id: "close-trash", onclick: () => view.closeViewer() },
        "Close trash",
      ),
    ),
    entries.length
      ? tableBox(
          el(
            "table",
            { id: "trash-table", class: "trash-table" },
            el("caption", { class: "visually-hidden" }, "Deleted items, newest first"),
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ["What", "Kind", "Size", "Deleted (UTC)", "Actions"].map((h) =>
                  el("th", { scope: "col" }, h),
                ),
              ),
            ),
            el("tbody", {}, rows),
          ),
          { label: "Trash" },
        )
      : null,
  );
  view.viewer.querySelector("#trash-title").tabIndex = -1;
  view.viewer.querySelector("#trash-title").focus();
}
