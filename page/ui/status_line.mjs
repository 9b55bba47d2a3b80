// The Files surface's status line and upload bar, which never outlive what they say (issue 33
// item 9; docs/ui.md, "Status lines"): a line is replaced by the next act's, cleared when an
// act starts (a new file, an upload, a move, another file opened), and a success line clears
// itself after SUCCESS_MS. A line that needs the person (a refusal's reason, an Undo) stays
// until the next act, or LASTING_MS. A line `kept` (an upload's summary, issue 34: it was gone
// before the person had read what was written) stays until the next act replaces it or the
// person closes it (its Close button). The upload bar goes when its summary is said (files.mjs
// upload), and with its line if that is cleared first.

import { el, replace } from "../dom.mjs";

/** How long a success line stays (ms). */
export const SUCCESS_MS = 8000;
/** How long a line with an action (Undo) or a reason stays at most (ms). */
export const LASTING_MS = 60000;

export class StatusLine {
  /** `line`: the status element (role=status); `bar`: the upload progress box, or null. */
  constructor(line, bar = null) {
    this.line = line;
    this.bar = bar;
    this.timer = null;
  }

  /** Show `parts` (text or nodes); `lasting`: it needs the person (stays longer); `kept`: it
   * stays until the next act or the person closes it (no timer). */
  say(parts, { lasting = false, kept = false } = {}) {
    clearTimeout(this.timer);
    this.timer = null;
    if (kept) {
      const close = el(
        "button",
        { type: "button", class: "status-close", "aria-label": "Close this message" },
        "×",
      );
      close.addEventListener("click", () => this.clear());
      replace(this.line, el("span", { class: "status-text" }, parts), " ", close);
      this.line.dataset.kind = "kept";
      return;
    }
    replace(this.line, parts);
    this.line.dataset.kind = lasting ? "lasting" : "success";
    this.timer = setTimeout(() => this.clear(), lasting ? LASTING_MS : SUCCESS_MS);
  }

  /** An act starts, or what the line said changed: the line and the upload bar go. */
  clear() {
    clearTimeout(this.timer);
    this.timer = null;
    replace(this.line);
    delete this.line.dataset.kind;
    if (this.bar) {
      this.bar.hidden = true;
      replace(this.bar);
    }
  }

  destroy() {
    clearTimeout(this.timer);
  }
}
