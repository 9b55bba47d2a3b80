// Plain words for the host's raw ids (issue 33 item 7): a phase, a seat, a capability, a term
// such as "ratify" or "boundary" is shown as the short label core gives it (core/missions/words.py,
// core/missions/letters.py PHASE_LABELS, generated into contract.gen.mjs), with the raw id
// and its meaning in the tooltip. No word is kept here: an id core has no word for shows as
// itself.

import { el } from "../dom.mjs";
import {
  CAPABILITY_LABELS,
  GLOSSARY,
  PHASE_LABELS,
  PHASE_MEANINGS,
  SEAT_LABELS,
} from "../contract.gen.mjs";

/** The plain label of `phase` (its id when core has none). */
export function phaseLabel(phase) {
  return PHASE_LABELS[phase] ?? phase;
}

/** The tooltip of `phase`: its raw id and what it means. */
export function phaseTitle(phase) {
  return PHASE_MEANINGS[phase] ? `${phase} — ${PHASE_MEANINGS[phase]}` : phase;
}

/** A phase badge: the plain label, the raw id in `title` and `data-raw`. */
export function phaseBadge(phase) {
  return el(
    "span",
    { class: `phase-badge phase-${phase}`, "data-raw": phase, title: phaseTitle(phase) },
    phaseLabel(phase),
  );
}

/** `term` (a GLOSSARY id) as its plain label — or `text` — with the raw id and meaning as
 * the tooltip. */
export function term(id, text = null) {
  const entry = GLOSSARY[id];
  return el(
    "span",
    { class: "term", "data-term": id, title: entry ? `${id} — ${entry.meaning}` : id },
    text ?? entry?.label ?? id,
  );
}

/** The plain word of a seat (`hand`, `oracle`). */
export function seatLabel(seat) {
  return SEAT_LABELS[seat] ?? seat;
}

/** The plain word of a runner capability (`build-runner`, …). */
export function capabilityLabel(capability) {
  return CAPABILITY_LABELS[capability] ?? capability;
}

/** "Doer · Builder" for a letter's seat and capability, raw ids in the tooltips. */
export function seatAndCapability(seat, capability) {
  return [
    el("span", { class: "seat", "data-raw": seat, title: `seat: ${seat}` }, seatLabel(seat)),
    " · ",
    el(
      "span",
      { class: "capability", "data-raw": capability, title: `capability: ${capability}` },
      capabilityLabel(capability),
    ),
  ];
}

/** An <option> for a seat or capability select: the plain word, the raw id as value and title. */
export function wordOption(value, label, attrs = {}) {
  return el(
    "option",
    { value, title: value, ...attrs },
    label === value ? value : `${label} (${value})`,
  );
}
