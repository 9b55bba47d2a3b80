// The full text of a truncated name, on keyboard focus (docs/ui.md, "Layout"). A name that
// does not fit its box ends in an ellipsis (page/dom.mjs `name`); a mouse gets the whole text
// from its `title`. When the control holding such a name gets keyboard focus, this shows the
// same text in a tooltip under it, for as long as it keeps focus. Visual only (aria-hidden):
// the element's own text is already the whole name, so assistive technology reads all of it.

let tip = null;

function overflowing(node) {
  return node.scrollWidth > node.clientWidth + 1;
}

function hide() {
  if (tip) tip.hidden = true;
}

function show(target) {
  if (!(target instanceof Element)) {
    hide();
    return;
  }
  // its own name: the first one inside it (a folder's row comes before its children)
  const cut = target.classList.contains("trunc") ? target : target.querySelector(".trunc");
  if (!cut || !overflowing(cut) || !target.matches(":focus-visible")) {
    hide();
    return;
  }
  tip.textContent = cut.textContent;
  tip.hidden = false;
  const box = target.getBoundingClientRect();
  const width = Math.min(tip.offsetWidth, innerWidth - 16);
  tip.style.left = `${Math.max(8, Math.min(box.left, innerWidth - width - 8))}px`;
  const below = box.bottom + 6;
  tip.style.top = `${below + tip.offsetHeight > innerHeight ? Math.max(8, box.top - tip.offsetHeight - 6) : below}px`;
}

/** Start showing focus tooltips (once, at start-up). */
export function startFocusTooltips() {
  if (tip) return;
  tip = document.createElement("div");
  tip.id = "focus-tip";
  tip.className = "focus-tip";
  tip.setAttribute("aria-hidden", "true");
  tip.hidden = true;
  document.body.appendChild(tip);
  document.addEventListener("focusin", (event) => show(event.target));
  document.addEventListener("focusout", hide);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") hide();
  });
  addEventListener("scroll", hide, true);
}
