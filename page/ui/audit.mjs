// Audit surface: newest first, filter by operation / decision / rule, verify the hash chain,
// export what the filters select as JSON Lines (SPEC §5, §11).

import { downloadBlob, el, formatTime, replace, tableBox } from "../dom.mjs";
import { guarded, showNotice, showRefusal } from "./alerts.mjs";

/** Every record the filters select, newest first, one JSON object per line (a Blob). */
async function exportRecords(app, filters, onProgress) {
  const lines = [];
  let before = null;
  let head = null;
  for (;;) {
    const args = { limit: 1000 };
    if (before) args.before = before;
    for (const [k, v] of Object.entries(filters)) if (v) args[k] = v;
    const page = (await app.host.call("audit.list", args)).result;
    head ??= page.head;
    for (const r of page.records) lines.push(`${JSON.stringify(r)}\n`);
    onProgress(lines.length, page.next_before, head);
    before = page.next_before;
    if (!before) break;
  }
  return { blob: new Blob(lines, { type: "application/x-ndjson" }), count: lines.length };
}

/** What audit.verify found, in words (the finding and its sentence come from Python). */
function verdictText(v) {
  const unanchored = v.unanchored_until
    ? ` Records 1–${v.unanchored_until} predate the anchor: they carry no MAC and are checked by their hash chain only.`
    : "";
  if (!v.ok)
    return `Chain broken at record ${v.broken_seq} (${v.finding}): ${v.reason}.${unanchored}`;
  const anchored = v.anchor_seq ? ` Anchored through record ${v.anchor_seq}.` : "";
  return `Chain verified: ${v.checked} records, none edited, missing, forged or cut off.${anchored}${unanchored}`;
}

function detailText(details) {
  return Object.entries(details ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
}

export async function renderAudit(node, app) {
  const filters = { op: "", decision: "", rule: "" };
  const tbody = el("tbody", { id: "audit-rows" });
  const verdict = el("p", { id: "verify-result", role: "status", "aria-live": "polite" });
  const more = el("button", { type: "button", hidden: true }, "Show older records");
  const exportBar = el("progress", {
    id: "export-progress",
    max: "1",
    value: "0",
    hidden: true,
    "aria-label": "Export progress",
  });
  const exportStatus = el("span", { id: "export-status", role: "status", class: "muted" });
  const exportButton = el(
    "button",
    {
      type: "button",
      id: "export-audit",
      onclick: async () => {
        exportButton.disabled = true;
        exportBar.hidden = false;
        exportStatus.textContent = "Exporting…";
        try {
          const { blob, count } = await exportRecords(app, filters, (n, next, head) => {
            exportBar.max = Math.max(head, 1);
            exportBar.value = next ? head - next : head;
            exportStatus.textContent = `Exporting… ${n} records`;
          });
          const stamp = new Date().toISOString().replace(/[:.]/g, "-");
          downloadBlob(blob, `voicebox-audit-${stamp}.jsonl`);
          exportStatus.textContent = `Exported ${count} record${count === 1 ? "" : "s"} as JSON Lines.`;
          showNotice(`Audit exported: ${count} record${count === 1 ? "" : "s"}.`);
        } catch (err) {
          exportStatus.textContent = "";
          showRefusal(err, "Exporting the audit");
        } finally {
          exportButton.disabled = false;
          exportBar.hidden = true;
        }
      },
    },
    "Export JSON Lines",
  );
  let before = null;

  async function load(reset) {
    if (reset) {
      before = null;
      tbody.replaceChildren();
    }
    const args = { limit: 100 };
    if (before) args.before = before;
    for (const [k, v] of Object.entries(filters)) if (v) args[k] = v;
    const page = await guarded("Reading the audit", () => app.host.call("audit.list", args));
    if (!page) return;
    for (const r of page.result.records) {
      tbody.appendChild(
        el(
          "tr",
          { "data-seq": r.seq, class: `decision-${r.decision}` },
          el("td", { class: "nowrap" }, String(r.seq)),
          el("td", { class: "words" }, formatTime(r.at)),
          el("td", { class: "nowrap" }, r.actor),
          el("td", { class: "nowrap" }, r.op),
          el("td", { class: "nowrap" }, r.decision),
          el("td", { class: "nowrap" }, el("code", {}, r.rule)),
          el("td", { class: "details" }, detailText(r.details)),
        ),
      );
    }
    before = page.result.next_before;
    more.hidden = !before;
    if (!tbody.children.length)
      tbody.appendChild(
        el("tr", {}, el("td", { colspan: "7", class: "empty" }, "No records match.")),
      );
  }

  more.addEventListener("click", () => load(false));
  const field = (key, label, options) => {
    const id = `audit-filter-${key}`;
    const control = options
      ? el(
          "select",
          {
            id,
            onchange: (e) => {
              filters[key] = e.target.value;
              load(true);
            },
          },
          options.map(([value, text]) => el("option", { value }, text)),
        )
      : el("input", {
          id,
          type: "text",
          placeholder: "any",
          onchange: (e) => {
            filters[key] = e.target.value.trim();
            load(true);
          },
        });
    return el("div", { class: "field" }, el("label", { for: id }, label), control);
  };

  replace(
    node,
    el("h2", {}, "Audit"),
    el(
      "p",
      { class: "muted" },
      "Every host decision, newest first. Each record carries the hash of the one before it and the host's MAC, and the host keeps the newest record's hash outside the audit store, so an edited, removed, forged or cut-off record is found by Verify.",
    ),
    el(
      "div",
      { class: "toolbar", role: "group", "aria-label": "Audit filters" },
      field("op", "Operation"),
      field("decision", "Decision", [
        ["", "any"],
        ["admitted", "admitted"],
        ["refused", "refused"],
        ["recorded", "recorded"],
      ]),
      field("rule", "Rule or refusal code"),
      el(
        "button",
        {
          type: "button",
          id: "verify-audit",
          class: "primary",
          onclick: async () => {
            verdict.textContent = "Verifying…";
            const res = await guarded("Verifying the audit", () => app.host.call("audit.verify"));
            if (!res) {
              verdict.textContent = "";
              return;
            }
            verdict.className = res.result.ok ? "ok" : "bad";
            verdict.dataset.finding = res.result.finding ?? "";
            verdict.textContent = verdictText(res.result);
          },
        },
        "Verify chain",
      ),
      exportButton,
      exportBar,
      exportStatus,
    ),
    verdict,
    tableBox(
      el(
        "table",
        { class: "table", id: "audit-table" },
        el("caption", { class: "visually-hidden" }, "Audit records, newest first"),
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ...["#", "Time", "Actor", "Operation", "Decision", "Rule", "Details"].map((h) =>
              el("th", { scope: "col" }, h),
            ),
          ),
        ),
        tbody,
      ),
      { label: "Audit records", focusable: true },
    ),
    more,
  );
  await load(true);
}
