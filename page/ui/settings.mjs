// Settings: the operator's policy as the host exposes it (policy.get), changed one act at a
// time by policy.set — a person's gesture, audited, in effect on the very next request. The host
// says which switches exist and how to offer each (bool, int with bounds, list, map); labels for
// the ones we know, the field name for any the host adds later. The policy holds no secret; the
// provider keys below are their own section (page/ui/keys.mjs) and never shown; the harness (which
// pinned agent template each environment's runner uses) is page/ui/harness.mjs.

import { el, literal, name, replace, tableBox } from "../dom.mjs";
import { clearError, guarded, showRefusal } from "./alerts.mjs";
import { POLICY_FIELDS } from "../contract.gen.mjs";
import { confirmDialog } from "./dialog.mjs";
import { renderHarness } from "./harness.mjs";
import { renderKeys } from "./keys.mjs";

// label and help of each switch the core describes (core/policy.py: title, description)
const KNOWN = Object.fromEntries(
  Object.entries(POLICY_FIELDS).map(([name, f]) => [name, [f.title, f.description]]),
);

export async function renderSettings(node, app) {
  const got = await guarded("Reading the policy", () => app.host.call("policy.get"));
  if (!got) {
    replace(node, el("h2", {}, "Settings"));
    return;
  }
  const { fields } = got.result;
  let { policy } = got.result;
  const info = await guarded("Reading the host", () => app.host.call("host.info"));
  let tools = [];
  try {
    const envs = (await app.host.call("env.list")).result.environments;
    const local = envs.find((e) => e.kind === "local");
    tools = (await app.host.call("tool.discover", { envKey: local.envKey })).result.tools ?? [];
  } catch {
    tools = []; // the host could not describe its tools: switches by name below
  }
  const keys = el("section", {
    class: "settings-group",
    id: "provider-keys",
    "aria-label": "Provider keys",
  });
  const harness = el("section", {
    class: "settings-group",
    id: "harness",
    "aria-label": "Harness",
  });
  const status = el("p", {
    id: "settings-status",
    role: "status",
    "aria-live": "polite",
    class: "muted",
  });

  async function change(changes, what) {
    status.textContent = `Saving ${what}…`;
    try {
      const done = await app.host.call("policy.set", { changes }, { human: true });
      policy = done.result.policy;
      status.textContent = done.result.changed.length
        ? `Saved: ${done.result.changed.join(", ")} (audit record ${done.logged ?? "—"}).`
        : "Nothing changed.";
      app.policyChanged(policy);
      clearError(); // a refusal from an earlier change is stale now
      return true;
    } catch (err) {
      status.textContent = "";
      showRefusal(err, `Saving ${what}`);
      return false;
    } finally {
      draw();
    }
  }

  const label = (name) => KNOWN[name]?.[0] ?? name;
  const help = (name, fallback) => KNOWN[name]?.[1] ?? fallback ?? "";

  function boolField(f) {
    const id = `setting-${f.name}`;
    const box = el("input", {
      type: "checkbox",
      id,
      role: "switch",
      checked: Boolean(policy[f.name]),
      "aria-describedby": `${id}-help`,
      onchange: async (event) => {
        const want = event.target.checked;
        if (f.name === "read_only" && !want) {
          const sure = await confirmDialog({
            title: "Turn SAFE mode off?",
            confirmLabel: "Allow writes",
            text: "Writes will be admitted again on the next request: files, letters, blocks and receipts can change.",
          });
          if (!sure) {
            event.target.checked = true;
            return;
          }
        }
        await change({ [f.name]: want }, label(f.name));
      },
    });
    return el(
      "div",
      { class: "setting setting-bool", "data-setting": f.name },
      el(
        "div",
        { class: "switch-row" },
        box,
        el("label", { for: id }, label(f.name)),
        el(
          "span",
          { class: `state ${policy[f.name] ? "on" : "off"}` },
          policy[f.name] ? "on" : "off",
        ),
      ),
      el("p", { class: "muted", id: `${id}-help` }, help(f.name, f.description)),
    );
  }

  function intField(f) {
    const id = `setting-${f.name}`;
    const input = el("input", {
      type: "number",
      id,
      value: String(policy[f.name]),
      min: f.minimum ?? null,
      max: f.maximum ?? null,
      step: "1",
      "aria-describedby": `${id}-help`,
    });
    return el(
      "form",
      {
        class: "setting setting-int",
        "data-setting": f.name,
        "aria-label": label(f.name),
        novalidate: true,
        onsubmit: async (event) => {
          event.preventDefault();
          await change({ [f.name]: Number(input.value) }, label(f.name));
        },
      },
      el("label", { for: id }, label(f.name)),
      el("div", { class: "inline-form" }, input, el("button", { type: "submit" }, "Save")),
      el(
        "p",
        { class: "muted", id: `${id}-help` },
        help(f.name, f.description),
        f.minimum !== null || f.maximum !== null
          ? ` Between ${f.minimum ?? "—"} and ${f.maximum ?? "—"}.`
          : "",
      ),
    );
  }

  function listField(f) {
    const id = `setting-${f.name}`;
    const values = policy[f.name] ?? [];
    const input = el("input", {
      type: "text",
      id,
      autocomplete: "off",
      spellcheck: "false",
      "aria-describedby": `${id}-help`,
    });
    const known = f.name === "disabled_tools" ? tools.map((t) => t.name) : [];
    // Tools this host describes are switches (checked = on); a name it does not describe can
    // still be switched off by name, and is listed under the switches.
    const byName = values.filter((v) => !known.includes(v));
    const isTools = f.name === "disabled_tools";
    return el(
      "div",
      { class: "setting setting-list", "data-setting": f.name },
      el("h3", {}, label(f.name)),
      el("p", { class: "muted", id: `${id}-help` }, help(f.name, f.description)),
      known.length
        ? el(
            "ul",
            { class: "tool-switches", "aria-label": "Tool switches (checked = on)" },
            known.map((tool) => {
              const tid = `${id}-${tool}`;
              const on = !values.includes(tool);
              return el(
                "li",
                { "data-tool": tool },
                el("input", {
                  type: "checkbox",
                  id: tid,
                  role: "switch",
                  checked: on,
                  "aria-describedby": `${id}-help`,
                  onchange: (event) =>
                    change(
                      {
                        [f.name]: event.target.checked
                          ? values.filter((v) => v !== tool)
                          : [...values, tool],
                      },
                      `tool ${tool}`,
                    ),
                }),
                el("label", { for: tid }, name(tool)),
                el(
                  "span",
                  { class: `state tool-state ${on ? "on" : "off"}`, "aria-hidden": "true" },
                  on ? "on" : "off",
                ),
              );
            }),
          )
        : null,
      isTools
        ? el(
            "p",
            { class: "muted", id: `${id}-summary` },
            values.length
              ? `Switched off: ${values.length} tool${values.length === 1 ? "" : "s"} (${values.join(", ")}).`
              : "Switched off: none — every tool is on.",
          )
        : null,
      (isTools ? byName : values).length
        ? [
            isTools
              ? el("p", { class: "small" }, "Switched off by name (not described by this host):")
              : null,
            el(
              "ul",
              { class: "chips" },
              (isTools ? byName : values).map((v) =>
                el(
                  "li",
                  { class: "chip" },
                  name(v),
                  el(
                    "button",
                    {
                      type: "button",
                      class: "link",
                      "aria-label": `Remove ${v} from ${label(f.name)}`,
                      onclick: () =>
                        change({ [f.name]: values.filter((x) => x !== v) }, label(f.name)),
                    },
                    isTools ? "Switch on" : "Remove",
                  ),
                ),
              ),
            ),
          ]
        : isTools
          ? null
          : el("p", { class: "empty" }, "None."),
      el(
        "form",
        {
          class: "inline-form",
          "aria-label": isTools ? "Switch a tool off by name" : `Add to ${label(f.name)}`,
          onsubmit: async (event) => {
            event.preventDefault();
            const value = input.value.trim();
            if (value && !values.includes(value))
              await change({ [f.name]: [...values, value] }, label(f.name));
          },
        },
        el("label", { for: id }, isTools ? "Switch off by name" : "Add"),
        input,
        el("button", { type: "submit" }, isTools ? "Switch off" : "Add"),
      ),
    );
  }

  function mapField(f) {
    const entries = Object.entries(policy[f.name] ?? {});
    const keyId = `setting-${f.name}-key`;
    const valId = `setting-${f.name}-value`;
    const keyInput = el("input", { type: "text", id: keyId, autocomplete: "off" });
    const valInput = el("input", { type: "text", id: valId, autocomplete: "off" });
    return el(
      "div",
      { class: "setting setting-map", "data-setting": f.name },
      el("h3", {}, label(f.name)),
      el("p", { class: "muted" }, help(f.name, f.description)),
      entries.length
        ? tableBox(
            el(
              "table",
              { class: "table" },
              el("caption", { class: "visually-hidden" }, label(f.name)),
              el(
                "thead",
                {},
                el(
                  "tr",
                  {},
                  el("th", { scope: "col" }, "Name"),
                  el("th", { scope: "col" }, "Value"),
                  el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")),
                ),
              ),
              el(
                "tbody",
                {},
                entries.map(([k, v]) =>
                  el(
                    "tr",
                    {},
                    el("td", {}, literal(k)),
                    el("td", {}, literal(v)),
                    el(
                      "td",
                      {},
                      el(
                        "button",
                        {
                          type: "button",
                          class: "link",
                          "aria-label": `Remove ${k}`,
                          onclick: () => {
                            const next = { ...policy[f.name] };
                            delete next[k];
                            change({ [f.name]: next }, label(f.name));
                          },
                        },
                        "Remove",
                      ),
                    ),
                  ),
                ),
              ),
            ),
          )
        : el("p", { class: "empty" }, "None."),
      el(
        "form",
        {
          class: "inline-form",
          "aria-label": `Add to ${label(f.name)}`,
          onsubmit: async (event) => {
            event.preventDefault();
            if (keyInput.value.trim())
              await change(
                { [f.name]: { ...policy[f.name], [keyInput.value.trim()]: valInput.value.trim() } },
                label(f.name),
              );
          },
        },
        el("label", { for: keyId }, "Name"),
        keyInput,
        el("label", { for: valId }, "Value"),
        valInput,
        el("button", { type: "submit" }, "Add"),
      ),
    );
  }

  const draw = () => {
    const focusId = node.contains(document.activeElement) ? document.activeElement.id : null;
    const byKind = { bool: boolField, int: intField, list: listField, map: mapField };
    const groups = [
      ["Safety", fields.filter((f) => f.kind === "bool")],
      ["Peer channels", fields.filter((f) => f.kind === "int")],
      ["Tools and access", fields.filter((f) => f.kind === "list" || f.kind === "map")],
    ];
    const v = info?.result;
    replace(
      node,
      el("h2", {}, "Settings"),
      el(
        "p",
        { class: "muted" },
        "The operator's policy. Each change is your gesture, recorded in the audit, and applies to the very next request.",
      ),
      status,
      groups
        .filter(([, fs]) => fs.length)
        .map(([title, fs]) =>
          el(
            "section",
            { class: "settings-group", "aria-label": title },
            el("h3", { class: "section" }, title),
            fs.map((f) => byKind[f.kind](f)),
          ),
        ),
      keys,
      harness,
      v
        ? el(
            "section",
            { class: "settings-group", "aria-label": "About this host" },
            el("h3", { class: "section" }, "About this host"),
            el(
              "dl",
              { class: "about" },
              Object.entries(v.versions).map(([k, x]) => [el("dt", {}, k), el("dd", {}, x)]),
              el("dt", {}, "protocol"),
              el("dd", {}, String(v.protocol)),
            ),
          )
        : null,
    );
    if (focusId) document.getElementById(focusId)?.focus();
  };
  await renderKeys(keys, app); // its own section, drawn by itself (page/ui/keys.mjs), before the page shows
  draw();
  renderHarness(harness, app); // asks every paired environment: it fills in by itself (page/ui/harness.mjs)
}
