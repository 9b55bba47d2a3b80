// Where the person is, in the URL (docs/ui.md, "Routing"): the surface, the open project and
// the surface's own place (on Files: the chosen folder and the open file) live in the URL's
// hash, so a reload restores them, Back and Forward move between them, and a copied link opens
// the same place. Only the hash changes: the page's path is never touched, so this works under
// any sub-path, from a folder of static files, and offline (the service worker ignores the
// hash). Presentation only: what the hash names is checked by the host when it is opened.
//
//   #/files?project=p_0123…&folder=src&file=src%2Fmain.py
//
// The first path segment is the surface id; every other key is a string parameter. Unknown
// keys are kept (a newer link opened by an older page loses nothing it could show).

const KEY_ORDER = ["project", "folder", "file"];

/** Parse a location hash into `{surface, params}` (surface null when the hash names none). */
export function parseRoute(hash) {
  const text = String(hash ?? "").replace(/^#/, "");
  const [path, query = ""] = text.split("?", 2);
  const surface = path.replace(/^\/+/, "").split("/")[0] || null;
  const params = {};
  for (const [key, value] of new URLSearchParams(query)) if (value !== "") params[key] = value;
  return { surface: surface ? decodeURIComponent(surface) : null, params };
}

/** The hash for `surface` with `params` (string values; empty and null ones are left out),
 * the well-known keys first so links read the same way every time. */
export function formatRoute(surface, params = {}) {
  const keys = Object.keys(params).filter(
    (k) => params[k] !== null && params[k] !== undefined && params[k] !== "",
  );
  keys.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const query = new URLSearchParams(keys.map((k) => [k, String(params[k])])).toString();
  return `#/${encodeURIComponent(surface)}${query ? `?${query}` : ""}`;
}

function rank(key) {
  const i = KEY_ORDER.indexOf(key);
  return i === -1 ? KEY_ORDER.length : i;
}

/**
 * The browser history, seen as routes. `write(hash, {push})` records a new place (push: a new
 * history entry; otherwise the current one is replaced). `onMove(fn)` calls `fn()` when the
 * person moved through history (Back, Forward, an edited address) to a hash this page did not
 * just write itself.
 */
export class History {
  #written = location.hash;

  write(hash, { push = true } = {}) {
    if (hash === location.hash) return;
    this.#written = hash;
    if (push) history.pushState(null, "", hash);
    else history.replaceState(null, "", hash);
  }

  onMove(fn) {
    const moved = () => {
      if (location.hash === this.#written) return;
      this.#written = location.hash;
      fn();
    };
    // Back/Forward fire popstate; an edited hash fires hashchange too — whichever comes first
    // handles it, the other sees nothing new.
    addEventListener("popstate", moved);
    addEventListener("hashchange", moved);
  }

  /** Put `hash` back as the current entry (the person declined to leave unsaved edits). */
  restore(hash) {
    this.#written = hash;
    history.pushState(null, "", hash);
  }
}
