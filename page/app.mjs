// The page: boots the host worker, then shows one surface at a time, with the mission tray on
// every surface. UI only — it holds no secret and decides nothing; every operation is a
// host-protocol call (SPEC §1, §4, §11).
//
// Surfaces are one list (SURFACES): an id, a label, whether it needs an open project, and a
// render(node, app, params) function. Adding a surface is adding one entry.

import { el, name, replace } from "./dom.mjs";
import { History, formatRoute, parseRoute } from "./router.mjs";
import { host, started as hostStarted } from "./start-host.mjs";
import { connectSandbox } from "./sandbox.mjs";
import { projectRemoved } from "./ui/project_gone.mjs";
import { connectRuntime } from "./ui/python.mjs";
import { registerServiceWorker } from "./sw-register.mjs";
import { mountAlerts, clearAlerts, showRefusal } from "./ui/alerts.mjs";
import { renderGrantAccess } from "./ui/permission.mjs";
import { renderAudit } from "./ui/audit.mjs";
import { renderBlocks } from "./ui/blocks.mjs";
import {
  renderBoot,
  renderBootFailure,
  renderHostLoss,
  renderStandby,
  renderTakeover,
} from "./ui/boot.mjs";
import { renderCompose } from "./ui/compose.mjs";
import { remoteChanged, renderEnvironments } from "./ui/environments.mjs";
import { FilesView } from "./ui/files.mjs";
import { Help } from "./ui/help.mjs";
import { renderPlugins } from "./ui/plugins.mjs";
import { renderProjects } from "./ui/projects.mjs";
import { renderSettings } from "./ui/settings.mjs";
import { renderTools } from "./ui/tools.mjs";
import { startFocusTooltips } from "./ui/tooltip.mjs";
import { Tray } from "./ui/tray.mjs";

const status = document.getElementById("status");
const bootRegion = document.getElementById("boot");
const main = document.getElementById("main");
const nav = document.getElementById("surfaces");
const projectBar = document.getElementById("project-bar");
const safeBadge = document.getElementById("safe-badge");
const safeReasonNote = document.getElementById("safe-reason");
mountAlerts(document.getElementById("alerts"));
startFocusTooltips();

export const SURFACES = [
  { id: "projects", label: "Projects", render: (node, app) => renderProjects(node, app) },
  {
    id: "files",
    label: "Files",
    needsProject: true,
    render: (node, app, params) => {
      app.filesView = new FilesView(node, app, app.project);
      return app.filesView.render(params);
    },
  },
  { id: "blocks", label: "Blocks", needsProject: true, render: renderBlocks },
  { id: "compose", label: "Compose", needsProject: true, remoteToo: true, render: renderCompose },
  { id: "tools", label: "Tools", render: renderTools },
  { id: "plugins", label: "Plugins", render: renderPlugins },
  { id: "environments", label: "Environments", render: renderEnvironments },
  { id: "audit", label: "Audit", render: renderAudit },
  { id: "settings", label: "Settings", render: renderSettings },
];

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
  status.title = text;
}

function needsProject(node, app, surface) {
  replace(
    node,
    el("h2", {}, surface.label),
    el("p", { class: "empty" }, `${surface.label} belong to a project: open one first.`),
    el(
      "button",
      { type: "button", class: "primary", onclick: () => app.go("projects") },
      "Choose a project",
    ),
  );
  return false;
}

const router = new History();

const app = {
  host,
  surface: "projects",
  params: {},
  project: null,
  /** The project of a remote environment the person is viewing (its Missions… or Files on
   * Environments), `{env: {envKey, name}, project: {id, name}}`, or null: the tray and Compose
   * follow it until the person goes back to a local project (issue 30). */
  viewing: null,
  readOnly: false,
  /** Why SAFE mode was forced (host.info `safe_reason`: policy.json could not be used), or null. */
  safeReason: null,
  tray: null,
  /** The Files surface on screen (page/ui/files.mjs), or null. */
  filesView: null,
  /** Where the person last was on a surface, per project, this session (`project:surface` →
   * params): the nav brings them back there (Files: the folder and the file). */
  places: new Map(),
  /** Counts navigations: a slow one (a project opening) that a newer one overtook renders
   * nothing. */
  navSeq: 0,

  /** The URL hash of where the person is now. */
  hash() {
    return formatRoute(this.surface, { project: this.project?.id ?? null, ...this.params });
  },

  /** Show `surface` (an id from SURFACES) with optional `params` (e.g. {focus: blockId}),
   * recorded in the URL (`push`: a new history entry, else the current one is replaced).
   * Resolves false when the person chose to stay (unsaved edits). */
  async go(surface, params = {}, { push = true, leaveChecked = false } = {}) {
    if (!leaveChecked && !(await this.mayLeave())) return false;
    const seq = ++this.navSeq;
    this.surface = SURFACES.some((s) => s.id === surface) ? surface : "projects";
    const shown = SURFACES.find((s) => s.id === this.surface);
    if (this.viewing && shown.needsProject && !shown.remoteToo) this.viewLocal(); // the local project's own surfaces
    this.params = clean(params);
    this.remember();
    router.write(this.hash(), { push });
    clearAlerts();
    for (const button of nav.querySelectorAll("button")) {
      if (button.dataset.surface === this.surface) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
    }
    this.help?.follow(); // the guide shows only where it helps (core/host/help_ops.py)
    const focused = await this.refresh();
    this.reportUnsaved(); // a file left (saved or discarded) holds no unsaved text any more
    if (!focused && seq === this.navSeq) main.focus({ preventScroll: true });
    return true;
  },

  /** The nav: a surface, where the person last was on it in this project. */
  navigate(surface) {
    return this.go(surface, this.places.get(`${this.project?.id ?? ""}:${surface}`) ?? {});
  },

  /** A surface moved within itself (Files: the chosen folder, the open file): record the new
   * place in the URL without re-rendering. */
  place(params, { push = true } = {}) {
    this.params = clean({ ...this.params, ...params });
    this.remember();
    router.write(this.hash(), { push });
    updateTitle();
  },

  remember() {
    if (this.surface === "files") this.places.set(`${this.project?.id ?? ""}:files`, this.params);
    updateTitle();
  },

  /** Follow the URL (Back, Forward, an edited address, a link opened in a new tab). */
  async follow() {
    const { surface, params } = parseRoute(location.hash);
    const { project = null, ...rest } = params;
    const target = SURFACES.some((s) => s.id === surface) ? surface : "projects";
    if (!(await this.mayLeave())) {
      router.restore(this.hash());
      return;
    }
    if (project && project !== this.project?.id) {
      await this.openProject(project, {
        surface: target,
        params: rest,
        push: false,
        leaveChecked: true,
      });
      return;
    }
    if (!project && this.project) this.setProject(null);
    if (target === "files" && this.surface === "files" && this.filesView) {
      this.params = clean(rest);
      this.remember();
      await this.filesView.follow(this.params);
      return;
    }
    await this.go(target, rest, { push: false, leaveChecked: true });
  },

  /** What the surface on screen would lose if it were replaced (the file editor sets it):
   * `{ unsaved(): boolean, confirmLeave(): Promise<boolean> }`, or null. */
  leaving: null,

  /** Resolves true when the surface on screen may be replaced (nothing unsaved, or the person
   * chose to discard it). */
  async mayLeave() {
    if (!this.leaving?.unsaved()) {
      this.leaving = null;
      return true;
    }
    if (!(await this.leaving.confirmLeave())) return false;
    this.leaving = null;
    return true;
  },

  /** Re-render the current surface; resolves true when the surface placed focus itself.
   * Each rendering gets its own box in <main>: one that a newer rendering replaced while it
   * was still waiting for the host writes into a box no longer on the page. */
  async refresh() {
    if (host.state !== "ready") return false;
    this.filesView?.destroy();
    this.filesView = null;
    const surface = SURFACES.find((s) => s.id === this.surface) ?? SURFACES[0];
    const node = el("div", { class: "surface", "data-surface": surface.id });
    main.replaceChildren(node);
    if (surface.needsProject && !this.project && !(surface.remoteToo && this.viewing)) {
      needsProject(node, this, surface);
      return false;
    }
    return Boolean(await surface.render(node, this, this.params));
  },

  /** The host changed something another surface shows: re-render it if it is on screen. */
  surfaceChanged(id) {
    if (this.surface === id) this.refresh();
  },

  /** Open project `id`, then show `surface` (Files unless said) with `params`. */
  async openProject(
    id,
    { surface = "files", params = {}, push = true, leaveChecked = false } = {},
  ) {
    if (!leaveChecked && !(await this.mayLeave())) return;
    const seq = ++this.navSeq;
    let opened;
    try {
      opened = await host.call("project.open", { project: id });
    } catch (err) {
      if (seq !== this.navSeq) return;
      if (err.code === "permission-required") {
        this.setProject(null);
        this.surface = "projects";
        this.params = {};
        router.write(formatRoute("projects", { project: id }), { push });
        return renderGrantAccess(main, this, id, err);
      }
      showRefusal(err, "Opening the project");
      if (!this.project && this.surface !== "projects")
        await this.go("projects", {}, { push: false, leaveChecked: true });
      else router.write(this.hash(), { push: false });
      return;
    }
    if (seq !== this.navSeq) return;
    this.setProject(opened.result.project);
    await this.go(surface, params, { push, leaveChecked: true });
  },

  /** The person views `project` of the remote environment `env` (issue 30): the tray and
   * Compose follow it. */
  viewRemote(env, project) {
    const same = this.viewing?.env.envKey === env.envKey && this.viewing?.project.id === project.id;
    if (!same)
      this.viewing = {
        env: { envKey: env.envKey, name: env.name },
        project: { id: project.id, name: project.name },
      };
    this.tray?.refresh({ force: !same });
  },

  /** Back to the local project (or none): the tray shows it again. */
  viewLocal() {
    if (!this.viewing) return;
    this.viewing = null;
    this.tray?.refresh({ force: true });
  },

  setProject(project) {
    this.viewing = null;
    this.project = project;
    renderProjectBar();
    updateTitle();
    this.tray?.refresh({ force: true });
    this.reportUnsaved();
  },

  /** What this tab last told the host it holds unsaved ("project path…"; "": nothing). */
  unsavedSaid: "",

  /** Tell the host which project and paths this tab's editor holds unsaved text of (issue 33:
   * another tab's delete confirmation says so; core/host/unsaved_ops.py). Sent only when it
   * changed since the last time said; `again` sends it anyway (a new host knows nothing). */
  reportUnsaved({ again = false } = {}) {
    const held = this.filesView?.unsavedText() ?? null;
    const project = held ? (this.project?.id ?? null) : null;
    const paths = held && project ? [held.path] : [];
    const said = project ? `${project} ${paths.join(" ")}` : "";
    if (!again && said === this.unsavedSaid) return;
    this.unsavedSaid = said;
    host.call("tabs.unsaved", { page: host.pageId, project, paths }).catch(() => {
      this.unsavedSaid = null; // not heard: said again at the next change
    });
  },

  async closeProject() {
    if (!(await this.mayLeave())) return;
    this.setProject(null);
    this.go("projects", {}, { leaveChecked: true });
  },

  /** The policy changed (Settings, or host.info on ready): show SAFE mode — with its reason
   * when the host forced it (`safe_reason`) — and let the tray and compose follow. */
  policyChanged(policy) {
    this.readOnly = Boolean(policy.read_only);
    this.safeReason = this.readOnly && policy.safe_reason ? String(policy.safe_reason) : null;
    safeBadge.hidden = !this.readOnly;
    safeBadge.title = this.safeReason ?? "";
    safeReasonNote.textContent = this.safeReason ?? "";
    safeReasonNote.hidden = !this.safeReason;
    this.tray?.render(true);
  },
};

/** Route parameters as strings, without empty ones. */
function clean(params) {
  return Object.fromEntries(
    Object.entries(params ?? {})
      .filter(([, v]) => v !== null && v !== undefined && v !== "")
      .map(([k, v]) => [k, String(v)]),
  );
}

function updateTitle() {
  const surface = SURFACES.find((s) => s.id === app.surface);
  const parts = [surface?.label ?? "", app.project?.name ?? "", app.params.file ?? ""].filter(
    Boolean,
  );
  document.title = `${parts.reverse().join(" · ")} — Voicebox E1`;
}

function renderProjectBar() {
  const p = app.project;
  // The open project's name goes to its files; on one line however long (ellipsis, tooltip).
  replace(
    projectBar,
    p
      ? [
          el("span", { class: "muted project-bar-label" }, "Project"),
          name(
            p.name,
            {
              type: "button",
              class: "link project-bar-name",
              id: "open-project-name",
              onclick: () => app.navigate("files"),
            },
            "button",
          ),
          el(
            "button",
            {
              type: "button",
              class: "link project-bar-close",
              id: "close-project",
              "aria-label": `Close project ${p.name}`,
              onclick: () => app.closeProject(),
            },
            "Close",
          ),
        ]
      : el("span", { class: "muted" }, "No project open"),
  );
}

replace(
  nav,
  SURFACES.map((s) =>
    el(
      "button",
      { type: "button", "data-surface": s.id, onclick: () => app.navigate(s.id), disabled: true },
      s.label,
    ),
  ),
);
renderProjectBar();
app.tray = new Tray(document.getElementById("tray"), app);
app.help = new Help(app, document.getElementById("guide"), document.getElementById("help-open"));

// Host life (docs/security.md, "Two tabs" and "Host crash"): boot → ready; or standby while
// another tab's host owns the storage, then takeover → ready; a stopped host is restarted.
let sandboxFrame = null;
let runtimeFrame = null; // the person's Python (issue 32): made when a .py file first needs it
let runtimeReady = null;

/** Connect the Python runtime once per ready host, on first need (a .py file opened, a Run;
 * `take` false for the first, which never takes a runtime another tab connected — issue 33):
 * a boot that never runs Python pays nothing for it, and the audit's order at boot does not
 * depend on when a second frame loads. */
app.python = async (take = true) => {
  for (;;) {
    runtimeReady ??= connectRuntime(host, take).then(
      (frame) => {
        runtimeFrame = frame;
        if (!frame) runtimeReady = null; // another tab's runtime kept (a file opened)
        return frame !== null;
      },
      (err) => {
        runtimeReady = null;
        throw err;
      },
    );
    // a Run always ends with this tab's frame connected (a kept one is taken next turn)
    if ((await runtimeReady) || !take) return runtimeReady !== null;
  }
};
let started = false;

function setNavEnabled(enabled) {
  for (const button of nav.querySelectorAll("button")) button.disabled = !enabled;
}

// Closing or reloading the tab with unsaved edits: the browser asks (its own words).
addEventListener("beforeunload", (event) => {
  if (app.leaving?.unsaved()) event.preventDefault();
});

host.addEventListener("boot", (event) => {
  if (host.state === "restarting" && host.lastLoss) {
    setStatus("restarting", "The host stopped — restarting…");
    renderHostLoss(bootRegion, host.lastLoss, { progress: event.detail });
    return;
  }
  setStatus("booting", event.detail.stage === "takeover" ? "Taking over the host…" : "Booting…");
  renderBoot(bootRegion, event.detail);
});
host.addEventListener("standby", () => {
  setStatus("standby", "Standby — the host is active in another tab");
  bootRegion.hidden = false;
  renderStandby(bootRegion);
  setNavEnabled(false);
});
host.addEventListener("lost", (event) => {
  setStatus("restarting", "The host stopped — restarting…");
  setNavEnabled(false);
  bootRegion.hidden = false;
  renderHostLoss(bootRegion, event.detail);
});
// Every tab a workspace (issue 33 item 2): the tab that held the host closed and this tab,
// which followed it, holds the storage now. The page stays as it is (an open file, its
// unsaved text); a small notice says so while this tab's host finishes starting.
host.addEventListener("takeover", () => {
  setStatus("ready", "The other tab closed — this tab is taking over the host…");
  bootRegion.hidden = false;
  renderTakeover(bootRegion, { starting: true });
});
/** What the status says between the host's ready and the first screen drawn: the surface
 * the URL names is still being loaded (issue 34: "Ready" is said once it is drawn). */
function firstScreenWords() {
  const { surface, params } = parseRoute(location.hash);
  if (params.project) return "Opening the project…";
  const shown = SURFACES.find((s) => s.id === surface) ?? SURFACES[0];
  return `Loading ${shown.label.toLowerCase()}…`;
}

host.addEventListener("ready", async (event) => {
  const v = event.detail;
  const shared = v.follower ? " (the host of another tab)" : "";
  const readyWords = `Ready — Python ${v.python}, Pyodide ${v.pyodide}, core ${v.core}${shared}`;
  // The first start says Ready once the first screen is drawn (below); a restart or a
  // take-over keeps the screen it shows, so it is ready at once.
  if (started) setStatus("ready", readyWords);
  else setStatus("booting", firstScreenWords());
  if (v.restarted && host.lastLoss) renderHostLoss(bootRegion, host.lastLoss, { restarted: true });
  else if (v.tookOver) renderTakeover(bootRegion);
  else {
    bootRegion.replaceChildren();
    bootRegion.hidden = true;
  }
  setNavEnabled(true);
  try {
    const info = (await host.call("host.info")).result;
    app.policyChanged({ read_only: info.read_only, safe_reason: info.safe_reason });
  } catch (err) {
    showRefusal(err, "Reading the host's policy");
  }
  // A follower uses the leader's sandbox through the host: connecting one here would take it
  // from the leader's tab (issue 33 item 2); it connects its own when it takes over.
  sandboxFrame?.remove();
  sandboxFrame = null;
  if (!v.follower)
    connectSandbox(host).then(
      (frame) => {
        sandboxFrame = frame;
      },
      (err) => showRefusal(err, "Connecting the create-asset sandbox"),
    );
  runtimeFrame?.remove(); // a restarted host connects it again when Python is next needed
  runtimeFrame = null;
  runtimeReady = null;
  if (started) app.reportUnsaved({ again: true }); // a new host knows no tab's unsaved text
  if (started && v.wasFollower) {
    // a follower took over: the page already shows the right place (nothing re-rendered,
    // an editor keeps its unsaved text); the tray reads the new host
    app.tray.refresh({ force: true });
    return;
  }
  if (started) {
    app.refresh(); // a restarted host: stay where the person was
    app.tray.refresh({ force: true });
    return;
  }
  started = true;
  app.tray.start();
  app.help.start(); // the first-run guide, unless the person closed it (issue 33 item 7)
  router.onMove(() => app.follow());
  try {
    await app.follow(); // the place the URL names (a reload, a link), or the projects
  } finally {
    // drawn (or refused and said): ready — unless the host was lost meanwhile
    if (host.state === "ready" && status.dataset.state === "booting")
      setStatus("ready", readyWords);
  }
  registerServiceWorker();
});
// A remote's state changed (revoked by its operator, removed, unreachable, back): the
// Environments surface shows it without a reload (issue 29 item 15).
host.addEventListener("event", (event) => {
  if (event.detail?.type === "env.changed" && app.surface === "environments") {
    remoteChanged(main.querySelector('[data-surface="environments"]'), app);
  }
  // a file written by any tab (issue 33 item 2): the open editor follows it when clean
  const d = event.detail;
  if (d?.type === "file.changed" && app.filesView && d.project === app.project?.id)
    app.filesView.changed(d.path, d.sha256);
  // paths created, removed or moved by any tab or a Python run: the tree lists again
  if (d?.type === "files.changed" && app.filesView && d.project === app.project?.id)
    app.filesView.filesChanged(d.paths);
  if (d?.type === "projects.changed") projectsChanged(d);
  // another tab connected its own Python runtime frame to the host (issue 33 item 2): ours is
  // no longer heard, so drop it; the next Run here connects a fresh one (app.python)
  if (d?.type === "python.frame-taken" && runtimeReady) {
    runtimeFrame?.remove();
    runtimeFrame = null;
    runtimeReady = null;
  }
});
/** A project was created, renamed or removed (by any tab; issue 33 item 2): the Projects
 * surface lists again, keeping the name being typed and the focused control where they still
 * are; the project bar follows a rename of the open project. */
async function projectsChanged(d) {
  // the first project made, or the last one deleted, in any tab: where the guide shows changes
  if (d.how === "created" || d.how === "removed") app.help.start();
  if (d.how === "removed" && app.project?.id === d.project) {
    // deleted in another tab while open here: closed with a plain sentence; unsaved text is
    // offered to be saved elsewhere or copied, never dropped in silence (page/ui/project_gone)
    const gone = app.project.name;
    const unsaved = app.filesView?.unsavedText() ?? null;
    app.leaving = null;
    app.setProject(null);
    const shown = app.go("projects", {}, { push: false, leaveChecked: true });
    await projectRemoved(app, gone, unsaved);
    await shown;
    return;
  }
  if (d.how === "renamed" && app.project?.id === d.project) {
    const opened = await host.call("project.open", { project: d.project }).catch(() => null);
    if (opened && app.project?.id === d.project) {
      app.project = opened.result.project;
      if (app.filesView?.project?.id === d.project) app.filesView.renamed(app.project);
      renderProjectBar();
      updateTitle();
    }
  }
  if (app.surface !== "projects") return;
  const focused = document.activeElement;
  const inside = main.contains(focused); // never take focus from outside the surface
  const row = focused?.closest?.("[data-project-id]")?.dataset.projectId;
  const label = focused?.getAttribute?.("aria-label");
  const id = focused?.id;
  const typed = main.querySelector("#new-project-name")?.value ?? "";
  await app.refresh();
  const input = main.querySelector("#new-project-name");
  if (input && typed) input.value = typed;
  let back = id ? main.querySelector(`#${CSS.escape(id)}`) : null;
  if (!back && row && label)
    back = main.querySelector(
      `[data-project-id="${CSS.escape(row)}"] [aria-label="${CSS.escape(label)}"]`,
    );
  if (inside && back) back.focus();
}

host.addEventListener("fatal", (event) => {
  setStatus("error", "The host could not start");
  bootRegion.hidden = false;
  renderBootFailure(bootRegion, event.detail);
});

setStatus("booting", "Booting…");
// the host worker was started by page/start-host.mjs before this module was in (issue 34,
// cold boot); what it said meanwhile is heard now, in order
await hostStarted;
host.listen();
globalThis.voicebox = Object.freeze({ host, app });
