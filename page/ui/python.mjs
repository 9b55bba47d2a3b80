// Running the project's Python (issue 32; docs/python.md): the runtime frame's introduction,
// and the Run / Stop / output / console panel of an open .py file. Thin: the host decides
// everything (what is copied in, which changes are applied, the receipts); this module sends
// the person's gestures and shows what comes back — output as text nodes only, never markup.

import { el, replace } from "../dom.mjs";
import { opaqueFrame } from "../frames.mjs";
import { refusalParts, showRefusal } from "./alerts.mjs";

/** Keep at most this many characters of output on screen (the oldest go first). */
const SHOWN_CHARS = 2_000_000;

/** Make the runtime's frame — an opaque origin with its own CSP (connect-src 'none'), made by
 * frames.mjs (which also lets it load offline) — and hand the host worker one end of a channel
 * to it. The page only makes the introduction; it never talks to the runtime itself. `take`
 * false (a file opened, not a Run): the host keeps a runtime another tab connected, and the
 * frame is removed again — resolves null then (core PythonConnectArgs). */
export async function connectRuntime(host, take = true) {
  const frame = await opaqueFrame("runtime/python.html", "Python runtime (no network, no storage)");
  const channel = new MessageChannel();
  frame.contentWindow.postMessage({ type: "voicebox-runtime-connect" }, "*", [channel.port2]);
  const { result } = await host.call("python.connect", { take }, { attachment: channel.port1 });
  if (result.connected) return frame;
  frame.remove();
  return null;
}

export const isPython = (name) => name.toLowerCase().endsWith(".py");

let active = null; // the panel on screen; output events of its runs are shown there
let listening = null;

function listen(host) {
  if (listening === host) return;
  listening = host;
  host.addEventListener("event", (event) => {
    const e = event.detail;
    if (e?.type === "python.output" && active && e.run === active.runId)
      active.write(e.stream, e.text);
    else if (e?.type === "python.input" && active && e.run === active.runId) active.ask(e.prompt);
  });
}

export class PythonPanel {
  /** opts: {app, call(op, args, options), path, beforeRun() → "saved" | "clean" | "refused",
   * onChanged()} */
  constructor({ app, call, path, beforeRun, onChanged }) {
    this.app = app;
    this.call = call;
    this.path = path;
    this.beforeRun = beforeRun;
    this.onChanged = onChanged;
    this.runId = null;
    this.shown = 0;
    this.seq = 0;
    this.history = [];
    this.back = 0;
    this.said = ""; // words about the run's start kept first in the status line (the save)
    this.saying = ""; // what the status line says while the run goes (after `said`)
    listen(app.host);
    active = this;
    // Python loads while the person reads (its frame first, once); a failure is said by Run
    app
      .python(false)
      .then((ours) => ours && app.host.call("python.warm"))
      .catch(() => {});
    this.runButton = el(
      "button",
      {
        type: "button",
        id: "python-run",
        class: "primary",
        "aria-keyshortcuts": "Control+Enter Meta+Enter",
        title: "Run this file as __main__ (Ctrl/⌘+Enter)",
        onclick: () => this.run(),
      },
      "Run",
    );
    this.stopButton = el(
      "button",
      {
        type: "button",
        id: "python-stop",
        disabled: true,
        title: "Stop: end the run and restart Python",
        onclick: () => this.stop(),
      },
      "Stop",
    );
    this.buttons = [this.runButton, this.stopButton];
    this.status = el(
      "p",
      { id: "python-status", class: "muted", role: "status", "aria-live": "polite" },
      "Python runs in a sandboxed runtime of its own: no network, no storage; it sees copies of this project's files.",
    );
    this.output = el("pre", {
      id: "python-output",
      class: "python-output",
      tabindex: "0",
      role: "region", // a labelled <pre> needs a role (axe aria-prohibited-attr)
      "aria-label": "Python output",
    });
    this.changes = el("ul", { id: "python-changes", class: "python-changes" });
    this.input = el("textarea", {
      id: "python-console-input",
      rows: 2,
      spellcheck: "false",
      "aria-label": "Python console input",
      placeholder: ">>> Enter runs, Shift+Enter adds a line, ↑/↓ history",
      onkeydown: (e) => this.#consoleKeys(e),
    });
    this.node = el(
      "section",
      { class: "python-panel", id: "python-panel", "aria-label": "Python" },
      el("h4", {}, "Output"),
      this.status,
      this.output,
      this.changes,
      el(
        "div",
        { class: "python-console" },
        el("label", { for: "python-console-input" }, "Console"),
        this.input,
        el(
          "button",
          { type: "button", id: "python-console-send", onclick: () => this.evaluate() },
          "Send",
        ),
        el(
          "button",
          { type: "button", id: "python-restart", onclick: () => this.stop({ restart: true }) },
          "Restart Python",
        ),
      ),
    );
  }

  /** Ctrl/⌘+Enter in `node` (the editor) runs the file, before the editor sees the key. */
  bindKeys(node) {
    node?.addEventListener(
      "keydown",
      (event) => {
        if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
          event.preventDefault();
          event.stopPropagation();
          this.run();
        }
      },
      true,
    );
  }

  write(stream, text) {
    this.output.appendChild(
      el(
        "span",
        { class: `python-${stream === "stderr" || stream === "input" ? stream : "stdout"}` },
        text,
      ),
    );
    this.shown += text.length;
    while (this.shown > SHOWN_CHARS && this.output.firstChild) {
      this.shown -= this.output.firstChild.textContent.length;
      this.output.firstChild.remove();
    }
    this.output.scrollTop = this.output.scrollHeight;
  }

  /** The run waits in input(): a line field under the output; Enter sends it. */
  ask(prompt) {
    this.stdin?.remove();
    const field = el("input", {
      type: "text",
      id: "python-stdin",
      class: "python-stdin",
      autocomplete: "off",
      spellcheck: "false",
      "aria-label": prompt ? `Input for Python: ${prompt}` : "Input for Python",
    });
    const send = async () => {
      const text = field.value;
      row.remove();
      this.stdin = null;
      this.write("input", `${text}\n`);
      if (this.runId) this.status.textContent = `${this.said}${this.saying}`;
      try {
        await this.app.host.call("python.input", { text }, { human: true });
      } catch (err) {
        showRefusal(err, "Sending input to Python");
      }
    };
    field.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        send();
      }
    });
    const row = el(
      "div",
      { class: "python-stdin-row" },
      el("label", { for: "python-stdin" }, "input()"),
      field,
      el("button", { type: "button", id: "python-stdin-send", onclick: send }, "Send"),
    );
    this.stdin = row;
    this.output.after(row);
    // the save before the run stays said, first (issue 34: input() replaced "Saved x.py first.")
    this.status.textContent = `${this.said}Python waits for your input (type a line, then Enter).`;
    field.focus();
  }

  #running(on) {
    if (!on) {
      this.stdin?.remove();
      this.stdin = null;
    }
    this.runButton.disabled = on;
    this.stopButton.disabled = !on;
  }

  /** Run the file as stored. `beforeRun()` saves unsaved edits first and answers "saved",
   * "clean" or "refused": a save is said in the status line while and after the file runs
   * ("Saved x.py first. …"; issue 34: Ctrl+Enter saved silently); a refused save runs nothing. */
  async run() {
    if (this.runId || this.saving) return;
    // a second Run while the first one's save is under way is not a second run (the fresh
    // tester's tryout, stop 42: it cleared the first run's output and was refused)
    this.saving = true;
    this.runButton.disabled = true;
    let before;
    try {
      before = (await this.beforeRun?.()) ?? "clean";
    } finally {
      this.saving = false;
      this.runButton.disabled = Boolean(this.runId);
    }
    if (before === "refused") {
      this.status.textContent = `Not run: ${this.path} could not be saved (the message above says why).`;
      return;
    }
    replace(this.output);
    replace(this.changes);
    this.shown = 0;
    this.#reveal();
    const saved = before === "saved" ? `Saved ${this.path} first. ` : "";
    await this.#go("python.run", { path: this.path }, `${saved}Running ${this.path}…`, saved);
  }

  /** The output and the code both in sight after Run, with no scrolling by the person (issue
   * 33, the fresh tester's tryouts: the output sat below the fold at 1280×800, then the docked
   * output covered every line of code). On a wide screen the panel docks at the foot of the
   * window (styles.css `.python-panel.docked`, sticky) and the window scrolls so that the
   * open file's name (the viewer's title row, #viewer-path-row, just above Run's row) is at its
   * top: the editor's lines fill the space between Run and the output, and the person still
   * sees which file ran (stop 44's tryout: with Run's row at the top the name was scrolled
   * away). On a narrow one (narrow.css: not docked) the name goes to the top too when the
   * output is then in view; else the output is scrolled into view, and the name row sticks
   * at the window's top meanwhile (narrow.css; stop 45's tryout: at 390 px it scrolled away).
   * Where it is already in view nothing moves. */
  #reveal() {
    this.node.classList.add("docked");
    const title = this.node.parentElement?.querySelector(":scope > #viewer-path-row");
    if (getComputedStyle(this.node).position === "sticky") {
      (title ?? this.runButton).scrollIntoView({ block: "start" });
      return;
    }
    const { top, bottom } = this.output.getBoundingClientRect();
    if (title && (top < 0 || bottom > innerHeight)) {
      // from the name to the foot of the output once it is as tall as it grows (max-height)
      const grown = top + (parseFloat(getComputedStyle(this.output).maxHeight) || bottom - top);
      if (grown - title.getBoundingClientRect().top <= innerHeight) {
        title.scrollIntoView({ block: "start" });
        return;
      }
    }
    // centred, so the lines that arrive below stay in sight as the output grows
    if (top < 0 || bottom > innerHeight) this.output.scrollIntoView({ block: "center" });
  }

  async evaluate() {
    const code = this.input.value;
    if (this.runId || this.saving || !code.trim()) return;
    this.history.push(code);
    this.back = 0;
    this.input.value = "";
    this.write("input", `>>> ${code.replace(/\n/g, "\n... ")}\n`);
    await this.#go("python.eval", { code }, "Running console input…");
  }

  /** `said`: words kept before the run's ending in the status line (the save before it). */
  async #go(op, args, saying, said = "") {
    const run = `r${Date.now().toString(36)}${++this.seq}`;
    this.runId = run;
    active = this;
    this.said = said;
    this.saying = saying.slice(said.length);
    this.#running(true);
    this.status.textContent = saying;
    const started = performance.now();
    try {
      await this.app.python(); // the frame, once (a failure is said below)
      const { result } = await this.call(op, { ...args, run }, { human: true });
      this.#finished(result, performance.now() - started, op === "python.eval");
      if (said) this.status.textContent = said + this.status.textContent;
    } catch (err) {
      this.status.textContent = `${said}Not run: ${err?.message ?? err}`;
      showRefusal(err, op === "python.run" ? `Running ${this.path}` : "Running console input");
    } finally {
      if (this.runId === run) this.runId = null;
      this.#running(false);
    }
  }

  #finished(result, wallMs, console) {
    const took = `${result.duration_ms} ms in Python, ${Math.round(wallMs)} ms in all`;
    if (result.stopped_by === "another-tab")
      // issue 33 item 2: one runtime per host, in the tab that ran last; said so, and how back
      this.status.textContent = `Stopped after ${took}: Python was taken by another tab, which ran code there. Run again here to take it back (the console's variables are gone).`;
    else if (result.stopped)
      this.status.textContent = `Stopped after ${took}. Python was restarted: the console's variables are gone.`;
    else if (result.timed_out)
      this.status.textContent = `Ended at the time limit: Python was restarted (${took}).`;
    else this.status.textContent = `Exited with status ${result.exit_status} (${took}).`;
    this.status.dataset.exit = String(result.exit_status);
    if (result.output_dropped)
      this.write("stderr", `\n[${result.output_dropped} more bytes of output were dropped]\n`);
    const changed = result.changes.map((c) =>
      el(
        "li",
        { class: c.applied ? "python-change" : "python-change refused", "data-path": c.path },
        el("code", {}, c.action),
        " ",
        el("bdi", {}, c.path),
        " — ",
        c.applied
          ? c.action === "deleted"
            ? "moved to the trash"
            : [
                "written; receipt ",
                el("code", { class: "hash" }, `${c.sha256.slice(0, 16)}…`),
                c.store_version === null ? "" : ` (store version ${c.store_version})`,
              ]
          : ["refused: ", refusalParts(c)],
      ),
    );
    // what was not copied in is said apart from the changes, never listed as one of them
    const items = result.left_out_note
      ? [el("li", { class: "muted python-left-out" }, result.left_out_note)]
      : [];
    if (changed.length)
      items.push(
        el(
          "li",
          { class: "muted" },
          console ? "Files changed by the console input:" : "Files changed by the run:",
        ),
        ...changed,
      );
    // a console input that changed no file keeps the last run's list on screen
    if (items.length || !console) replace(this.changes, items.length ? items : null);
    if (result.changes.some((c) => c.applied)) this.onChanged?.();
  }

  async stop({ restart = false } = {}) {
    this.status.textContent = restart ? "Restarting Python…" : "Stopping…";
    try {
      await this.app.host.call("python.stop");
      if (restart && !this.runId)
        this.status.textContent = "Python was restarted: the console starts empty.";
    } catch (err) {
      showRefusal(err, "Stopping Python");
    }
  }

  async #complete() {
    const at = this.input.selectionStart;
    const before = this.input.value.slice(0, at);
    const word = before.match(/[\w.]*$/)[0];
    let matches;
    try {
      matches = (await this.app.host.call("python.complete", { text: word })).result.matches;
    } catch {
      return; // no completion is no error
    }
    if (!matches.length) return;
    let common = matches[0];
    for (const m of matches) while (!m.startsWith(common)) common = common.slice(0, -1);
    if (common.length > word.length) {
      this.input.setRangeText(common.slice(word.length), at, at, "end");
    } else if (matches.length > 1) {
      this.write("input", `${matches.join("  ")}\n`);
    }
  }

  #consoleKeys(event) {
    if (
      event.ctrlKey &&
      event.key.toLowerCase() === "c" &&
      this.runId &&
      this.input.selectionStart === this.input.selectionEnd
    ) {
      event.preventDefault(); // Ctrl+C with nothing selected: stop the run, as in a terminal
      this.stop();
    } else if (
      event.key === "Tab" &&
      !event.shiftKey &&
      /[\w.]$/.test(this.input.value.slice(0, this.input.selectionStart))
    ) {
      event.preventDefault(); // after a name: complete it (rlcompleter in the runtime)
      this.#complete();
    } else if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      this.evaluate();
    } else if (
      (event.key === "ArrowUp" || event.key === "ArrowDown") &&
      !this.input.value.includes("\n")
    ) {
      const step = event.key === "ArrowUp" ? 1 : -1;
      const at = Math.min(Math.max(this.back + step, 0), this.history.length);
      if (at === this.back) return;
      event.preventDefault();
      this.back = at;
      this.input.value = at === 0 ? "" : this.history[this.history.length - at];
    }
  }
}
