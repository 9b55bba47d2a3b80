// Help and the first-run guide (issue 33 item 7; docs/ui.md, "Help and the words").
//
// The guide is a short panel below the surface: what the product is for and where to start,
// one button per step (it opens that surface). Below, because the host's answer comes after
// Ready (`help.guide` is a late operation, and the first draw must not wait for it): drawn
// above, its arrival pushed the Projects form down; below, it moves nothing already drawn.
// Closing it is remembered by the host (`help.guide`, in ui-state.json like the tray's
// state), never by the page; Help shows it again. Where it is drawn is the host's answer too
// (`shown_on`, core/host/help_ops.py guide_surfaces): every surface before the first project,
// then Projects only — never furniture over a person's work (the fresh tester's tryout).
// Opened from Help, it shows on the surface where the person asked for it until they move on.
// Help (the topbar button, or F1) is a dialog: the guide's switch, the glossary and the
// keyboard shortcuts. Every word comes from core (contract.gen.mjs GUIDE, GLOSSARY); the only
// list kept here is the page's own keys, which the page itself defines.

import { el, replace } from "../dom.mjs";
import { GLOSSARY, GUIDE } from "../contract.gen.mjs";
import { showNotice, showRefusal } from "./alerts.mjs";

/** The page's keyboard shortcuts: [keys, what they do, where]. */
export const SHORTCUTS = [
  ["F1", "Open this Help", "everywhere"],
  ["Escape", "Close a dialog or a menu; collapse the missions tray", "everywhere"],
  ["Ctrl/⌘ + S", "Save the open file", "Files, the editor"],
  ["Ctrl/⌘ + Enter", "Run the open Python file", "Files, the editor"],
  ["Ctrl/⌘ + Shift + F", "Search in the project's files", "Files"],
  ["Ctrl/⌘ + P", "Open a file by its name", "Files"],
  ["Ctrl + C", "Stop the running Python", "Files, the console"],
  ["↑ ↓ Home End", "Move in the file tree", "Files, the tree"],
  ["→ ←", "Open or close a folder", "Files, the tree"],
  ["Enter", "Open the file or folder", "Files, the tree"],
  ["Space", "Select or unselect", "Files, the tree"],
  ["F2", "Rename", "Files, the tree"],
  ["Delete", "Move to the trash", "Files, the tree"],
  ["Shift + F10, Menu key", "Open the row's menu", "Files, the tree"],
  ["Ctrl/⌘ + A", "Select every row shown", "Files, the tree"],
  ["Ctrl/⌘ + X, then Ctrl/⌘ + V", "Move the selection into a folder", "Files, the tree"],
];

export class Help {
  /** `guide`: the section the guide is drawn in; `opener`: the topbar's Help button. */
  constructor(app, guide, opener) {
    this.app = app;
    this.guide = guide;
    this.opener = opener;
    this.shown = false;
    /** The host's last answer: {dismissed, shown_on} (null before it answered). */
    this.state = null;
    /** The surface Help reopened the guide on: it shows there until the person moves on. */
    this.askedOn = null;
    /** True once the host said whether the guide was closed (tests wait for it). */
    this.answered = false;
    guide.hidden = true;
    opener.addEventListener("click", () => this.open());
    addEventListener("keydown", (event) => {
      if (event.key === "F1" && !event.ctrlKey && !event.metaKey && !event.altKey) {
        event.preventDefault();
        if (!document.querySelector("dialog[open]")) this.open();
      }
    });
  }

  /** Ask the host whether, and where, the guide is shown (at boot, and when projects were
   * created or deleted in any tab); draw it for the surface on screen. */
  async start() {
    try {
      const { result } = await this.app.host.call("help.guide", {});
      this.state = result;
    } catch {
      this.state = null; // a host that cannot say: the page works without the guide
    }
    this.follow();
    this.answered = true;
  }

  /** The surface on screen changed (or the host's answer did): draw the guide if it belongs
   * there. */
  follow() {
    const surface = this.app.surface;
    if (this.askedOn !== null && this.askedOn !== surface) this.askedOn = null;
    const here = Boolean(this.state && this.state.shown_on.includes(surface));
    const show = Boolean(this.state && !this.state.dismissed && (here || this.askedOn !== null));
    if (show !== this.shown || (show && !this.guide.firstChild)) this.draw(show);
  }

  draw(show) {
    this.shown = show;
    this.guide.hidden = !show;
    if (!show) {
      this.guide.replaceChildren();
      return;
    }
    replace(
      this.guide,
      el(
        "div",
        { class: "guide-head" },
        el("h2", { id: "guide-title" }, "Getting started"),
        el(
          "button",
          {
            type: "button",
            id: "guide-close",
            class: "subtle",
            "aria-label": "Close the getting-started guide",
            onclick: () => this.setDismissed(true),
          },
          "Close",
        ),
      ),
      el("p", { class: "guide-purpose" }, GUIDE.purpose),
      el(
        "ol",
        { class: "guide-steps" },
        GUIDE.steps.map((step, i) =>
          el(
            "li",
            { "data-surface": step.surface },
            el(
              "button",
              {
                type: "button",
                class: "link guide-step",
                id: `guide-step-${i + 1}`,
                onclick: () => this.app.navigate(step.surface),
              },
              step.title,
            ),
            el("span", { class: "muted" }, ` — ${step.text}`),
          ),
        ),
      ),
    );
  }

  /** Close (true) or show again (false) the guide; the host remembers it. */
  async setDismissed(dismissed) {
    try {
      const { result } = await this.app.host.call("help.guide", { dismissed });
      this.state = result;
      this.askedOn = result.dismissed ? null : this.app.surface; // asked for here: shown here
      this.follow();
      if (result.dismissed) {
        showNotice("Guide closed. Help (top right, or F1) shows it again.");
        this.opener.focus();
      } else {
        this.guide.querySelector("#guide-title")?.setAttribute("tabindex", "-1");
        this.guide.querySelector("#guide-title")?.focus();
      }
    } catch (err) {
      showRefusal(err, dismissed ? "Closing the guide" : "Showing the guide");
    }
  }

  /** The Help dialog: the guide's switch, the glossary, the shortcuts. */
  open() {
    const dialog = el(
      "dialog",
      { class: "dialog help-dialog", id: "help-dialog", "aria-labelledby": "help-title" },
      el(
        "div",
        { class: "help-head" },
        el("h2", { id: "help-title" }, "Help"),
        el("button", { type: "button", id: "help-close", onclick: () => dialog.close() }, "Close"),
      ),
      el(
        "section",
        { "aria-labelledby": "help-start" },
        el("h3", { id: "help-start" }, "Getting started"),
        el("p", {}, GUIDE.purpose),
        el(
          "button",
          {
            type: "button",
            id: "guide-reopen",
            disabled: this.shown,
            onclick: async () => {
              dialog.close();
              await this.setDismissed(false);
            },
          },
          this.shown ? "The guide is shown below the surface" : "Show the getting-started guide",
        ),
      ),
      el(
        "section",
        { "aria-labelledby": "help-words" },
        el("h3", { id: "help-words" }, "Words"),
        el(
          "dl",
          { class: "glossary", id: "glossary" },
          Object.entries(GLOSSARY).map(([id, t]) => [
            el("dt", { "data-term": id }, t.label, " ", el("code", { class: "muted" }, id)),
            el("dd", {}, t.meaning),
          ]),
        ),
      ),
      el(
        "section",
        { "aria-labelledby": "help-keys" },
        el("h3", { id: "help-keys" }, "Keyboard shortcuts"),
        el(
          "div",
          { class: "table-box" },
          el(
            "table",
            { class: "table", id: "shortcuts" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ["Keys", "Does", "Where"].map((h) => el("th", { scope: "col" }, h)),
              ),
            ),
            el(
              "tbody",
              {},
              SHORTCUTS.map(([keys, does, where]) =>
                el(
                  "tr",
                  {},
                  el("td", { class: "nowrap" }, el("kbd", {}, keys)),
                  el("td", {}, does),
                  el("td", {}, where),
                ),
              ),
            ),
          ),
        ),
      ),
    );
    const opener = document.activeElement;
    dialog.addEventListener(
      "close",
      () => {
        dialog.remove();
        if (opener?.isConnected && typeof opener.focus === "function") opener.focus();
      },
      { once: true },
    );
    document.body.appendChild(dialog);
    dialog.showModal();
  }
}
