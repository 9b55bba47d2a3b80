// A context menu (docs/ui.md, "The file explorer"): opened by a right click, Shift+F10 or the
// Menu key; ArrowUp/ArrowDown (and Home/End) move, Enter or Space acts, Escape or Tab closes,
// and focus goes back where it was. An item that cannot act now stays in the menu, marked
// aria-disabled, with the reason as its tooltip and beside its label.

import { el } from "../dom.mjs";

let current = null;

/** Close the open menu, if any (focus returns to its opener unless `refocus` is false). */
export function closeMenu({ refocus = true } = {}) {
  if (!current) return;
  const { node, opener, outside } = current;
  current = null;
  node.remove();
  document.removeEventListener("pointerdown", outside, true);
  if (refocus && opener?.isConnected) opener.focus();
}

/**
 * Open a menu at viewport point (x, y). `items`: [{label, run(), shortcut?, disabled?
 * (a reason string), danger?} | "-" (a separator)]; `label` names the menu.
 */
export function openMenu({ x, y, items, label, opener = document.activeElement }) {
  closeMenu({ refocus: false });
  const buttons = [];
  const node = el(
    "div",
    { class: "menu", role: "menu", "aria-label": label, id: "context-menu" },
    items.map((item) => {
      if (item === "-") return el("div", { class: "menu-sep", role: "separator" });
      const reason = item.disabled || null;
      const button = el(
        "button",
        {
          type: "button",
          role: "menuitem",
          tabindex: "-1",
          class: `menu-item${item.danger ? " danger" : ""}`,
          "aria-disabled": reason ? "true" : null,
          title: reason,
          "data-action": item.id ?? null,
          onclick: () => {
            if (reason) return;
            closeMenu({ refocus: true });
            item.run();
          },
        },
        el("span", { class: "menu-label" }, item.label),
        item.shortcut
          ? el("kbd", { class: "menu-key", "aria-hidden": "true" }, item.shortcut)
          : null,
      );
      if (item.shortcut) button.setAttribute("aria-keyshortcuts", item.shortcut.replace(/\s/g, ""));
      buttons.push(button);
      return button;
    }),
  );
  node.addEventListener("keydown", (event) => {
    const i = buttons.indexOf(document.activeElement);
    const move = (to) => {
      event.preventDefault();
      buttons[(to + buttons.length) % buttons.length]?.focus();
    };
    if (event.key === "ArrowDown") move(i + 1);
    else if (event.key === "ArrowUp") move(i - 1);
    else if (event.key === "Home") move(0);
    else if (event.key === "End") move(buttons.length - 1);
    else if (event.key === "Escape" || event.key === "Tab") {
      event.preventDefault();
      event.stopPropagation();
      closeMenu();
    } else if (event.key === " ") {
      event.preventDefault();
      document.activeElement?.click();
    }
  });
  const outside = (event) => {
    if (!node.contains(event.target)) closeMenu({ refocus: false });
  };
  document.addEventListener("pointerdown", outside, true);
  document.body.appendChild(node);
  current = { node, opener, outside };
  const box = node.getBoundingClientRect();
  node.style.left = `${Math.max(4, Math.min(x, innerWidth - box.width - 4))}px`;
  node.style.top = `${Math.max(4, Math.min(y, innerHeight - box.height - 4))}px`;
  (buttons.find((b) => !b.hasAttribute("aria-disabled")) ?? buttons[0])?.focus();
  return node;
}
