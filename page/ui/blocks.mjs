// Blocks surface: the open project's system-block store (seed 004 §1, §8; SPEC §9, §11).
// Colour, boundary and store version as the host states them; the owner's edits (add, rename,
// repurpose, remove — a person's gesture, unsanitized, all or nothing) and ratify (the human
// gate). A colour changes only by a receipt import, so nothing here can set one.

import { el, formatTime, literal, name, replace, tableBox } from "../dom.mjs";
import { guard, safeNotice } from "./safe.mjs";
import { acted, clearAlerts, guarded, showNotice, submitting } from "./alerts.mjs";
import { HUMAN_UI as HUMAN, LIMITS } from "../contract.gen.mjs";
import { confirmDialog, promptDialog } from "./dialog.mjs";
import { term } from "./words.mjs";

const COLOUR_MEANING = { green: "proven by an imported receipt", grey: "no receipt imported yet" };

export async function renderBlocks(node, app, params = {}) {
  const project = app.project;
  const answer = await guarded("Reading the blocks", () =>
    app.host.call("blocks.get", { project: project.id }),
  );
  if (!answer) {
    replace(node, el("h2", {}, "Blocks"));
    return;
  }
  const { store, ratified_current: ratifiedCurrent } = answer.result;

  // `button`: the form's submit, disabled while the edit is in flight
  const edit = (ops, what, button = null) => {
    const call = () =>
      app.host.call(
        "blocks.candidate_edit",
        {
          project: project.id,
          ops,
          seat: "owner",
          ...(store ? { if_store_version: store.store_version } : {}),
        },
        { human: true },
      );
    return button ? submitting(button, what, call) : acted(what, call);
  };
  const again = async (focus) => {
    await renderBlocks(node, app, { focus });
    app.tray?.refresh({ force: true });
  };

  const nameInput = el("input", {
    id: "new-block-name",
    type: "text",
    maxlength: String(LIMITS.block_name_chars),
    autocomplete: "off",
    required: true,
  });
  const purposeInput = el("textarea", {
    id: "new-block-purpose",
    rows: "2",
    maxlength: String(LIMITS.block_purpose_chars),
  });
  const addButton = guard(
    app,
    "blocks.candidate_edit",
    el("button", { type: "submit", class: "primary", id: "add-block" }, "Add block"),
  );
  const addForm = el(
    "form",
    {
      class: "block-add",
      "aria-label": "Add a block",
      onsubmit: async (event) => {
        event.preventDefault();
        const done = await edit(
          [{ op: "add", name: nameInput.value, purpose: purposeInput.value }],
          "Adding the block",
          addButton,
        );
        if (done) {
          clearAlerts();
          showNotice(`Added the block (store version ${done.result.store_version}).`);
          await again(done.result.added[0]);
        }
      },
    },
    el(
      "div",
      { class: "field" },
      el("label", { for: "new-block-name" }, "New block name"),
      nameInput,
    ),
    el(
      "div",
      { class: "field grow" },
      el("label", { for: "new-block-purpose" }, "Purpose"),
      purposeInput,
    ),
    addButton,
  );

  const head = el(
    "div",
    { class: "surface-head" },
    el(
      "div",
      {},
      el("h2", {}, "Blocks"),
      el(
        "p",
        { class: "muted", id: "store-line" },
        store
          ? [
              `Store version ${store.store_version} · skeleton `,
              el("code", {}, store.skeleton_id),
              " · ",
              store.ratified
                ? ratifiedCurrent
                  ? el(
                      "span",
                      { class: "ok" },
                      term("ratify", `approved at v${store.ratified.store_version} ✓ current`),
                    )
                  : el(
                      "span",
                      { class: "warn" },
                      term("ratify", `approved at v${store.ratified.store_version}, changed since`),
                    )
                : el("span", { class: "warn" }, term("ratify", "not approved yet")),
            ]
          : "This project has no block store yet: the first block you add creates it.",
      ),
    ),
    store
      ? guard(
          app,
          "blocks.ratify",
          el(
            "button",
            {
              type: "button",
              id: "ratify",
              class: ratifiedCurrent ? "" : "primary",
              disabled: ratifiedCurrent,
              onclick: async () => {
                const sure = await confirmDialog({
                  title: `Approve the blocks at version ${store.store_version}?`,
                  confirmLabel: "Approve (ratify)",
                  text: `Approving (ratifying) records that you accept the block store as it stands at version ${store.store_version}: ${store.blocks.length} block${store.blocks.length === 1 ? "" : "s"}. It changes no block and no colour; the audit records it as your gesture.`,
                });
                if (!sure) return;
                const done = await acted("Approving the blocks", () =>
                  app.host.call(
                    "blocks.ratify",
                    {
                      project: project.id,
                      store_version: store.store_version,
                      ratified_via: HUMAN,
                    },
                    { human: true },
                  ),
                );
                if (done) {
                  showNotice(
                    `Approved the blocks at version ${done.result.store_version} (ratified).`,
                  );
                  await again();
                }
              },
              title: "ratify — record that you accept the block list as it stands",
            },
            ratifiedCurrent ? "Approved" : `Approve blocks v${store.store_version}`,
          ),
        )
      : null,
  );

  const rows = (store?.blocks ?? []).map((b) =>
    el(
      "tr",
      {
        id: `block-row-${b.id}`,
        "data-block": b.id,
        tabindex: "-1",
        class: params.focus === b.id ? "focused" : null,
      },
      el(
        "td",
        { class: "nowrap" },
        el("span", { class: `swatch colour-${b.color}`, "aria-hidden": "true" }),
        " ",
        el("span", { class: "colour-word", title: COLOUR_MEANING[b.color] ?? "" }, b.color),
      ),
      el("th", { scope: "row", class: "block-name" }, name(b.name)),
      el(
        "td",
        { class: "block-purpose" },
        b.purpose ? literal(b.purpose) : el("span", { class: "muted" }, "—"),
      ),
      el("td", { class: "nowrap" }, term("boundary", `v${b.boundary_version}`)),
      el("td", {}, el("code", { class: "block-id" }, b.id)),
      el(
        "td",
        { class: "row-actions" },
        el(
          "button",
          {
            type: "button",
            "aria-label": `Compose a mission for block ${b.name}`,
            onclick: () => app.go("compose", { block: b.id }),
          },
          "Compose",
        ),
        guard(
          app,
          "blocks.candidate_edit",
          el(
            "button",
            {
              type: "button",
              "aria-label": `Rename block ${b.name}`,
              onclick: async () => {
                const name = await promptDialog({
                  title: "Rename block",
                  label: "New name",
                  value: b.name,
                  confirmLabel: "Rename",
                });
                if (name === null || name === b.name) return;
                if (await edit([{ op: "rename", block_id: b.id, name }], "Renaming the block"))
                  await again(b.id);
              },
            },
            "Rename",
          ),
        ),
        guard(
          app,
          "blocks.candidate_edit",
          el(
            "button",
            {
              type: "button",
              "aria-label": `Change the purpose of block ${b.name}`,
              onclick: async () => {
                const purpose = await promptDialog({
                  title: "Change the purpose",
                  label:
                    "Purpose (a new purpose moves the block's boundary: receipts proved before no longer import)",
                  value: b.purpose,
                  confirmLabel: "Save purpose",
                  multiline: true,
                });
                if (purpose === null || purpose === b.purpose) return;
                if (
                  await edit([{ op: "repurpose", block_id: b.id, purpose }], "Changing the purpose")
                )
                  await again(b.id);
              },
            },
            "Purpose…",
          ),
        ),
        guard(
          app,
          "blocks.candidate_edit",
          el(
            "button",
            {
              type: "button",
              class: "danger",
              "aria-label": `Remove block ${b.name}`,
              onclick: async () => {
                const sure = await confirmDialog({
                  title: "Remove block",
                  danger: true,
                  confirmLabel: "Remove",
                  body: el(
                    "p",
                    {},
                    "This removes the block ",
                    literal(b.name),
                    " from the store. Its imported receipts stay on record; letters naming it can no longer be posted.",
                  ),
                });
                if (!sure) return;
                if (await edit([{ op: "remove", block_id: b.id }], "Removing the block"))
                  await again();
              },
            },
            "Remove",
          ),
        ),
      ),
    ),
  );

  const receipts = (store?.receipts ?? []).slice().reverse();
  const names = Object.fromEntries((store?.blocks ?? []).map((b) => [b.id, b.name]));
  replace(
    node,
    head,
    safeNotice(el, app),
    addForm,
    rows.length
      ? tableBox(
          el(
            "table",
            { class: "table", id: "blocks-table" },
            el("caption", { class: "visually-hidden" }, "System blocks of this project"),
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ...["Colour", "Name", "Purpose", term("boundary"), "Id"].map((h) =>
                  el("th", { scope: "col" }, h),
                ),
                el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")),
              ),
            ),
            el("tbody", {}, rows),
          ),
        )
      : el("p", { class: "empty" }, "No blocks yet — add the first one above."),
    receipts.length
      ? [
          el("h3", { class: "section" }, "Imported receipts"),
          tableBox(
            el(
              "table",
              { class: "table", id: "receipts-table" },
              el(
                "caption",
                { class: "visually-hidden" },
                "Receipts imported into this store, newest first",
              ),
              el(
                "thead",
                {},
                el(
                  "tr",
                  {},
                  ...["Store version", "Block", "Mission", "Imported", "Candidate"].map((h) =>
                    el("th", { scope: "col" }, h),
                  ),
                ),
              ),
              el(
                "tbody",
                {},
                receipts.map((r) =>
                  el(
                    "tr",
                    {},
                    el("td", {}, `v${r.store_version}`),
                    el(
                      "td",
                      { class: "name-cell" },
                      names[r.block_id] !== undefined
                        ? name(names[r.block_id])
                        : el("code", {}, r.block_id),
                    ),
                    el(
                      "td",
                      {},
                      r.mission_id
                        ? el("code", {}, r.mission_id)
                        : el("span", { class: "muted" }, "—"),
                    ),
                    el("td", { class: "nowrap" }, formatTime(r.imported_at)),
                    el("td", {}, el("code", { class: "hash" }, r.candidate_id)),
                  ),
                ),
              ),
            ),
            { label: "Imported receipts", focusable: true },
          ),
        ]
      : null,
  );
  if (params.focus) {
    const row = node.querySelector(`#block-row-${CSS.escape(params.focus)}`);
    if (row) {
      row.scrollIntoView({ block: "center" });
      row.focus({ preventScroll: true });
      return true;
    }
  }
  return false;
}
