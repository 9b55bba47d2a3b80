// Environments surface (SPEC §6, §11): the local environment and each peer — name, envKey
// prefix, where it runs, paired, reachable — with create, pair, unpair, revoke, and a peer's
// projects: list, create, add files, browse its files, export as a .zip that downloads through
// this page. Remote environments (servers on other machines, issue 15) are added by URL and a
// one-time code; the host worker claims the code and keeps the bearer. The page asks as the
// local operator; it never holds a bearer or a host token (the host does): it sees a remote's
// envKey, name, origin, fingerprint and state only.

import { el, formatBytes, formatTime, name, replace, tableBox } from "../dom.mjs";
import { blocked, guard, safeNotice } from "./safe.mjs";
import { acted, clearAlerts, guarded, showNotice, submitting } from "./alerts.mjs";
import { LIMITS, NAME_PATTERNS } from "../contract.gen.mjs";
import { confirmDialog } from "./dialog.mjs";
import { checkAsTyped } from "./validate.mjs";
import { openRemoteMissions } from "./remote_missions.mjs";
import { memoryWords } from "./archive.mjs";

const MAX_TOOL_FILE = LIMITS.call_file_bytes; // bytes of one file sent inside a call envelope

function prefix(envKey) {
  return `${envKey.slice(0, 11)}…`;
}

function b64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

const REMOTE_STATES = {
  idle: "paired — connects on first use",
  connected: "connected",
  reconnecting: "reconnecting…",
  unreachable: "unreachable",
  revoked: "revoked",
};

function since(ms) {
  if (!ms) return "never";
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = el("a", { href: url, download: name, hidden: true });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The remote's reachability cell's content: its state in words and its last contact. */
function reachCell(env) {
  return [
    el(
      "span",
      { class: "env-state", "data-state": env.remote.state },
      REMOTE_STATES[env.remote.state] ?? env.remote.state,
    ),
    el("br"),
    el("span", { class: "muted" }, `last contact ${since(env.remote.lastContact)}`),
  ];
}

/**
 * The host said a remote's state changed (issue 29 item 15): list again and update the shown
 * rows in place — the state, the pairing, the Revoke button; a removed remote's row goes —
 * without re-rendering the surface (what the person is typing stays).
 */
export async function remoteChanged(node, app) {
  if (!node) return;
  let listed;
  try {
    listed = await app.host.call("env.list");
  } catch {
    return; // the next rendering lists again
  }
  const byName = new Map(
    listed.result.environments.filter((e) => e.remote).map((e) => [e.name, e]),
  );
  for (const row of node.querySelectorAll("tr[data-env][data-remote]")) {
    const env = byName.get(row.dataset.env);
    if (!env) {
      row.remove();
      continue;
    }
    replace(row.querySelector(".env-reach"), reachCell(env));
    row.querySelector(".env-paired").textContent = env.paired
      ? "paired"
      : env.revoked
        ? "revoked"
        : "not paired";
    if (!env.paired) row.querySelector("button[data-op='env.revoke']")?.remove();
  }
}

export async function renderEnvironments(node, app, params = {}) {
  const listed = await guarded("Listing environments", () => app.host.call("env.list"));
  const envs = listed?.result.environments ?? [];
  const local = envs.find((e) => e.kind === "local");
  const peers = envs.filter((e) => e.kind === "peer");
  const nameInput = el("input", {
    id: "new-env-name",
    type: "text",
    required: true,
    autocomplete: "off",
    pattern: NAME_PATTERNS.environment.html,
    "aria-describedby": "new-env-hint",
  });
  const creating = el("p", { class: "muted", role: "status", "aria-live": "polite" });
  const createButton = guard(
    app,
    "env.create",
    el("button", { type: "submit", class: "primary", id: "create-env" }, "Create environment"),
  );
  const form = el(
    "form",
    {
      class: "inline-form",
      "aria-label": "Create a peer environment",
      onsubmit: async (event) => {
        event.preventDefault();
        creating.textContent =
          "Starting the environment server (it boots its own Python; a few seconds)…";
        const made = await submitting(createButton, "Creating the environment", () =>
          app.host.call("env.create", { name: nameInput.value }, { human: true }),
        );
        creating.textContent = "";
        if (made) {
          clearAlerts();
          showNotice(`Environment ${made.result.environment.name} is running.`);
          app.refresh();
        }
      },
    },
    el("label", { for: "new-env-name" }, "New peer environment"),
    nameInput,
    createButton,
    el("span", { id: "new-env-hint", class: "muted" }, NAME_PATTERNS.environment.rule),
    checkAsTyped(nameInput, "env.create", "name"),
  );

  const urlInput = el("input", {
    id: "remote-url",
    type: "url",
    required: true,
    autocomplete: "off",
    placeholder: "server URL",
    "aria-describedby": "remote-hint",
  });
  const codeInput = el("input", {
    id: "remote-code",
    type: "text",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "XXXXX-XXXXX",
  });
  const addButton = guard(
    app,
    "env.add",
    el("button", { type: "submit", id: "add-remote" }, "Add remote"),
  );
  const adding = el("p", {
    class: "muted",
    role: "status",
    "aria-live": "polite",
    id: "remote-status",
  });
  const addForm = el(
    "form",
    {
      class: "inline-form",
      id: "remote-form",
      "aria-label": "Add a remote environment",
      onsubmit: async (event) => {
        event.preventDefault();
        adding.textContent = "Claiming the code at the server…";
        const added = await submitting(addButton, "Adding the remote environment", () =>
          app.host.call("env.add", { url: urlInput.value, code: codeInput.value }, { human: true }),
        );
        adding.textContent = "";
        codeInput.value = "";
        if (added) {
          const env = added.result.environment;
          clearAlerts();
          showNotice(
            `Paired with ${env.name} at ${env.remote.origin}. Compare its fingerprint ${env.remote.fingerprint} with the one its operator sees before you call it.`,
          );
          app.refresh();
        }
      },
    },
    el("label", { for: "remote-url" }, "Add a remote environment: server URL"),
    urlInput,
    el("label", { for: "remote-code" }, "one-time code"),
    codeInput,
    addButton,
    el(
      "span",
      { id: "remote-hint", class: "muted" },
      "Its operator runs voicebox-env pair-code and reads you the code.",
    ),
  );

  const act = (label, op, env, text, danger = false) =>
    el(
      "button",
      {
        type: "button",
        class: danger ? "danger" : null,
        "aria-label": `${label} ${env.name}`,
        disabled: Boolean(blocked(app, op)),
        title: blocked(app, op),
        "data-op": op,
        onclick: async () => {
          if (
            text &&
            !(await confirmDialog({
              title: `${label} ${env.name}`,
              text,
              confirmLabel: label,
              danger,
            }))
          )
            return;
          const done = await acted(`${label} ${env.name}`, () =>
            app.host.call(op, { envKey: env.envKey }, { human: true }),
          );
          if (done) {
            if (op === "env.revoke")
              showNotice(
                `Revoked: ${done.result.channelsClosed} live channel(s) closed. Audit record #${done.logged}.`,
              );
            if (op === "env.remove") showNotice(`Removed ${env.name} from this browser.`);
            app.refresh();
          }
        },
      },
      label,
    );

  const remoteActions = (env) => [
    env.paired
      ? act(
          "Revoke",
          "env.revoke",
          env,
          `${env.name} at ${env.remote.origin} revokes this pairing now: its channels close (1008 pairing-revoked) and every later call is refused pairing-revoked.`,
          true,
        )
      : null,
    act(
      "Remove",
      "env.remove",
      env,
      `This browser forgets ${env.name} (${env.remote.origin}) and its bearer; it can no longer reach that server. Revoke first to end the pairing at the server too.`,
    ),
  ];
  const rows = peers.map((env) =>
    el(
      "tr",
      { "data-env": env.name, "data-remote": env.remote ? env.remote.origin : null },
      el(
        "td",
        { class: "name-cell" },
        name(
          env.name,
          {
            type: "button",
            class: "link env-open",
            onclick: () => app.go("environments", { env: env.envKey }),
          },
          "button",
        ),
      ),
      el("td", {}, el("code", { title: env.envKey }, prefix(env.envKey))),
      el(
        "td",
        { class: "env-where" },
        env.remote
          ? [
              el("span", { class: "state off" }, "remote"),
              " ",
              name(env.remote.origin, { class: "env-origin" }),
              el("br"),
              el("span", { class: "muted" }, "fingerprint "),
              el("code", { class: "env-fingerprint" }, env.remote.fingerprint),
            ]
          : "in this browser",
      ),
      el(
        "td",
        { class: "env-paired" },
        env.paired ? "paired" : env.revoked ? "revoked" : "not paired",
      ),
      el(
        "td",
        { class: "env-reach" },
        env.remote
          ? reachCell(env)
          : env.connected
            ? "connected"
            : env.running
              ? "running"
              : "stopped (starts on use)",
      ),
      el(
        "td",
        { class: "row-actions" },
        env.remote
          ? remoteActions(env)
          : env.paired
            ? [
                act(
                  "Unpair",
                  "env.unpair",
                  env,
                  `This host forgets its bearer for ${env.name}. Calls will be refused until you pair again.`,
                ),
                act(
                  "Revoke",
                  "env.revoke",
                  env,
                  `${env.name} revokes this pairing now: every live channel using it is closed (1008 pairing-revoked), calls in flight are answered pairing-revoked, and the bearer stays revoked.`,
                  true,
                ),
              ]
            : act(env.revoked ? "Pair again" : "Pair", "env.pair", env, null),
      ),
    ),
  );

  const detail = el("section", { id: "env-detail", "aria-label": "Environment projects" });
  const contact = contactForm(app, [local, ...peers.filter((e) => e.paired)].filter(Boolean));
  replace(
    node,
    el("h2", {}, "Environments"),
    safeNotice(el, app),
    local
      ? el(
          "p",
          {},
          "This browser: ",
          el("strong", {}, "local"),
          " — ",
          el("code", { title: local.envKey }, prefix(local.envKey)),
          el("span", { class: "muted" }, " · serves the projects on the Projects surface"),
        )
      : null,
    form,
    creating,
    addForm,
    adding,
    peers.length
      ? tableBox(
          el(
            "table",
            { class: "table", id: "env-table" },
            el("caption", { class: "visually-hidden" }, "Peer environments"),
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ...["Name", "envKey", "Where", "Pairing", "Reachable", ""].map((h) =>
                  el("th", { scope: "col" }, h),
                ),
              ),
            ),
            el("tbody", {}, rows),
          ),
        )
      : el("p", { class: "empty" }, "No peer environments yet — create one or add a remote above."),
    contact,
    await inboxReader(app, params),
    detail,
  );
  const chosen = peers.find((e) => e.envKey === params.env);
  if (chosen)
    await renderPeer(detail, app, chosen, { missions: params.missions, mission: params.mission });
}

// An agent's inbox in a project's mailbox (where a direct delivery puts the packet), read with
// mailbox.read kind=note to=<agent>. Every letter shows as text nodes only.
async function inboxReader(app, params) {
  const listed = await guarded("Listing projects", () => app.host.call("project.list"));
  const projects = listed?.result.projects ?? [];
  if (!projects.length) return null;
  const project = el(
    "select",
    { id: "inbox-project" },
    projects.map((p) =>
      el("option", { value: p.id, selected: (params.project ?? app.project?.id) === p.id }, p.name),
    ),
  );
  const agent = el("input", {
    id: "inbox-agent",
    type: "text",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    value: params.agent ?? "",
  });
  const shown = el("div", { id: "inbox-letters", "aria-live": "polite" });
  const readButton = el("button", { type: "submit", id: "inbox-read" }, "Read the inbox");
  const form = el(
    "form",
    {
      class: "inline-form",
      id: "inbox-form",
      "aria-label": "Read an agent's inbox",
      onsubmit: async (e) => {
        e.preventDefault();
        const who = agent.value.trim();
        const read = await submitting(readButton, "Reading the inbox", () =>
          app.host.call("mailbox.read", { project: project.value, kind: "note", to: who }),
        );
        if (!read) return;
        const letters = read.result.letters;
        replace(
          shown,
          letters.length
            ? el(
                "ol",
                { class: "inbox-list" },
                letters.map((l) =>
                  el(
                    "li",
                    { class: "inbox-letter" },
                    el(
                      "p",
                      { class: "one-line small" },
                      el("span", { class: "muted" }, `${formatTime(l.at)} · from `),
                      name(l.from, { class: "literal" }),
                      l.subject
                        ? [
                            el("span", { class: "muted" }, " · "),
                            name(l.subject, { class: "literal inbox-subject" }),
                          ]
                        : null,
                    ),
                    el(
                      "pre",
                      { class: "text-view inbox-body", tabindex: "0", "aria-label": "Letter text" },
                      l.body ?? "",
                    ),
                  ),
                ),
              )
            : el("p", { class: "empty" }, "This inbox is empty."),
        );
      },
    },
    el("label", { for: "inbox-project" }, "Inbox in"),
    project,
    el("label", { for: "inbox-agent" }, "of agent"),
    agent,
    readButton,
    checkAsTyped(agent, "mission.deliver", "to", { transform: (v) => v.trim() }),
  );
  return el(
    "section",
    { "aria-labelledby": "inbox-head", class: "inbox" },
    el("h3", { id: "inbox-head", class: "section" }, "Agent inboxes"),
    el(
      "p",
      { class: "muted small" },
      "What was delivered to an agent, as the mailbox holds it. Delivery is not execution: nothing runs until the agent acts.",
    ),
    form,
    shown,
  );
}

// Fleet contact: a message to an agent, addressed environmentKey/agentId. Delivery is not
// execution — the host puts it in that environment's agent inbox.
function contactForm(app, envs) {
  if (!envs.length) return null;
  const target = el(
    "select",
    { id: "contact-env" },
    envs.map((e) => el("option", { value: e.envKey }, e.kind === "local" ? "local" : e.name)),
  );
  const agent = el("input", {
    id: "contact-agent",
    type: "text",
    required: true,
    autocomplete: "off",
    placeholder: "agent id",
  });
  const text = el("input", {
    id: "contact-text",
    type: "text",
    required: true,
    autocomplete: "off",
    placeholder: "message",
  });
  const sendButton = el("button", { type: "submit" }, "Send");
  return el(
    "form",
    {
      class: "inline-form",
      id: "contact-form",
      "aria-label": "Message an agent",
      onsubmit: async (e) => {
        e.preventDefault();
        const sent = await submitting(sendButton, "Sending the message", () =>
          app.host.call(
            "fleet.contact",
            { environmentKey: target.value, agentId: agent.value, text: text.value },
            { human: true },
          ),
        );
        if (sent) {
          text.value = "";
          showNotice(
            `Delivered to ${sent.result.agentId} (${sent.result.route}) — delivery is not execution.`,
          );
        }
      },
    },
    el("label", { for: "contact-env" }, "Message an agent in"),
    target,
    el("label", { for: "contact-agent", class: "visually-hidden" }, "Agent id"),
    agent,
    el("label", { for: "contact-text", class: "visually-hidden" }, "Message"),
    text,
    sendButton,
    checkAsTyped(agent, "fleet.contact", "agentId"),
    checkAsTyped(text, "fleet.contact", "text"),
  );
}

async function toolCall(app, env, tool, args, options = {}) {
  const tools = await app.host.call("tool.discover", { envKey: env.envKey });
  const found = tools.result.tools.find((t) => t.name === tool);
  if (!found)
    throw Object.assign(new Error(`${env.name} offers no tool ${tool}`), { code: "tool-unknown" });
  return app.host.call(
    "tool.call",
    { envKey: env.envKey, tool, descriptorId: found.descriptorId, args },
    options,
  );
}

// `open`: {missions, mission} — open that project's Missions… panel, at that mission (the
// tray's Open / Review… of a remote card, issue 30).
async function renderPeer(node, app, env, open = {}) {
  if (!env.paired) {
    replace(
      node,
      el(
        "p",
        { class: "empty" },
        env.revoked
          ? `${env.name} revoked this host's pairing: calls are refused pairing-revoked. Pair again to see its projects.`
          : `Pair with ${env.name} to see its projects.`,
      ),
    );
    return;
  }
  const listing = await guarded(`Listing ${env.name}'s projects`, () =>
    toolCall(app, env, "projects.list", {}),
  );
  const projects = listing?.result.result.projects ?? [];
  const projectName = el("input", {
    id: "peer-project-name",
    type: "text",
    required: true,
    autocomplete: "off",
  });
  const createButton = el(
    "button",
    { type: "submit", id: "create-peer-project" },
    "Create in peer",
  );
  const progress = el("div", { class: "upload-progress", id: "peer-progress", hidden: true });
  const showProgress = (label, value, max) => {
    progress.hidden = false;
    replace(
      progress,
      el("span", {}, label),
      el("progress", { max: String(Math.max(max, 1)), value: String(value), "aria-label": label }),
    );
  };

  const upload = (project) =>
    el("input", {
      type: "file",
      multiple: true,
      class: "visually-hidden-input",
      id: `peer-upload-${project.id}`,
      onchange: async (e) => {
        const files = [...e.target.files];
        e.target.value = "";
        let done = 0;
        for (const file of files) {
          if (file.size > MAX_TOOL_FILE) {
            guarded(`Uploading ${file.name}`, () =>
              Promise.reject(
                Object.assign(
                  new Error(
                    `A file sent to a peer inside a call is at most ${formatBytes(MAX_TOOL_FILE)}.`,
                  ),
                  { code: "message-too-large" },
                ),
              ),
            );
            continue;
          }
          showProgress(`Sending ${file.name} to ${env.name}`, done, files.length);
          const bytes = new Uint8Array(await file.arrayBuffer());
          const path = file.webkitRelativePath || file.name;
          if (
            await guarded(`Uploading ${path}`, () =>
              toolCall(app, env, "file.write", {
                project: project.id,
                path,
                content_b64: b64(bytes),
              }),
            )
          )
            done += 1;
        }
        showProgress(`Sent ${done} of ${files.length} files to ${env.name}`, done, files.length);
        await renderPeer(node, app, env);
      },
    });

  const exportProject = async (project) => {
    const walk = await guarded("Sizing the export", () =>
      toolCall(app, env, "file.walk", { project: project.id }),
    );
    const total = (walk?.result.result.files ?? []).reduce((n, f) => n + f.size, 0);
    showProgress(`Exporting ${project.name} from ${env.name}`, 0, total);
    const bar = progress.querySelector("progress");
    const answer = await acted(`Exporting ${project.name}`, () =>
      toolCall(
        app,
        env,
        "project.export",
        { project: project.id },
        {
          onChunk: (received) => {
            bar.value = Math.min(received, total);
          },
        },
      ),
    );
    if (!answer) {
      progress.hidden = true;
      return;
    }
    const blob = answer.stream ?? new Blob([]);
    showProgress(
      `Exported ${project.name} from ${env.name} (${formatBytes(blob.size)}) — done`,
      total,
      total,
    );
    download(blob, `${project.name}.zip`);
    showNotice(
      `Exported ${project.name}: ${formatBytes(blob.size)}, manifest sha256 ${answer.result.result.manifest_sha256 ?? ""}.${memoryWords(answer.result.result)}`,
    );
  };

  // Fenced commands of a remote (seed 002 §4): the host sends them with the bearer it holds;
  // the server decides whether they run (off until its operator turns exec on). One argument
  // per line — never a shell string.
  const commands = el("section", {
    id: "peer-command",
    "aria-label": "Run a command in a remote project",
    hidden: true,
  });
  const openCommands = (project) => {
    const kind = el(
      "select",
      { id: "command-kind" },
      el("option", { value: "exec" }, "exec — run a program"),
      el("option", { value: "git/init" }, "git init"),
      el("option", { value: "git/config" }, "git config"),
    );
    const argv = el("textarea", {
      id: "command-argv",
      rows: "3",
      spellcheck: "false",
      autocomplete: "off",
      "aria-describedby": "command-hint",
    });
    const key = el("input", {
      id: "command-key",
      type: "text",
      autocomplete: "off",
      placeholder: "user.name",
    });
    const value = el("input", { id: "command-value", type: "text", autocomplete: "off" });
    const runButton = guard(
      app,
      "env.command",
      el("button", { type: "submit", id: "run-command", class: "primary" }, "Run"),
    );
    const result = el("div", { id: "command-result", role: "status", "aria-live": "polite" });
    const argvRow = el(
      "div",
      { class: "field" },
      el("label", { for: "command-argv" }, "Program and arguments, one per line"),
      argv,
      el(
        "span",
        { id: "command-hint", class: "muted" },
        "Runs in the project's folder on the server, with a scrubbed environment and a time limit.",
      ),
    );
    const configRow = el(
      "div",
      { class: "field", hidden: true },
      el("label", { for: "command-key" }, "Key"),
      key,
      el("label", { for: "command-value" }, "Value"),
      value,
    );
    kind.addEventListener("change", () => {
      argvRow.hidden = kind.value !== "exec";
      configRow.hidden = kind.value !== "git/config";
    });
    commands.hidden = false;
    replace(
      commands,
      el("h4", {}, `Run a command in ${project.name} on ${env.name}`),
      el(
        "form",
        {
          class: "inline-form",
          "aria-label": `Run a command in ${project.name}`,
          onsubmit: async (e) => {
            e.preventDefault();
            const args = { envKey: env.envKey, project: project.id, command: kind.value };
            if (kind.value === "exec")
              args.argv = argv.value.split("\n").filter((line) => line !== "");
            if (kind.value === "git/config")
              Object.assign(args, { key: key.value, value: value.value });
            const done = await submitting(runButton, "Running the command", () =>
              app.host.call("env.command", args, { human: true }),
            );
            if (!done) return;
            const ran = done.result;
            replace(
              result,
              el(
                "p",
                { id: "command-status" },
                `exit status ${ran.exitStatus} · ${ran.durationMs} ms`,
                ran.timedOut ? " · stopped at its time limit" : "",
                ran.truncated ? " · output cut at its cap" : "",
              ),
              el("pre", { id: "command-output", class: "text-view" }, ran.output),
              el(
                "p",
                { class: "muted" },
                "output sha256 ",
                el("code", { class: "hash" }, ran.outputSha256),
              ),
            );
          },
        },
        el("label", { for: "command-kind" }, "Command"),
        kind,
        argvRow,
        configRow,
        runButton,
      ),
      result,
    );
    argv.focus();
  };

  // Missions that run there (issue 30): spawn, follow, the log, Cancel (remote_missions.mjs).
  const missions = el("section", {
    id: "remote-missions",
    "aria-label": "Missions in a remote project",
    hidden: true,
  });

  const tree = el("section", {
    id: "peer-tree",
    "aria-label": "Files of a peer project",
    hidden: true,
  });
  const openTree = async (project) => {
    const walk = await guarded(`Listing ${project.name}'s files`, () =>
      toolCall(app, env, "file.walk", { project: project.id }),
    );
    if (!walk) return;
    const files = walk.result.result.files ?? [];
    tree.hidden = false;
    replace(
      tree,
      el("h4", {}, `Files of ${project.name} (${files.length}, read-only)`),
      tableBox(
        el(
          "table",
          { class: "table", id: "peer-files" },
          el("caption", { class: "visually-hidden" }, `Files of ${project.name}`),
          el(
            "thead",
            {},
            el("tr", {}, el("th", { scope: "col" }, "Path"), el("th", { scope: "col" }, "Size")),
          ),
          el(
            "tbody",
            {},
            files.map((f) =>
              el(
                "tr",
                { "data-path": f.path },
                el("td", {}, name(f.path)),
                el("td", {}, formatBytes(f.size)),
              ),
            ),
          ),
        ),
      ),
    );
  };

  replace(
    node,
    el(
      "h3",
      {},
      `Projects in ${env.name}`,
      env.remote ? el("span", { class: "state off" }, ` remote · ${env.remote.origin}`) : null,
    ),
    el(
      "form",
      {
        class: "inline-form",
        "aria-label": `Create a project in ${env.name}`,
        onsubmit: async (e) => {
          e.preventDefault();
          if (
            await submitting(createButton, "Creating the project", () =>
              toolCall(app, env, "project.create", { name: projectName.value }),
            )
          )
            await renderPeer(node, app, env);
        },
      },
      el("label", { for: "peer-project-name" }, "New project"),
      projectName,
      createButton,
    ),
    progress,
    projects.length
      ? tableBox(
          el(
            "table",
            { class: "table", id: "peer-projects" },
            el("caption", { class: "visually-hidden" }, `Projects in ${env.name}`),
            el(
              "thead",
              {},
              el("tr", {}, el("th", { scope: "col" }, "Project"), el("th", { scope: "col" }, "")),
            ),
            el(
              "tbody",
              {},
              projects.map((p) =>
                el(
                  "tr",
                  { "data-project": p.id },
                  el("td", { class: "name-cell" }, name(p.name)),
                  el(
                    "td",
                    { class: "row-actions" },
                    el("label", { class: "button", for: `peer-upload-${p.id}` }, "Add files"),
                    upload(p),
                    el(
                      "button",
                      {
                        type: "button",
                        onclick: () => {
                          if (env.remote) app.viewRemote(env, p);
                          openTree(p);
                        },
                        "aria-label": `Files of ${p.name}`,
                      },
                      "Files",
                    ),
                    env.remote
                      ? el(
                          "button",
                          {
                            type: "button",
                            onclick: () => openCommands(p),
                            "aria-label": `Run a command in ${p.name}`,
                          },
                          "Command…",
                        )
                      : null,
                    env.remote
                      ? el(
                          "button",
                          {
                            type: "button",
                            class: "missions-open",
                            onclick: () => {
                              app.viewRemote(env, p);
                              openRemoteMissions(missions, app, env, p);
                            },
                            "aria-label": `Missions of ${p.name}`,
                          },
                          "Missions…",
                        )
                      : null,
                    el(
                      "button",
                      {
                        type: "button",
                        class: "primary",
                        onclick: () => exportProject(p),
                        "aria-label": `Export .zip of ${p.name}`,
                      },
                      "Export .zip",
                    ),
                  ),
                ),
              ),
            ),
          ),
        )
      : el("p", { class: "empty" }, `${env.name} has no projects yet.`),
    commands,
    missions,
    tree,
  );
  const wanted = env.remote && open.missions ? projects.find((p) => p.id === open.missions) : null;
  if (wanted) {
    app.viewRemote(env, wanted);
    openRemoteMissions(missions, app, env, wanted, { mission: open.mission });
    missions.scrollIntoView({ block: "start" });
  }
}
