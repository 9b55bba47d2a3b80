// The page: boots the host worker, then shows one surface at a time, with the mission tray on
// every surface. UI only — it holds no secret and decides nothing; every operation is a
// host-protocol call (SPEC §1, §4, §11).
//
// Surfaces are one list (SURFACES): an id, a label, whether it needs an open project, and a
// render(node, app, params) function. Adding a surface is adding one entry.

import { el, literal, replace } from "./dom.mjs";
import { HostClient } from "./host-client.mjs";
import { connectSandbox } from "./sandbox.mjs";
import { registerServiceWorker } from "./sw-register.mjs";
import { mountAlerts, clearAlerts, showRefusal } from "./ui/alerts.mjs";
import { renderGrantAccess } from "./ui/permission.mjs";
import { renderAudit } from "./ui/audit.mjs";
import { renderBlocks } from "./ui/blocks.mjs";
import { renderBoot, renderBootFailure, renderHostLoss, renderStandby, renderTakeover } from "./ui/boot.mjs";
import { renderCompose } from "./ui/compose.mjs";
import { renderEnvironments } from "./ui/environments.mjs";
import { FilesView } from "./ui/files.mjs";
import { renderPlugins } from "./ui/plugins.mjs";
import { renderProjects } from "./ui/projects.mjs";
import { renderSettings } from "./ui/settings.mjs";
import { renderTools } from "./ui/tools.mjs";
import { Tray } from "./ui/tray.mjs";

const status = document.getElementById("status");
const bootRegion = document.getElementById("boot");
const main = document.getElementById("main");
const nav = document.getElementById("surfaces");
const projectBar = document.getElementById("project-bar");
const safeBadge = document.getElementById("safe-badge");
mountAlerts(document.getElementById("alerts"));

const host = new HostClient();

export const SURFACES = [
  { id: "projects", label: "Projects", render: (node, app) => renderProjects(node, app) },
  { id: "files", label: "Files", needsProject: true, render: (node, app) => new FilesView(node, app, app.project).render() },
  { id: "blocks", label: "Blocks", needsProject: true, render: renderBlocks },
  { id: "compose", label: "Compose", needsProject: true, render: renderCompose },
  { id: "tools", label: "Tools", render: renderTools },
  { id: "plugins", label: "Plugins", render: renderPlugins },
  { id: "environments", label: "Environments", render: renderEnvironments },
  { id: "audit", label: "Audit", render: renderAudit },
  { id: "settings", label: "Settings", render: renderSettings },
];

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

function needsProject(node, app, surface) {
  replace(node,
    el("h2", {}, surface.label),
    el("p", { class: "empty" }, `${surface.label} belong to a project: open one first.`),
    el("button", { type: "button", class: "primary", onclick: () => app.go("projects") }, "Choose a project"));
}

const app = {
  host,
  surface: "projects",
  params: {},
  project: null,
  readOnly: false,
  tray: null,

  /** Show `surface` (an id from SURFACES) with optional `params` (e.g. {focus: blockId}). */
  async go(surface, params = {}) {
    if (!(await this.mayLeave())) return;
    this.surface = surface;
    this.params = params;
    clearAlerts();
    for (const button of nav.querySelectorAll("button")) {
      if (button.dataset.surface === surface) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
    }
    const focused = await this.refresh();
    if (!focused) main.focus({ preventScroll: true });
  },

  /** What the surface on screen would lose if it were replaced (the file editor sets it):
   * `{ unsaved(): boolean, confirmLeave(): Promise<boolean> }`, or null. */
  leaving: null,

  /** Resolves true when the surface on screen may be replaced (nothing unsaved, or the person
   * chose to discard it). */
  async mayLeave() {
    if (!this.leaving?.unsaved()) { this.leaving = null; return true; }
    if (!(await this.leaving.confirmLeave())) return false;
    this.leaving = null;
    return true;
  },

  /** Re-render the current surface; resolves true when the surface placed focus itself. */
  async refresh() {
    if (host.state !== "ready") return false;
    const surface = SURFACES.find((s) => s.id === this.surface) ?? SURFACES[0];
    if (surface.needsProject && !this.project) { needsProject(main, this, surface); return false; }
    return Boolean(await surface.render(main, this, this.params));
  },

  /** The host changed something another surface shows: re-render it if it is on screen. */
  surfaceChanged(id) {
    if (this.surface === id) this.refresh();
  },

  async openProject(id) {
    if (!(await this.mayLeave())) return;
    let opened;
    try {
      opened = await host.call("project.open", { project: id });
    } catch (err) {
      if (err.code === "permission-required") return renderGrantAccess(main, this, id, err);
      showRefusal(err, "Opening the project");
      return;
    }
    this.setProject(opened.result.project);
    await this.go("files");
  },

  setProject(project) {
    this.project = project;
    renderProjectBar();
    this.tray?.refresh({ force: true });
  },

  async closeProject() {
    if (!(await this.mayLeave())) return;
    this.setProject(null);
    this.go("projects");
  },

  /** The policy changed (Settings): show SAFE mode and let the tray and compose follow. */
  policyChanged(policy) {
    this.readOnly = Boolean(policy.read_only);
    safeBadge.hidden = !this.readOnly;
  },
};

function renderProjectBar() {
  const p = app.project;
  replace(projectBar, p
    ? [el("span", { class: "muted" }, "Project "), el("strong", { id: "open-project-name" }, literal(p.name)), " ",
        el("button", { type: "button", class: "link", id: "close-project", "aria-label": `Close project ${p.name}`, onclick: () => app.closeProject() }, "Close")]
    : el("span", { class: "muted" }, "No project open"));
}

replace(nav, SURFACES.map((s) =>
  el("button", { type: "button", "data-surface": s.id, onclick: () => app.go(s.id), disabled: true }, s.label)));
renderProjectBar();
app.tray = new Tray(document.getElementById("tray"), app);

// Host life (docs/security.md, "Two tabs" and "Host crash"): boot → ready; or standby while
// another tab's host owns the storage, then takeover → ready; a stopped host is restarted.
let sandboxFrame = null;
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
host.addEventListener("ready", async (event) => {
  const v = event.detail;
  setStatus("ready", `Ready — Python ${v.python}, Pyodide ${v.pyodide}, core ${v.core}`);
  if (v.restarted && host.lastLoss) renderHostLoss(bootRegion, host.lastLoss, { restarted: true });
  else if (v.tookOver) renderTakeover(bootRegion);
  else {
    bootRegion.replaceChildren();
    bootRegion.hidden = true;
  }
  setNavEnabled(true);
  try {
    app.policyChanged({ read_only: (await host.call("host.info")).result.read_only });
  } catch (err) {
    showRefusal(err, "Reading the host's policy");
  }
  sandboxFrame?.remove();
  connectSandbox(host).then((frame) => { sandboxFrame = frame; }, (err) => showRefusal(err, "Connecting the create-asset sandbox"));
  if (started) {
    app.refresh(); // a restarted host: stay where the person was
    app.tray.refresh({ force: true });
    return;
  }
  started = true;
  app.tray.start();
  app.go("projects");
  registerServiceWorker();
});
host.addEventListener("fatal", (event) => {
  setStatus("error", `Error: ${event.detail.code}`);
  bootRegion.hidden = false;
  renderBootFailure(bootRegion, event.detail);
});

setStatus("booting", "Booting…");
host.start();
globalThis.voicebox = Object.freeze({ host, app });
