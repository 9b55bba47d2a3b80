// Forms check a value as it is typed, from core's own rules (issue 17 item 5): FORM_RULES in
// the generated contract module holds each argument's JSON Schema rules and, per rule, the
// very sentence the host's refusal says. No rule is written here; the host still decides.

import { el, replace } from "../dom.mjs";
import { FORM_RULES } from "../contract.gen.mjs";
import { refusalParts } from "./alerts.mjs";

/** The sentence for the first rule `value` breaks (a string as typed), or "" when it keeps
 * them all. Numbers are read as the host would read them. */
export function brokenRule(op, field, value) {
  const rules = FORM_RULES[op]?.[field];
  if (!rules) return "";
  const says = rules.says;
  if (value === "") return rules.required ? (says.required ?? "") : "";
  if (rules.type === "integer") {
    const n = Number(value);
    if (!Number.isInteger(n)) return says.type;
    if (rules.minimum !== undefined && n < rules.minimum) return says.minimum;
    if (rules.maximum !== undefined && n > rules.maximum) return says.maximum;
    return "";
  }
  if (rules.enum && !rules.enum.includes(value)) return says.enum;
  const length = [...value].length;
  if (rules.minLength !== undefined && length < rules.minLength) return says.minLength;
  if (rules.maxLength !== undefined && length > rules.maxLength) return says.maxLength;
  if (rules.pattern !== undefined && !new RegExp(rules.pattern, "u").test(value))
    return says.pattern;
  // rules core checks past the schema: a value a pattern finds is refused with its sentence
  for (const refused of rules.refuse ?? [])
    if (new RegExp(refused.pattern, "u").test(value)) return refused.says;
  return "";
}

/** Check `input` against `op`'s `field` as it is typed: the sentence shows under it (a live
 * region the input is described by), `aria-invalid` and the input's validity follow. An empty
 * field says nothing until the form is submitted. Returns the node to place after the input. */
export function checkAsTyped(input, op, field, { transform = (v) => v } = {}) {
  const id = `${input.id}-rule`;
  const said = el("p", { class: "field-rule", id, "aria-live": "polite" });
  const described = input.getAttribute("aria-describedby");
  input.setAttribute("aria-describedby", described ? `${described} ${id}` : id);
  const check = (quietWhenEmpty) => {
    const value = transform(input.value);
    const broken = quietWhenEmpty && value === "" ? "" : brokenRule(op, field, value);
    said.textContent = broken;
    input.setCustomValidity(broken);
    if (broken) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  };
  input.addEventListener("input", () => check(true));
  input.addEventListener("invalid", () => check(false));
  return said;
}

/** The host refused what `input` (a field set up by `checkAsTyped`) holds: its sentence and
 * code show under the field — where the person looks, not in the alerts region above the page
 * (issue 34) — the field is marked invalid and takes the focus. The next keystroke checks
 * again. */
export function refusedAt(input, refusal) {
  const said = document.getElementById(`${input.id}-rule`);
  if (said) replace(said, refusalParts(refusal, { fallback: "internal-error" }));
  input.setAttribute("aria-invalid", "true");
  input.focus();
}
