// The parts both Compose surfaces are made of (compose.mjs: a project of this browser, and one
// of a remote environment): the packet's inputs, the mode radios the host's answer offers, the
// packet preview, and the layout that puts them side by side. What each surface asks the host
// (compose.packet / remote.compose), which modes it sends by and what it says after sending
// stay in compose.mjs; nothing here decides anything.

import { el, replace } from "../dom.mjs";
import { CAPABILITIES, LIMITS, SEATS } from "../contract.gen.mjs";
import { capabilityLabel, seatLabel, term, wordOption } from "./words.mjs";

/** A labelled field: `label` for `control` (whose id is `id`) and an optional hint, which the
 *  control names in its `aria-describedby` as `${id}-hint`. */
export function field(id, label, control, hint = null) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: id }, label),
    control,
    hint ? el("span", { class: "hint muted", id: `${id}-hint` }, hint) : null,
  );
}

/** The packet's inputs, mode box, preview lines and status region, with the ids every test and
 *  label refers to. `to` is the agent id to start with; `runnerPlaceholder` what an empty runner
 *  means on this surface. */
export function composeControls({ to, runnerPlaceholder }) {
  return {
    agentInput: el("input", {
      id: "compose-agent",
      type: "text",
      value: to ?? "hand-1",
      autocomplete: "off",
      spellcheck: "false",
      "aria-describedby": "compose-agent-hint",
    }),
    seatSelect: el(
      "select",
      { id: "compose-seat" },
      SEATS.map((s) => wordOption(s, seatLabel(s))),
    ),
    capSelect: el(
      "select",
      { id: "compose-capability" },
      CAPABILITIES.map((c) => wordOption(c, capabilityLabel(c))),
    ),
    runnerInput: el("input", {
      id: "compose-runner",
      type: "text",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: runnerPlaceholder,
      "aria-describedby": "compose-runner-hint",
    }),
    noteInput: el("textarea", {
      id: "compose-note",
      rows: "4",
      maxlength: String(LIMITS.note_chars),
    }),
    modeBox: el("fieldset", { class: "modes", id: "compose-modes" }, el("legend", {}, "Mode")),
    preview: el("pre", {
      id: "packet-preview",
      class: "text-view packet",
      tabindex: "0",
      role: "region",
      "aria-label": "Packet text",
    }),
    refLine: el("p", { class: "muted packet-line", id: "packet-ref" }),
    metaLine: el("p", { class: "muted packet-line", id: "packet-meta" }),
    status: el("div", {
      id: "compose-status",
      role: "status",
      "aria-live": "polite",
      class: "compose-status",
    }),
  };
}

/** Draw the host's `modes` (`{mode, available, reason}`) as radios in `modeBox`, `chosen`
 *  checked; an unavailable mode is disabled and says the host's reason. `onChoose(mode)` runs
 *  when the person picks one. */
export function drawModes(modeBox, modes, chosen, onChoose) {
  replace(
    modeBox,
    el("legend", {}, "Mode"),
    modes.map((m) => {
      const id = `mode-${m.mode}`;
      const reasonId = `${id}-reason`;
      return el(
        "div",
        { class: `mode${m.available ? "" : " unavailable"}` },
        el("input", {
          type: "radio",
          name: "compose-mode",
          id,
          value: m.mode,
          disabled: !m.available,
          checked: chosen === m.mode,
          "aria-describedby": m.reason ? reasonId : null,
          onchange: () => onChoose(m.mode),
        }),
        el("label", { for: id }, m.mode),
        m.reason ? el("span", { class: "mode-reason muted", id: reasonId }, m.reason) : null,
      );
    }),
  );
}

/** The form beside the packet preview: the block, agent, seat and capability, runner (with
 *  `runnerHint`) and note fields, the modes, `send`, the status and `after` (what a surface
 *  adds under its status); `agentCheck` goes right under the agent field. */
export function composeLayout(c, { blockSelect, runnerHint, send, agentCheck = null, after = [] }) {
  return el(
    "div",
    { class: "compose-layout" },
    el(
      "div",
      { class: "compose-form", role: "group", "aria-label": "Packet inputs" },
      field("compose-block", "Block", blockSelect),
      field("compose-agent", "Agent id", c.agentInput, "Letters, digits and . _ : @ - (up to 64)."),
      agentCheck,
      el(
        "div",
        { class: "field-row" },
        field("compose-seat", term("seat"), c.seatSelect),
        field("compose-capability", term("capability"), c.capSelect),
      ),
      field("compose-runner", "Runner id (optional)", c.runnerInput, runnerHint),
      field("compose-note", "What you ask of the agent", c.noteInput),
      c.modeBox,
      el("div", { class: "toolbar" }, send),
      c.status,
      ...after,
    ),
    el(
      "section",
      { class: "compose-preview", "aria-label": "Packet preview" },
      el("h3", {}, "Packet"),
      c.refLine,
      c.metaLine,
      c.preview,
    ),
  );
}

/** Draft again when the person changes a choice (at once) or types (250 ms after the last key,
 *  so a sentence is one host call, not one per key). */
export function draftOnChange(draft, { choices, typed }) {
  let timer = null;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(draft, 250);
  };
  for (const control of choices) control.addEventListener("change", draft);
  for (const control of typed) control.addEventListener("input", soon);
}
