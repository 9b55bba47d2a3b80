// Settings → Harness (issue 31): for each paired environment and capability, which of the agent
// templates its operator pinned (runners.toml) a spawn uses. What is listed is the host's answer
// (harness.list): each template's label, the program's name and what the environment's runner
// found of it (its own probe, never the page's word), the provider keys it needs. Choosing is a
// person's gesture (harness.choose), kept by the host; a mission's letter never names it. The
// list asks every paired environment, so it fills in after the rest of Settings is shown.

import { el, literal, name, replace, tableBox } from "../dom.mjs";
import { clearError, showRefusal } from "./alerts.mjs";

function found(t) {
  if (t.found === null || t.found === undefined)
    return el("span", { class: "muted" }, t.said ?? "not probed yet");
  if (!t.found)
    return el(
      "span",
      {},
      el("span", { class: "state off" }, "not found"),
      " ",
      el("span", { class: "muted" }, t.said ?? t.reason),
    );
  const version = t.version
    ? literal(t.version)
    : el("span", { class: "muted" }, "no version printed");
  return el(
    "span",
    {},
    el("span", { class: "state on" }, "found"),
    " ",
    version,
    t.reason ? el("span", { class: "muted" }, ` (${t.said ?? t.reason})`) : null,
  );
}

export async function renderHarness(node, app) {
  const status = el("p", {
    id: "harness-status",
    role: "status",
    "aria-live": "polite",
    class: "muted",
  });
  const intro = el(
    "p",
    { class: "muted" },
    "Which coding-agent template each environment's runner uses, among those its operator pinned. " +
      "What a runner found of each program is its own probe; a mission's letter never names the choice.",
  );
  let list = null;

  async function choose(envKey, capability, label) {
    const what = `Choosing ${label} for ${capability}`;
    status.textContent = `${what}…`;
    try {
      const done = await app.host.call(
        "harness.choose",
        { envKey, capability, label },
        { human: true },
      );
      list = done.result;
      status.textContent = `${what}: done (audit record ${done.logged ?? "—"}).`;
      clearError();
    } catch (err) {
      status.textContent = "";
      showRefusal(err, what);
    }
    draw();
  }

  function capabilityTable(env, cap) {
    const group = `harness-${env.env_key}-${cap.capability}`;
    const rows = cap.labels.map((label) => {
      const pinning = cap.runners
        .map((r) => [r, r.templates.find((t) => t.label === label)])
        .filter(([, t]) => t);
      const first = pinning[0]?.[1];
      const id = `${group}-${label}`;
      return el(
        "tr",
        { "data-label": label, class: cap.active === label ? "active" : null },
        el(
          "td",
          {},
          el("input", {
            type: "radio",
            id,
            name: group,
            value: label,
            checked: cap.active === label,
            onchange: () => choose(env.env_key, cap.capability, label),
          }),
        ),
        el("td", {}, el("label", { for: id }, literal(label))),
        el("td", {}, first ? literal(first.executable) : "—"),
        el(
          "td",
          { class: "probe" },
          pinning.map(([r, t]) =>
            el(
              "div",
              { "data-runner": r.runner_id },
              cap.runners.length > 1 ? [literal(r.runner_id), ": "] : null,
              found(t),
              r.live ? null : el("span", { class: "muted" }, " (runner not live)"),
            ),
          ),
        ),
        el(
          "td",
          {},
          first?.keys.length
            ? first.keys.flatMap((k, i) => (i ? [", ", literal(k)] : [literal(k)]))
            : el("span", { class: "muted" }, "none"),
        ),
      );
    });
    return el(
      "div",
      { class: "harness-capability", "data-capability": cap.capability },
      el(
        "h4",
        {},
        "Runners for ",
        literal(cap.capability),
        cap.chosen
          ? ""
          : el("span", { class: "muted" }, " — the runner's first template (no choice made)"),
      ),
      cap.stale
        ? el(
            "p",
            { class: "warn" },
            `The template chosen (${cap.active}) is no longer pinned there: choose another.`,
          )
        : null,
      tableBox(
        el(
          "table",
          { class: "table harness-table" },
          el("caption", { class: "visually-hidden" }, `Agent templates for ${cap.capability}`),
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              ["Active", "Template", "Program", "What the runner found", "Keys it needs"].map((h) =>
                el("th", { scope: "col" }, h),
              ),
            ),
          ),
          el("tbody", {}, rows),
        ),
      ),
    );
  }

  function environments() {
    if (!list) return null;
    if (!list.environments.length) return el("p", { class: "empty" }, "No paired environment.");
    return list.environments.map((env) =>
      el(
        "div",
        { class: "harness-env", "data-env": env.env_key },
        el("h4", { class: "env-name" }, name(env.name)),
        env.unreachable
          ? el("p", { class: "muted" }, `Could not be read: ${env.unreachable}`)
          : env.capabilities.length
            ? env.capabilities.map((cap) => capabilityTable(env, cap))
            : el("p", { class: "muted" }, "No runner is pinned there."),
      ),
    );
  }

  const draw = () =>
    replace(node, el("h3", { class: "section" }, "Harness"), intro, status, environments());
  status.textContent = "Asking the paired environments…";
  draw();
  try {
    list = (await app.host.call("harness.list")).result;
    status.textContent = "";
  } catch (err) {
    status.textContent = "";
    showRefusal(err, "Reading the harness");
  }
  draw();
}
