// Tools surface (SPEC §7, §11): discovery for an environment — name, origin, effect class,
// receipt rule, confirmation — and a run form generated from each tool's JSON Schema. Results
// and the host's receipts are shown as text; an image the tool produced is shown through a
// blob: URL. A description is not an entitlement: the host admits every call afresh.

import { el, formatBytes, formatTime, literal, name, replace, tableBox } from "../dom.mjs";
import { clearAlerts, guarded, submitting } from "./alerts.mjs";
import { confirmDialog } from "./dialog.mjs";
import { pathField } from "./path_picker.mjs";
import { resultView } from "./result_view.mjs";
import { askConflict } from "./transfer.mjs";

const IMAGE = /\.(png|svg)$/i;

function resolve(schema, root) {
  if (schema?.$ref) return root.$defs?.[schema.$ref.split("/").pop()] ?? {};
  return schema ?? {};
}

// One input for one schema property. Returns {node, read()} — read() gives the JSON value or
// undefined (left out, so the host applies its default). `walk` (given for an argument core
// says takes a path: plugin.list `pathArgs`) adds the project's file picker.
export function field(name, schema, root, required, projects, openProject, walk = null) {
  const s = resolve(schema, root);
  const id = `tool-arg-${name}`;
  const label = el("label", { for: id }, `${s.title ?? name}${required ? " (required)" : ""}`);
  const hint = s.description
    ? el("span", { class: "muted hint", id: `${id}-hint` }, s.description)
    : null;
  const described = hint ? `${id}-hint` : null;
  if (name === "project" && projects.length) {
    // the open project first choice, when there is one (not the first alphabetically)
    const select = el(
      "select",
      { id, "aria-describedby": described },
      projects.map((p) => el("option", { value: p.id }, p.name)),
    );
    if (projects.some((p) => p.id === openProject)) select.value = openProject;
    return { node: el("div", { class: "field" }, label, select, hint), read: () => select.value };
  }
  if (walk) {
    return pathField({
      id,
      label: `${s.title ?? name}${required ? " (required)" : ""}`,
      hint: s.description ?? null,
      value: s.default ?? "",
      required,
      walk,
    });
  }
  const choices = s.enum ?? s.anyOf?.map((b) => resolve(b, root)).find((b) => b.enum)?.enum;
  const freeform = s.anyOf?.map((b) => resolve(b, root)).find((b) => b.type === "array");
  if (choices && !freeform) {
    const select = el(
      "select",
      { id, "aria-describedby": described },
      choices.map((c) =>
        el("option", { value: String(c), selected: c === s.default ? true : null }, String(c)),
      ),
    );
    return { node: el("div", { class: "field" }, label, select, hint), read: () => select.value };
  }
  if (choices && freeform) {
    // a named choice, or a list typed as "a, b, c"
    const input = el("input", {
      id,
      type: "text",
      list: `${id}-list`,
      value: s.default ?? "",
      "aria-describedby": described,
    });
    const list = el(
      "datalist",
      { id: `${id}-list` },
      choices.map((c) => el("option", { value: String(c) })),
    );
    return {
      node: el(
        "div",
        { class: "field" },
        label,
        input,
        list,
        el(
          "span",
          { class: "muted hint" },
          `one of ${choices.join(", ")}, or colours like #ff8800, #0055aa`,
        ),
        hint,
      ),
      read: () => {
        const v = input.value.trim();
        if (!v) return undefined;
        return choices.includes(v)
          ? v
          : v
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean);
      },
    };
  }
  if (s.type === "boolean") {
    const box = el("input", {
      id,
      type: "checkbox",
      checked: s.default === true,
      "aria-describedby": described,
    });
    return {
      node: el("div", { class: "field field-check" }, box, label, hint),
      read: () => box.checked,
    };
  }
  if (s.type === "integer" || s.type === "number") {
    const input = el("input", {
      id,
      type: "number",
      value: s.default ?? "",
      min: s.minimum ?? null,
      max: s.maximum ?? null,
      step: s.type === "integer" ? "1" : "any",
      "aria-describedby": described,
    });
    return {
      node: el("div", { class: "field" }, label, input, hint),
      read: () => (input.value === "" ? undefined : Number(input.value)),
    };
  }
  const input = el("input", {
    id,
    type: "text",
    value: s.default ?? "",
    required: required || null,
    maxlength: s.maxLength ?? null,
    "aria-describedby": described,
  });
  return {
    node: el("div", { class: "field" }, label, input, hint),
    read: () => (input.value === "" && !required ? undefined : input.value),
  };
}

async function showImage(app, envKey, localKey, project, path, into) {
  if (envKey !== localKey) return;
  const read = await guarded(`Reading ${path}`, () =>
    app.host.call("file.read", { project, path }),
  );
  if (!read?.body) return;
  const url = URL.createObjectURL(
    new Blob([read.body], {
      type: path.toLowerCase().endsWith(".svg") ? "image/svg+xml" : "image/png",
    }),
  );
  into.appendChild(
    el(
      "figure",
      { class: "tool-image" },
      el("img", {
        src: url,
        alt: `The image ${path} the tool produced`,
        class: "preview",
        id: "tool-image",
      }),
      el("figcaption", { class: "muted" }, `${path} · ${formatBytes(read.body.byteLength)}`),
    ),
  );
}

// `at` is epoch milliseconds: shown as local date and time, the raw value kept beside it.
function receiptValue(key, value) {
  if (key === "at" && Number.isFinite(value)) {
    const when = new Date(value);
    return el(
      "dd",
      { title: `${value} ms since the epoch` },
      el("time", { datetime: when.toISOString() }, formatTime(when.toISOString())),
      " ",
      el("span", { class: "muted" }, `(${value})`),
    );
  }
  return el("dd", {}, String(value));
}

/** A call's answer in human form (issue 33 item 5): the result (result_view.mjs, its JSON
 * behind "Details", the <pre> named #tool-result) and the host's receipt, or the sentence that
 * there is none. Resolves the nodes. */
export async function outcomeNodes(outcome) {
  const { result, receipt, note } = outcome;
  return [
    el("h4", {}, "Result"),
    await resultView(result, { id: "tool-result-view", jsonId: "tool-result" }),
    receipt
      ? el(
          "div",
          { class: "receipt", id: "tool-receipt" },
          el("h4", {}, `Host receipt — ${receipt.rung}`),
          el(
            "dl",
            {},
            ...Object.entries(receipt).flatMap(([k, v]) => [el("dt", {}, k), receiptValue(k, v)]),
          ),
        )
      : el("p", { class: "muted", id: "tool-no-receipt" }, note ?? "No host receipt."),
  ];
}

async function renderOutcome(node, outcome) {
  replace(node, ...(await outcomeNodes(outcome)));
}

/**
 * The confirmation a tool that asks first gets (SPEC §7: this gesture, these exact
 * arguments): each argument by name, the project by its name (its id only as the tooltip and
 * in the exact JSON behind "Details" — issue 33 item 5). `projects`: [{id, name}]. Resolves
 * true when the person confirms.
 */
export function confirmCall(tool, args, projects) {
  const project = projects.find((p) => p.id === args.project);
  const rows = Object.entries(args).flatMap(([k, v]) => [
    el("dt", {}, k === "project" ? "Project" : k),
    el(
      "dd",
      { "data-arg": k, title: k === "project" ? String(v) : null },
      k === "project" && project
        ? name(project.name, { id: "tool-confirm-project" })
        : literal(typeof v === "string" ? v : JSON.stringify(v)),
    ),
  ]);
  return confirmDialog({
    id: "tool-confirm-dialog",
    title: `Run ${tool.name}`,
    body: el(
      "div",
      {},
      el(
        "p",
        {},
        `${tool.summary} This tool (origin ${tool.origin}) asks for your confirmation before it runs, with exactly these arguments:`,
      ),
      el("dl", { class: "candidate", id: "tool-confirm-list" }, rows),
      el(
        "details",
        { class: "result-details" },
        el("summary", {}, "Details (JSON)"),
        el("pre", { class: "text-view", id: "tool-confirm-args" }, JSON.stringify(args, null, 2)),
      ),
    ),
    confirmLabel: "Run",
  });
}

export async function renderTools(node, app, params = {}) {
  const listed = await guarded("Listing environments", () => app.host.call("env.list"));
  const envs = (listed?.result.environments ?? []).filter((e) => e.kind === "local" || e.paired);
  const local = envs.find((e) => e.kind === "local");
  const chosen = envs.find((e) => e.envKey === params.env) ?? local;
  if (!chosen) return;
  const discovered = await guarded(`Discovering ${chosen.name}'s tools`, () =>
    app.host.call("tool.discover", { envKey: chosen.envKey }),
  );
  const tools = discovered?.result.tools ?? [];
  const projectsAnswer =
    chosen === local
      ? await guarded("Listing projects", () => app.host.call("project.list"))
      : null;
  const projects = projectsAnswer?.result.projects ?? [];
  // which arguments take a project path is core's rule (plugin.list `pathArgs`; issue 33 item 5)
  const plugged =
    chosen === local && tools.some((t) => t.origin.startsWith("plugin:"))
      ? await guarded("Listing plugins", () => app.host.call("plugin.list"))
      : null;
  const pathArgs = new Map(
    (plugged?.result.plugins ?? []).flatMap((p) =>
      p.operations.map((op) => [op.name, op.pathArgs]),
    ),
  );
  const envSelect = el(
    "select",
    { id: "tool-env", onchange: () => app.go("tools", { env: envSelect.value }) },
    envs.map((e) =>
      el(
        "option",
        { value: e.envKey, selected: e === chosen ? true : null, title: e.name },
        e.kind === "local" ? "local (this browser)" : e.name,
      ),
    ),
  );
  const runner = el("section", { id: "tool-runner", "aria-label": "Run a tool" });

  const open = (tool) => {
    const root = tool.argsSchema;
    const required = new Set(root.required ?? []);
    const paths = new Set(chosen === local ? (pathArgs.get(tool.name) ?? []) : []);
    let fields = [];
    // the project the picker lists: the form's own project choice
    const walk = async () => {
      const project = fields.find(([n]) => n === "project")?.[1].read();
      return (await app.host.call("file.walk", { project, folder: "" })).result.files.map(
        (f) => f.path,
      );
    };
    fields = Object.entries(root.properties ?? {}).map(([name, s]) => [
      name,
      field(
        name,
        s,
        root,
        required.has(name),
        projects,
        chosen === local ? app.project?.id : null,
        paths.has(name) ? walk : null,
      ),
    ]);
    const out = el("div", { class: "tool-outcome", "aria-live": "polite" });
    const busy = el("progress", { hidden: true, "aria-label": `${tool.name} running` });
    const run = el("button", { type: "submit", class: "primary", id: "run-tool" }, "Run");
    const form = el(
      "form",
      {
        class: "tool-form",
        "aria-label": `Run ${tool.name}`,
        onsubmit: async (event) => {
          event.preventDefault();
          const args = {};
          for (const [name, f] of fields) {
            const value = f.read();
            if (value !== undefined) args[name] = value;
          }
          // the exact arguments the call will carry, as text (a confirmation is this gesture only)
          if (tool.needsConfirmation && !(await confirmCall(tool, args, projects))) return;
          busy.hidden = false;
          clearAlerts();
          const call = (a) =>
            app.host.call(
              "tool.call",
              { envKey: chosen.envKey, tool: tool.name, descriptorId: tool.descriptorId, args: a },
              { human: tool.needsConfirmation },
            );
          const answer = await submitting(run, `Running ${tool.name}`, async () => {
            try {
              return await call(args);
            } catch (err) {
              // a tool that writes a file refuses an existing one unless told (its schema's
              // on_conflict, core's rule); the person answers here, never by surprise
              if (
                err.code !== "already-exists" ||
                args.on_conflict !== "refuse" ||
                typeof args.path !== "string"
              )
                throw err;
              const choice = await askConflict(args.path, "creating", { all: null, left: 0 });
              if (choice === "cancel") return null;
              return call({ ...args, on_conflict: choice === "keep" ? "keep-both" : "replace" });
            }
          });
          busy.hidden = true;
          if (!answer) return;
          await renderOutcome(out, answer.result);
          const path = answer.result.result?.path;
          if (path && IMAGE.test(path) && args.project)
            await showImage(app, chosen.envKey, local.envKey, args.project, path, out);
        },
      },
      el(
        "h3",
        {},
        "Run ",
        literal(tool.name),
        tool.origin === "builtin" ? "" : [" (", literal(tool.origin), ")"],
      ),
      el("p", { class: "muted" }, tool.summary),
      ...fields.map(([, f]) => f.node),
      el("div", { class: "toolbar" }, run, busy),
    );
    replace(runner, form, out);
    form.querySelector("input, select")?.focus();
  };

  replace(
    node,
    el("h2", {}, "Tools"),
    el(
      "div",
      { class: "toolbar" },
      el("label", { for: "tool-env" }, "Environment"),
      envSelect,
      el("span", { class: "muted" }, "Discovery describes; the host admits each call afresh."),
    ),
    tools.length
      ? tableBox(
          el(
            "table",
            { class: "table", id: "tool-table" },
            el("caption", { class: "visually-hidden" }, `Tools offered by ${chosen.name}`),
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ...["Tool", "Origin", "Effect", "Receipt rule", "Confirmation", ""].map((h) =>
                  el("th", { scope: "col" }, h),
                ),
              ),
            ),
            el(
              "tbody",
              {},
              tools
                .filter((t) => t.name !== "tools.describe")
                .map((t) =>
                  el(
                    "tr",
                    { "data-tool": t.name },
                    el(
                      "td",
                      {},
                      el("strong", {}, literal(t.name)),
                      el("div", { class: "muted" }, literal(t.summary)),
                    ),
                    el(
                      "td",
                      { class: "nowrap", "data-origin": t.origin },
                      t.origin === "builtin"
                        ? t.origin
                        : el("span", { class: "badge" }, literal(t.origin)),
                    ),
                    el("td", { class: "nowrap" }, t.effect),
                    el("td", { class: "nowrap" }, el("code", {}, t.receiptRule)),
                    el("td", {}, t.needsConfirmation ? "asks first" : "—"),
                    el(
                      "td",
                      { class: "nowrap" },
                      el(
                        "button",
                        { type: "button", onclick: () => open(t), "aria-label": `Run ${t.name}` },
                        "Run…",
                      ),
                    ),
                  ),
                ),
            ),
          ),
        )
      : el("p", { class: "empty" }, "This environment offers no tools."),
    runner,
  );
  const preset = tools.find((t) => t.name === params.tool);
  if (preset) open(preset);
}
