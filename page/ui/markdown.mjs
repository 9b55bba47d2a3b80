// Markdown as text nodes (issue 33 item 5; docs/plugins.md "Results in human form"): a
// plugin's Markdown is parsed by the pinned @lezer/markdown (CommonMark, bundled with the
// editor) into a syntax tree, and each node becomes an element built with el() — its text
// always a text node. No HTML is ever made from a string: raw HTML in the Markdown is shown
// as the characters it is, a link shows its text and its address as text (nothing to click),
// an image its description.

import { el } from "../dom.mjs";
import { loadEditor } from "./editor.mjs";

const MARKS = new Set([
  "EmphasisMark",
  "HeaderMark",
  "ListMark",
  "QuoteMark",
  "CodeMark",
  "CodeInfo",
  "LinkMark",
  "LinkTitle",
  "LinkLabel",
  "TaskMarker",
]);

function children(node) {
  const out = [];
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
}

// Inline content of `node`: the source between its children as text, each child rendered.
function inline(src, node, skip = MARKS) {
  const out = [];
  let at = node.from;
  for (const child of children(node)) {
    if (child.from > at) out.push(src.slice(at, child.from));
    at = Math.max(at, child.to);
    if (skip.has(child.name)) continue;
    out.push(span(src, child));
  }
  if (node.to > at) out.push(src.slice(at, node.to));
  return out;
}

function span(src, node) {
  switch (node.name) {
    case "Emphasis":
      return el("em", {}, inline(src, node));
    case "StrongEmphasis":
      return el("strong", {}, inline(src, node));
    case "Strikethrough":
      return el("s", {}, inline(src, node));
    case "InlineCode":
      return el("code", {}, inline(src, node));
    case "Escape":
      return src.slice(node.from + 1, node.to);
    case "HardBreak":
      return el("br");
    case "Link": {
      const url = node.getChild("URL");
      const text = inline(src, node, new Set([...MARKS, "URL"]));
      return el(
        "span",
        { class: "md-link" },
        text,
        url ? [" (", el("code", {}, src.slice(url.from, url.to)), ")"] : null,
      );
    }
    case "Image":
      return el(
        "span",
        { class: "md-image" },
        "[image: ",
        inline(src, node, new Set([...MARKS, "URL"])),
        "]",
      );
    default:
      return src.slice(node.from, node.to); // HTMLTag, Entity, Autolink, URL, …: as written
  }
}

function heading(node) {
  const m = /^(?:ATX|Setext)Heading(\d)$/.exec(node.name);
  return m ? Number(m[1]) : 0;
}

function block(src, node, top) {
  const level = heading(node);
  if (level) {
    const text = inline(src, node);
    if (typeof text[0] === "string") text[0] = text[0].trimStart();
    return el(`h${Math.min(6, top + level - 1)}`, { class: "md-heading" }, text);
  }
  switch (node.name) {
    case "Paragraph":
      return el("p", {}, inline(src, node));
    case "BulletList":
      return el("ul", {}, blocks(src, node, top));
    case "OrderedList":
      return el("ol", {}, blocks(src, node, top));
    case "ListItem":
      return el("li", {}, blocks(src, node, top));
    case "Blockquote":
      return el("blockquote", {}, blocks(src, node, top));
    case "HorizontalRule":
      return el("hr");
    case "FencedCode":
    case "CodeBlock": {
      const parts = node.getChildren("CodeText").map((t) => src.slice(t.from, t.to));
      return el(
        "pre",
        { class: "text-view" },
        el("code", {}, parts.length ? parts.join("\n") : src.slice(node.from, node.to)),
      );
    }
    default:
      return el("p", { class: "md-raw" }, src.slice(node.from, node.to)); // HTML blocks, link references, …: as written
  }
}

function blocks(src, node, top) {
  return children(node)
    .filter((c) => !MARKS.has(c.name))
    .map((c) => block(src, c, top));
}

/** `text` (Markdown) as a <div class="markdown"> of elements and text nodes. `top`: the
 * heading level a `#` heading gets (so the result sits under the heading it is shown in). */
export async function renderMarkdown(text, { top = 3 } = {}) {
  const { markdownParser } = await loadEditor();
  const tree = markdownParser.parse(text);
  return el("div", { class: "markdown" }, blocks(text, tree.topNode, top));
}
