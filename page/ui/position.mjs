// Where the editor was in each file (issue 33 item 6; docs/ui.md, "The editor"): the cursor,
// the selection and the scroll, kept by the host per project and file (`files.position`, in
// ui-state.json — the page stores nothing itself) and put back when the file opens again,
// after a reload too. Offsets past the end of a file that changed since are clamped.

const QUIET_MS = 300;

/** Keep `editor`'s position in `path` (`call(args)` asks `files.position`). Returns
 * `{ restore(): Promise<void> }`; the editor's destroy() first reports the last position. */
export function keepPosition(editor, path, call) {
  const view = editor.view;
  let timer = null;
  let last = "";
  let live = true;

  const now = () => {
    const main = view.state.selection.main;
    return {
      anchor: main.anchor,
      head: main.head,
      top: Math.max(0, Math.round(view.scrollDOM.scrollTop)),
    };
  };
  const report = () => {
    timer = null;
    const position = now();
    const key = JSON.stringify(position);
    if (key === last) return;
    last = key;
    call({ path, position }).catch(() => {}); // presentation only: a refusal loses a cursor
  };
  const soon = () => {
    if (!live) return;
    clearTimeout(timer);
    timer = setTimeout(report, QUIET_MS);
  };
  for (const type of ["keyup", "mouseup", "focusout"]) view.dom.addEventListener(type, soon);
  view.scrollDOM.addEventListener("scroll", soon, { passive: true });

  const destroy = editor.destroy.bind(editor);
  editor.destroy = () => {
    if (live && timer !== null) {
      clearTimeout(timer);
      report();
    }
    live = false;
    destroy();
  };

  return {
    async restore() {
      let kept = null;
      try {
        kept = (await call({ path })).result.position;
      } catch {
        return;
      }
      if (!kept || !live) return;
      const end = view.state.doc.length;
      const anchor = Math.min(kept.anchor, end);
      const head = Math.min(kept.head, end);
      view.dispatch({ selection: { anchor, head } });
      last = JSON.stringify({ anchor, head, top: kept.top });
      view.requestMeasure({
        read: () => null,
        write: () => {
          view.scrollDOM.scrollTop = kept.top;
        },
      });
      view.scrollDOM.scrollTop = kept.top;
    },
  };
}
