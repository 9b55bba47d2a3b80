// The only way this page builds DOM: createElement, createTextNode, setAttribute, textContent.
// Strings are always text, never markup — a file called <img src=x onerror=…> shows as those
// characters.

/**
 * el("button", {class: "primary", onclick: fn, "aria-label": "Save"}, "Save")
 * Attribute values are set with setAttribute; keys starting with "on" attach listeners;
 * `hidden`/`disabled`/`checked`/`value` are set as properties. Children may be nodes,
 * strings, numbers, arrays or null/false (skipped).
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function")
      node.addEventListener(key.slice(2), value);
    else if (
      key === "hidden" ||
      key === "disabled" ||
      key === "checked" ||
      key === "value" ||
      key === "indeterminate"
    )
      node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

export function formatBytes(n) {
  if (n == null) return "";
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB"];
  let value = n / 1024;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[i]}`;
}

export function formatTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

/** A span of text that came from outside (a name, a gist, an agent id), isolated for bidi so
 * an RTL override inside it cannot reorder the text around it. Always text, never markup. */
export function literal(text, attrs = {}) {
  return flagHidden(el("bdi", { class: "literal", ...attrs }, String(text ?? "")));
}

/** A name that came from outside (a project, block, file, folder, agent or environment name):
 * like `literal`, but on one line — it truncates with an ellipsis where its box ends, never
 * wrapping letter by letter, and its full text is the tooltip (on hover: `title`; on keyboard
 * focus of the control holding it: page/ui/tooltip.mjs). The element's text is always the
 * whole string, so screen readers and copy get all of it. `tag`: a control whose whole text
 * is the name (a button) can be the truncating element itself. */
export function name(text, attrs = {}, tag = "bdi") {
  const full = String(text ?? "");
  const node = flagHidden(
    el(tag, { ...attrs, class: `${attrs.class ?? ""} literal trunc`.trim() }, full),
  );
  node.title = node.title ? `${full}\n${node.title}` : full;
  return node;
}

/** A table inside its own scrolling box, so a wide table scrolls there and never pushes the
 * page sideways. `focusable`: the box takes a Tab stop, for tables without controls of their
 * own (a keyboard can then scroll it). */
export function tableBox(table, { label = null, focusable = false } = {}) {
  return el(
    "div",
    {
      class: "table-box",
      role: focusable ? "region" : null,
      "aria-label": focusable ? label : null,
      tabindex: focusable ? "0" : null,
    },
    table,
  );
}

/** Flag `node` (an element whose whole text came from outside, e.g. a button or heading
 * showing a name) as `literal` does, when its text holds invisible or direction-changing
 * characters. Returns `node`. */
export function flagHidden(node) {
  const hidden = [...new Set(node.textContent.match(HIDDEN_CHARS) ?? [])];
  if (hidden.length) {
    // Shown as they are (never stripped), but flagged: the mark is CSS-generated, so the
    // element's text stays exactly the string.
    node.classList.add("has-hidden-chars");
    const warning = `Contains invisible or direction-changing characters: ${hidden.map((c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`).join(", ")}`;
    node.title = node.title ? `${node.title}\n${warning}` : warning;
  }
  return node;
}

const HIDDEN_CHARS = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;

/** "45s", "12m", "3h 12m", "2d 4h" for a duration in milliseconds (negative reads as 0). */
export function formatDuration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Save `blob` as a download named `name` (a temporary object URL, revoked after). */
export function downloadBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = el("a", { href: url, download: name, hidden: true });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
