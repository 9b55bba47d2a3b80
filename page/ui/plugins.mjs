// Plugins surface (issue 16; seed 003): install a plugin package from a file or a folder, shown first with
// every operation, its effect, receipt rung and each capability with its reason; then admit its
// release, grant or remove files, withdraw, uninstall. UI only: the host reads the package,
// checks its pins and decides everything (plugin.inspect / install / grant / withdraw /
// uninstall); every act here is a person's gesture. Text from a package is shown as text
// (literal), never as markup.

import { el, formatBytes, literal, replace } from "../dom.mjs";
import { acted, guarded, showNotice } from "./alerts.mjs";
import { confirmDialog } from "./dialog.mjs";

function capabilityList(op) {
  if (!op.capabilities.length) return el("p", { class: "muted" }, "No file access.");
  return el(
    "ul",
    { class: "capabilities" },
    op.capabilities.map((c) =>
      el(
        "li",
        { "data-capability": c.kind },
        el("strong", {}, c.kind === "read" ? "Reads" : "Writes"),
        " the file named by ",
        el("code", {}, literal(c.arg)),
        ": ",
        literal(c.reason),
      ),
    ),
  );
}

function operationTable(plugin, id) {
  return el(
    "table",
    { class: "table", id },
    el("caption", { class: "visually-hidden" }, `Operations of ${plugin.id}`),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ...["Operation", "Effect", "Receipt", "Confirmation", "Capabilities"].map((h) =>
          el("th", { scope: "col" }, h),
        ),
      ),
    ),
    el(
      "tbody",
      {},
      plugin.operations.map((op) =>
        el(
          "tr",
          { "data-operation": op.name },
          el(
            "td",
            {},
            el("strong", {}, literal(op.name)),
            el("div", { class: "muted" }, literal(op.summary)),
            op.withdrawn ? el("div", { class: "badge" }, "withdrawn") : null,
          ),
          el("td", { class: "nowrap" }, op.effect),
          el("td", { class: "nowrap" }, el("code", {}, op.receipt)),
          el("td", {}, op.confirm ? "asks first" : "—"),
          el("td", {}, capabilityList(op)),
        ),
      ),
    ),
  );
}

function summary(plugin) {
  return el(
    "dl",
    { class: "plugin-summary" },
    el("dt", {}, "Plugin"),
    el("dd", {}, literal(plugin.title), " (", el("code", {}, literal(plugin.id)), ")"),
    el("dt", {}, "Release"),
    el("dd", {}, literal(plugin.release)),
    el("dt", {}, "Publisher (as the package says)"),
    el("dd", {}, literal(plugin.publisher)),
    el("dt", {}, "Origin"),
    el("dd", {}, el("code", {}, literal(plugin.origin))),
    el("dt", {}, "Manifest sha256"),
    el("dd", {}, el("code", {}, plugin.manifestSha256)),
    el("dd", {}, literal(plugin.summary)),
  );
}

// A package as the host reads it: a .zip is the body; a folder is its files' bytes
// concatenated, with `folder` naming each file's relative path and size (plugin.inspect /
// plugin.install; the host splits and checks them exactly as a zip's files).
async function fromZip(file) {
  return { label: file.name, size: file.size, args: {}, bytes: await file.arrayBuffer() };
}

async function fromFolder(files) {
  const folder = files.map((f) => ({ path: f.webkitRelativePath || f.name, size: f.size }));
  const size = files.reduce((n, f) => n + f.size, 0);
  const label = folder[0]?.path.split("/")[0] || "the folder";
  return { label, size, args: { folder }, bytes: await new Blob(files).arrayBuffer() };
}

function fileList(source) {
  if (!source.args.folder) return null;
  return el(
    "ul",
    { class: "package-files", id: "plugin-install-files" },
    source.args.folder.map((f) =>
      el("li", {}, el("code", {}, literal(f.path)), ` (${formatBytes(f.size)})`),
    ),
  );
}

// What installing does to the operator's decisions, as the host answered (plugin.inspect's
// `replaces` and `withdrawn`; issue 29 item 1): admission and grants follow the manifest's
// sha256, never the release label.
function installNote(plugin) {
  const r = plugin.replaces;
  if (plugin.withdrawn) {
    return el(
      "p",
      { class: "warn", id: "plugin-install-replaces", "data-replaces": "withdrawn" },
      "You withdrew exactly these bytes: installing them again keeps them withdrawn.",
    );
  }
  if (r && !r.sameBytes) {
    const decided = [
      r.admitted ? "admitted" : null,
      r.filesGranted ? "granted files" : null,
      r.withdrawn ? "withdrew" : null,
    ].filter(Boolean);
    return el(
      "p",
      {
        class: decided.length ? "warn" : "muted",
        id: "plugin-install-replaces",
        "data-replaces": decided.length ? "admitted" : "installed",
      },
      "This replaces the installed release ",
      literal(r.release),
      " (manifest sha256 ",
      el("code", {}, r.manifestSha256),
      ")",
      decided.length ? `, which you ${decided.join(" and ")}` : "",
      ". These are other bytes",
      r.release === plugin.release ? " under the same release label" : "",
      ": no admission or files grant carries over. Its operations run once you admit this release, and read or write files only once you grant files.",
    );
  }
  if (r) {
    return el(
      "p",
      { class: "muted", id: "plugin-install-replaces", "data-replaces": "same" },
      "These are the installed release's exact bytes: its admission and files grant stay as they are.",
    );
  }
  return el(
    "p",
    { class: "muted", id: "plugin-install-replaces", "data-replaces": "none" },
    "Installing admits nothing: its operations run once you admit this release, and read or write files only once you grant files.",
  );
}

async function install(app, source, node) {
  const { args, bytes } = source;
  const shown = await guarded(`Reading ${source.label}`, () =>
    app.host.call("plugin.inspect", args, { body: bytes.slice(0) }),
  );
  if (!shown) return;
  const plugin = shown.result;
  const ok = await confirmDialog({
    id: "plugin-install-dialog",
    title: `Install ${plugin.id} ${plugin.release}?`,
    body: el(
      "div",
      {},
      summary(plugin),
      fileList(source),
      operationTable(plugin, "plugin-install-operations"),
      installNote(plugin),
    ),
    confirmLabel: "Install",
  });
  if (!ok) return;
  const done = await acted(`Installing ${plugin.id}`, () =>
    app.host.call("plugin.install", args, { body: bytes, human: true }),
  );
  if (done) showNotice(`Installed ${plugin.id} ${plugin.release} (${formatBytes(source.size)}).`);
  await renderPlugins(node, app);
}

async function act(app, node, context, op, args, confirm = null) {
  if (confirm && !(await confirmDialog(confirm))) return;
  await acted(context, () => app.host.call(op, args, { human: true }));
  await renderPlugins(node, app);
}

function pluginCard(app, node, p) {
  const grant = (admit, files) =>
    act(app, node, `Changing ${p.id}`, "plugin.grant", { id: p.id, admit, files });
  return el(
    "article",
    { class: "plugin", "data-plugin": p.id, "aria-label": `Plugin ${p.id}` },
    el("h3", {}, literal(p.title), " ", el("span", { class: "muted" }, literal(p.release))),
    summary(p),
    el(
      "p",
      {
        class: "plugin-state",
        "data-admitted": String(p.admitted),
        "data-files": String(p.filesGranted),
        "data-withdrawn": String(p.withdrawn),
      },
      p.admitted
        ? "This release is admitted."
        : "This release is not admitted: its operations are refused.",
      " ",
      p.filesGranted ? "Files are granted." : "Files are not granted.",
      p.withdrawn
        ? " It is withdrawn: every call of its operations is refused, also after a reload."
        : "",
    ),
    p.readmit
      ? el(
          "p",
          { class: "warn", "data-readmit": "true" },
          "An earlier version of this host admitted this plugin by its release label only. Admissions now name the package's exact bytes (its manifest sha256): admit this release again to run it.",
        )
      : null,
    operationTable(p, `plugin-operations-${p.id}`),
    el(
      "div",
      { class: "toolbar" },
      el(
        "button",
        {
          type: "button",
          class: "primary",
          "data-act": "admit",
          onclick: () => grant(!p.admitted, p.filesGranted),
        },
        p.admitted ? "Take back admission" : `Admit release ${p.release}`,
      ),
      el(
        "button",
        { type: "button", "data-act": "files", onclick: () => grant(p.admitted, !p.filesGranted) },
        p.filesGranted ? "Remove files grant" : "Grant files",
      ),
      el(
        "button",
        {
          type: "button",
          "data-act": "withdraw",
          onclick: () =>
            act(
              app,
              node,
              `Withdrawing ${p.id}`,
              "plugin.withdraw",
              { id: p.id },
              {
                title: `Withdraw ${p.id}?`,
                text: "Every later call of its operations is refused, also one already waiting.",
                confirmLabel: "Withdraw",
                danger: true,
              },
            ),
        },
        "Withdraw",
      ),
      el(
        "button",
        {
          type: "button",
          class: "danger",
          "data-act": "uninstall",
          onclick: () =>
            act(
              app,
              node,
              `Uninstalling ${p.id}`,
              "plugin.uninstall",
              { id: p.id },
              {
                title: `Uninstall ${p.id}?`,
                text: "Its operations, package, admission and files grant are removed.",
                confirmLabel: "Uninstall",
                danger: true,
              },
            ),
        },
        "Uninstall",
      ),
    ),
  );
}

// The shipped example plugins (issue 33 item 5), offered while none is installed: the site's
// list (plugins/examples/index.json, written by the site build) and each package fetched from
// this site with its sha256 checked (SRI), then installed exactly as a picked file — the same
// plugin.inspect dialog and plugin.install gesture; admitting and granting stay separate acts.
const EXAMPLES = new URL("../plugins/examples/", import.meta.url);

async function examples() {
  try {
    const answer = await fetch(new URL("index.json", EXAMPLES));
    return answer.ok ? await answer.json() : [];
  } catch {
    return [];
  }
}

async function installExample(app, example, node) {
  const bytes = await guarded(`Fetching ${example.file}`, async () => {
    const answer = await fetch(new URL(example.file, EXAMPLES), { integrity: example.integrity });
    if (!answer.ok) throw new Error(`the site answered ${answer.status}`);
    return answer.arrayBuffer();
  });
  if (bytes)
    await install(app, { label: example.file, size: bytes.byteLength, args: {}, bytes }, node);
}

async function emptyShelf(app, node) {
  const offered = await examples();
  return el(
    "div",
    { id: "plugin-examples" },
    el("p", { class: "empty" }, "No plugin is installed."),
    offered.length
      ? [
          el("h3", {}, "Example plugins"),
          el(
            "p",
            { class: "muted" },
            "This site ships these. Install one to try it: you review it first, then admit it and grant it files.",
          ),
          el(
            "ul",
            { class: "plugin-examples" },
            offered.map((x) =>
              el(
                "li",
                { "data-example": x.id },
                el("strong", {}, literal(x.title)),
                " ",
                el("span", { class: "muted" }, literal(x.release), ` · ${formatBytes(x.size)}`),
                el("div", {}, literal(x.summary)),
                el(
                  "button",
                  {
                    type: "button",
                    "data-act": "install-example",
                    "aria-label": `Install the example ${x.title}`,
                    onclick: () => installExample(app, x, node),
                  },
                  "Install",
                ),
              ),
            ),
          ),
        ]
      : null,
  );
}

export async function renderPlugins(node, app) {
  const listed = await guarded("Listing plugins", () => app.host.call("plugin.list"));
  const plugins = listed?.result.plugins ?? [];
  const picker = el("input", {
    type: "file",
    id: "plugin-file",
    accept: ".zip,application/zip",
    onchange: async () => {
      const f = picker.files?.[0];
      picker.value = "";
      if (f) await install(app, await fromZip(f), node);
    },
  });
  const folderPicker = el("input", {
    type: "file",
    id: "plugin-folder",
    webkitdirectory: true,
    onchange: async () => {
      const files = Array.from(folderPicker.files ?? []);
      const source = files.length ? await fromFolder(files) : null;
      folderPicker.value = "";
      if (source) await install(app, source, node);
    },
  });
  replace(
    node,
    el("h2", {}, "Plugins"),
    el(
      "p",
      { class: "muted" },
      "A plugin computes in the sandbox; the host reads and writes files for it, only as you grant. It has no network.",
    ),
    el(
      "div",
      { class: "toolbar" },
      el("label", { for: "plugin-file" }, "Install from a file (.zip)"),
      picker,
      el("label", { for: "plugin-folder" }, "or from a folder"),
      folderPicker,
    ),
    plugins.length
      ? el(
          "div",
          { id: "plugin-list" },
          plugins.map((p) => pluginCard(app, node, p)),
        )
      : await emptyShelf(app, node),
  );
}
