// Settings → Provider keys (issue 31): set, replace and remove a provider's API key, and grant
// it to a paired environment. The value goes from the password field to the host in one
// message (keys.set) and is never shown again: the field is cleared before the call is even
// answered, and the value is kept in no page state, URL, history or storage. The host lists
// each key by variable and fingerprint; every rule (which variables, how long a value, who may
// grant) is the host's, said in its refusals.

import { el, literal, name, replace, tableBox } from "../dom.mjs";
import { clearError, guarded, showRefusal } from "./alerts.mjs";
import { confirmDialog } from "./dialog.mjs";
import { checkAsTyped } from "./validate.mjs";

export async function renderKeys(node, app) {
  const got = await guarded("Reading the provider keys", () => app.host.call("keys.list"));
  if (!got) {
    replace(node);
    return;
  }
  let list = got.result;
  let names = {};
  try {
    const envs = (await app.host.call("env.list")).result.environments;
    names = Object.fromEntries(envs.map((e) => [e.envKey, e.name]));
  } catch {
    names = {}; // envKeys are shown as they are
  }
  const status = el("p", {
    id: "keys-status",
    role: "status",
    "aria-live": "polite",
    class: "muted",
  });

  async function act(op, args, what) {
    status.textContent = `${what}…`;
    try {
      const done = await app.host.call(op, args, { human: true });
      list = done.result;
      status.textContent = `${what}: done (audit record ${done.logged ?? "—"}).`;
      clearError();
    } catch (err) {
      status.textContent = "";
      showRefusal(err, what);
    }
    draw();
  }

  function form() {
    const provider = el(
      "select",
      { id: "key-provider" },
      list.providers.map((p) => el("option", { value: p.id, "data-variable": p.variable }, p.name)),
      el("option", { value: "" }, "Other (custom name)…"),
    );
    const custom = el("input", {
      type: "text",
      id: "key-custom",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: "provider name",
    });
    const variable = el("input", {
      type: "text",
      id: "key-variable",
      autocomplete: "off",
      spellcheck: "false",
      value: list.providers[0]?.variable ?? "",
    });
    const value = el("input", {
      type: "password",
      id: "key-value",
      autocomplete: "off",
      spellcheck: "false",
    });
    provider.addEventListener("change", () => {
      const chosen = provider.selectedOptions[0];
      if (chosen?.dataset.variable) {
        variable.value = chosen.dataset.variable;
        variable.dispatchEvent(new Event("input")); // checked again: a stale sentence goes
      }
      custom.hidden = provider.value !== "";
    });
    custom.hidden = true;
    return el(
      "form",
      {
        id: "key-form",
        class: "inline-form",
        "aria-label": "Set a provider key",
        autocomplete: "off",
        onsubmit: async (event) => {
          event.preventDefault();
          const args = {
            provider: provider.value || custom.value.trim(),
            variable: variable.value.trim(),
            value: value.value,
          };
          value.value = ""; // the page's copy goes now, before the host even answers
          const held = list.keys.some((k) => k.variable === args.variable);
          if (held) {
            const sure = await confirmDialog({
              title: `Replace ${args.variable}?`,
              confirmLabel: "Replace",
              text: "The key held now is replaced; environments it is granted to keep the grant.",
            });
            if (!sure) return;
            args.replace = true;
          }
          await act(
            "keys.set",
            args,
            held ? `Replacing ${args.variable}` : `Setting ${args.variable}`,
          );
        },
      },
      el("label", { for: "key-provider" }, "Provider"),
      provider,
      custom,
      el("label", { for: "key-variable" }, "Variable"),
      variable,
      el("label", { for: "key-value" }, "Key"),
      value,
      el("button", { type: "submit" }, "Set key"),
      // the host's own rules for a key, said as it is typed: a key it would refuse is never
      // sent, nor asked "Replace?" for (the form does not submit while a field is invalid);
      // the variable as the form sends it (trimmed): its pattern, then the denied names
      checkAsTyped(variable, "keys.set", "variable", { transform: (v) => v.trim() }),
      checkAsTyped(value, "keys.set", "value"),
    );
  }

  function grants(key) {
    if (!list.paired.length) return el("span", { class: "muted" }, "No paired environment");
    return el(
      "ul",
      { class: "chips" },
      list.paired.map((envKey) => {
        const on = key.granted.includes(envKey);
        const id = `grant-${key.variable}-${envKey}`;
        return el(
          "li",
          { class: "chip" },
          el("input", {
            type: "checkbox",
            id,
            role: "switch",
            checked: on,
            "data-env": envKey,
            onchange: (event) =>
              act(
                event.target.checked ? "keys.grant" : "keys.revoke_grant",
                { variable: key.variable, envKey },
                `${event.target.checked ? "Granting" : "Revoking"} ${key.variable}`,
              ),
          }),
          el("label", { for: id }, name(names[envKey] ?? envKey)),
        );
      }),
    );
  }

  function table() {
    if (!list.keys.length) return el("p", { class: "empty" }, "No provider key is held.");
    return tableBox(
      el(
        "table",
        { class: "table", id: "keys-table" },
        el("caption", { class: "visually-hidden" }, "Provider keys"),
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ["Provider", "Variable", "Fingerprint", "Set", "Granted to"].map((h) =>
              el("th", { scope: "col" }, h),
            ),
            el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        el(
          "tbody",
          {},
          list.keys.map((k) =>
            el(
              "tr",
              { "data-variable": k.variable },
              el("td", {}, name(k.provider)),
              el("td", {}, literal(k.variable)),
              el("td", { class: "fingerprint" }, literal(k.fingerprint)),
              el("td", {}, new Date(k.replaced_at ?? k.set_at).toLocaleString()),
              el("td", {}, grants(k)),
              el(
                "td",
                {},
                el(
                  "button",
                  {
                    type: "button",
                    class: "link",
                    "aria-label": `Remove ${k.variable}`,
                    onclick: async () => {
                      const sure = await confirmDialog({
                        title: `Remove ${k.variable}?`,
                        confirmLabel: "Remove",
                        text: "The key and its grants are removed from this host; set it again to use it.",
                      });
                      if (sure)
                        await act(
                          "keys.remove",
                          { variable: k.variable },
                          `Removing ${k.variable}`,
                        );
                    },
                  },
                  "Remove",
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }

  const draw = () =>
    replace(
      node,
      el("h3", { class: "section" }, "Provider keys"),
      el(
        "p",
        { class: "muted" },
        "API keys a coding agent is given as an environment variable, only on an environment you grant. " +
          "A key is never shown again: it is listed by the first 8 hex digits of its sha256.",
      ),
      status,
      table(),
      form(),
    );
  draw();
}
