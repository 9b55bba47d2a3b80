// A tool's result in human form (issue 33 item 5; docs/plugins.md "Results in human form"):
// a list of records is a table, a record a list of named values, a text of several lines is
// Markdown rendered as text nodes (page/ui/markdown.mjs), one line plain text; the raw JSON is
// there only behind a "Details" disclosure. Presentation only: what the result means is the
// tool's own account, and nothing here is markup made from a string.

import { el, literal } from "../dom.mjs";
import { renderMarkdown } from "./markdown.mjs";

const plainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const scalar = (v) => v === null || typeof v !== "object";

/** "bytesBefore" / "bytes_before" → "bytes before" (the key itself is the tooltip). */
function words(key) {
  return String(key)
    .replace(/[_-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase();
}

function scalarText(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "number") return v.toLocaleString("en");
  return literal(v);
}

function records(rows, label) {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  // a table that scrolls inside itself at any width (its column names stay: narrow.css stacks
  // only the surfaces' .table rows), focusable so the keyboard can scroll it
  return el(
    "div",
    { class: "result-table-box", role: "region", "aria-label": label, tabindex: "0" },
    el(
      "table",
      { class: "result-table" },
      el("caption", { class: "visually-hidden" }, label),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          columns.map((c) => el("th", { scope: "col", title: c }, words(c))),
        ),
      ),
      el(
        "tbody",
        {},
        rows.map((r) =>
          el(
            "tr",
            {},
            columns.map((c) => el("td", {}, scalarText(r[c]))),
          ),
        ),
      ),
    ),
  );
}

async function value(v, label, depth) {
  if (typeof v === "string" && v.includes("\n"))
    return renderMarkdown(v, { top: Math.min(6, 4 + depth) });
  if (scalar(v)) return scalarText(v);
  if (Array.isArray(v)) {
    if (!v.length) return el("span", { class: "muted" }, "none");
    if (v.every((r) => plainObject(r) && Object.values(r).every(scalar))) return records(v, label);
    return el(
      "ul",
      {},
      await Promise.all(v.map(async (x) => el("li", {}, await value(x, label, depth + 1)))),
    );
  }
  return record(v, depth + 1);
}

// A record's empty values (null, an empty list) are left out of the human form; the JSON
// behind "Details" keeps every key.
const empty = (v) => v === null || v === undefined || (Array.isArray(v) && !v.length);

async function record(obj, depth) {
  const rows = await Promise.all(
    Object.entries(obj)
      .filter(([, v]) => !empty(v))
      .map(async ([k, v]) => [
        el("dt", { title: k }, words(k)),
        el("dd", {}, await value(v, words(k), depth)),
      ]),
  );
  return el("dl", { class: "result-record" }, rows);
}

/** The result `result` (any JSON value) in human form, then its JSON behind "Details"
 * (`jsonId` names the <pre>, for tests and links). Resolves one element. */
export async function resultView(result, { jsonId = null, id = null } = {}) {
  return el(
    "div",
    { class: "result-view", id },
    await value(result, "Result", 0),
    el(
      "details",
      { class: "result-details" },
      el("summary", {}, "Details (JSON)"),
      el("pre", { class: "text-view", id: jsonId, tabindex: "0" }, JSON.stringify(result, null, 2)),
    ),
  );
}
