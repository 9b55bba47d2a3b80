// "Run with…" on the Files surface (issue 33 item 5; docs/plugins.md "Run with… a file"): a
// file's context menu lists the installed plugins' operations that run on a file — core says
// which (plugin.list `fileArg`, `pathArgs`: core/tools/plugin_paths.py) — and runs the chosen
// one on that file. The call is the Tools surface's: tool.call with the descriptor discovery
// gave, admitted afresh by the host (admission, files grant, withdrawal), the same
// confirmation (tools.mjs confirmCall, the project by its name) and the result in human form.

import { el, literal, name, replace } from "../dom.mjs";
import { acted, clearAlerts, guarded } from "./alerts.mjs";
import { confirmDialog } from "./dialog.mjs";
import { baseName } from "./explorer.mjs";
import { pathField } from "./path_picker.mjs";
import { confirmCall, field, outcomeNodes } from "./tools.mjs";

function modal({ id, title, body, actions }) {
  return new Promise((resolve) => {
    const dialog = el(
      "dialog",
      { class: "dialog run-with", id, "aria-labelledby": `${id}-title` },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: `${id}-title` }, title),
        body,
        el("div", { class: "actions" }, actions),
      ),
    );
    document.body.appendChild(dialog);
    const opener = document.activeElement;
    dialog.addEventListener(
      "close",
      () => {
        dialog.remove();
        if (opener?.isConnected) opener.focus();
        resolve(dialog.returnValue);
      },
      { once: true },
    );
    dialog.showModal();
    dialog.querySelector("button[data-operation], input, button.primary")?.focus();
  });
}

function state(plugin) {
  if (plugin.withdrawn) return "withdrawn: its calls are refused";
  if (!plugin.admitted)
    return "not admitted yet: the host refuses its calls until you admit it on the Plugins surface";
  if (!plugin.filesGranted)
    return "files not granted: the host refuses to read the file until you grant files on the Plugins surface";
  return null;
}

/** The operations that run on a file, each with its plugin and its discovery descriptor. */
async function runnable(app) {
  const listed = await guarded("Listing plugins", () => app.host.call("plugin.list"));
  if (!listed) return null;
  const envs = await guarded("Listing environments", () => app.host.call("env.list"));
  const local = envs?.result.environments.find((e) => e.kind === "local");
  if (!local) return null;
  const found = await guarded("Discovering tools", () =>
    app.host.call("tool.discover", { envKey: local.envKey }),
  );
  if (!found) return null;
  const tools = new Map(found.result.tools.map((t) => [t.name, t]));
  return listed.result.plugins.flatMap((plugin) =>
    plugin.operations
      .filter((op) => op.fileArg && tools.has(op.name))
      .map((op) => ({ plugin, op, tool: tools.get(op.name), envKey: local.envKey })),
  );
}

async function choose(app, path, offers) {
  if (!offers.length) {
    const answer = await modal({
      id: "run-with-dialog",
      title: `Run with… ${baseName(path)}`,
      body: el(
        "p",
        { id: "run-with-none" },
        "No installed plugin has an operation that reads a file. The Plugins surface installs one (the shipped examples are offered there).",
      ),
      actions: [
        el("button", { value: "cancel", type: "submit" }, "Close"),
        el("button", { value: "plugins", type: "submit", class: "primary" }, "Open Plugins"),
      ],
    });
    if (answer === "plugins") app.go("plugins");
    return null;
  }
  let picked = null;
  const list = el(
    "ul",
    { class: "run-with-list", id: "run-with-list" },
    offers.map((offer) => {
      const why = state(offer.plugin);
      return el(
        "li",
        {},
        el(
          "button",
          {
            type: "submit",
            value: "pick",
            class: "link run-with-op",
            "data-operation": offer.op.name,
            onclick: () => {
              picked = offer;
            },
          },
          literal(offer.op.name),
        ),
        " ",
        el(
          "span",
          { class: "muted" },
          "from ",
          literal(offer.plugin.title),
          offer.op.confirm ? " · asks first" : "",
          offer.op.effect === "write" ? " · writes a file" : "",
        ),
        el("div", {}, literal(offer.op.summary)),
        why ? el("div", { class: "warn" }, `This plugin is ${why}.`) : null,
      );
    }),
  );
  const answer = await modal({
    id: "run-with-dialog",
    title: `Run with… ${baseName(path)}`,
    body: [
      el(
        "p",
        { class: "muted" },
        "Operations of your installed plugins that read a file. Each call is admitted afresh by the host.",
      ),
      list,
    ],
    actions: [el("button", { value: "cancel", type: "submit" }, "Cancel")],
  });
  return answer === "pick" ? picked : null;
}

/** The arguments of `offer` for `path`, as the person completes them; null when cancelled. */
async function argumentsFor(view, path, offer) {
  const { op, tool } = offer;
  const root = tool.argsSchema;
  const required = new Set(root.required ?? []);
  const walk = async () =>
    (await view.call("file.walk", { folder: "" })).result.files.map((f) => f.path);
  const fields = [];
  for (const [arg, schema] of Object.entries(root.properties ?? {})) {
    if (arg === "project") continue; // the file's own project, shown by name above
    const id = `run-with-arg-${arg}`;
    if (op.pathArgs.includes(arg)) {
      const label = `${schema.title ?? arg}${required.has(arg) ? " (required)" : ""}`;
      fields.push([
        arg,
        pathField({
          id,
          label,
          hint: schema.description ?? null,
          value: arg === op.fileArg ? path : "",
          required: required.has(arg),
          walk,
        }),
      ]);
    } else {
      const f = field(arg, schema, root, required.has(arg), [], null);
      f.node.querySelectorAll("[id]").forEach((n) => {
        n.id = n.id.replace(/^tool-arg-/, "run-with-arg-");
      });
      f.node
        .querySelectorAll("label[for]")
        .forEach((n) =>
          n.setAttribute("for", n.getAttribute("for").replace(/^tool-arg-/, "run-with-arg-")),
        );
      fields.push([arg, f]);
    }
  }
  const problem = el("p", {
    class: "field-rule dialog-problem",
    id: "run-with-problem",
    role: "alert",
  });
  const answer = await modal({
    id: "run-with-form",
    title: `Run ${op.name}`,
    body: [
      el("p", {}, literal(op.summary)),
      el(
        "p",
        { class: "muted" },
        "In project ",
        name(view.project.name, { id: "run-with-project" }),
        ".",
      ),
      ...fields.map(([, f]) => f.node),
      problem,
    ],
    actions: [
      el("button", { value: "cancel", type: "submit", formnovalidate: true }, "Cancel"),
      el("button", { value: "ok", type: "submit", class: "primary", id: "run-with-run" }, "Run"),
    ],
  });
  if (answer !== "ok") return null;
  const args = { project: view.project.id };
  for (const [arg, f] of fields) {
    const v = f.read();
    if (v !== undefined) args[arg] = v;
  }
  return args;
}

/**
 * "Run with…" on `path` of the Files surface `view` (a FilesView): unsaved edits of the file are
 * saved first (the person confirms), then choose an operation, complete
 * its arguments (the file already in its file argument; other paths with the picker), confirm
 * when it asks first, run it, show the result in human form in a dialog.
 */
export async function runWith(view, path) {
  const app = view.app;
  // a plugin reads the file as stored: unsaved edits in the editor are saved first, or nothing runs
  if (view.file === path && view.editor && view.editor.text() !== view.saved) {
    if (
      !(await confirmDialog({
        id: "run-with-unsaved",
        title: "Save your changes first?",
        confirmLabel: "Save and continue",
        text: `A plugin reads ${path} as it is stored, and your changes to it are not saved yet.`,
      }))
    )
      return;
    await view.save();
    if (view.file !== path || view.editor?.text() !== view.saved) return; // the save was refused (said in the alert)
  }
  const offers = await runnable(app);
  if (!offers) return;
  const offer = await choose(app, path, offers);
  if (!offer) return;
  const args = await argumentsFor(view, path, offer);
  if (!args) return;
  const { tool } = offer;
  if (tool.needsConfirmation && !(await confirmCall(tool, args, [view.project]))) return;
  clearAlerts();
  const answer = await acted(`Running ${tool.name} on ${path}`, () =>
    app.host.call(
      "tool.call",
      { envKey: offer.envKey, tool: tool.name, descriptorId: tool.descriptorId, args },
      { human: tool.needsConfirmation },
    ),
  );
  if (!answer) return;
  const body = el("div", { id: "run-with-outcome", class: "tool-outcome" });
  replace(body, ...(await outcomeNodes(answer.result)));
  if (answer.result.receipt) await view.explorer?.refresh();
  await modal({
    id: "run-with-result",
    title: `${tool.name} on ${baseName(path)}`,
    body,
    actions: [el("button", { value: "ok", type: "submit", class: "primary" }, "Close")],
  });
}
