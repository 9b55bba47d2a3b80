// The page: boots the host worker, then shows one surface at a time. UI only — it holds no
// secret and decides nothing; every operation is a host-protocol call (SPEC §1, §4, §11).

import { el, replace } from "./dom.mjs";
import { HostClient } from "./host-client.mjs";
import { mountAlerts, clearAlerts, guarded, showRefusal } from "./ui/alerts.mjs";
import { renderGrantAccess } from "./ui/permission.mjs";
import { renderAudit } from "./ui/audit.mjs";
import { renderBoot, renderBootFailure } from "./ui/boot.mjs";
import { FilesView } from "./ui/files.mjs";
import { renderProjects } from "./ui/projects.mjs";

const status = document.getElementById("status");
const bootRegion = document.getElementById("boot");
const main = document.getElementById("main");
const nav = document.getElementById("surfaces");
mountAlerts(document.getElementById("alerts"));

const host = new HostClient();

const SURFACES = [
  ["projects", "Projects"],
  ["audit", "Audit"],
];

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

const app = {
  host,
  surface: "projects",
  project: null,
  async go(surface) {
    this.surface = surface;
    if (surface !== "files") this.project = null;
    clearAlerts();
    for (const button of nav.querySelectorAll("button")) {
      if (button.dataset.surface === surface || (surface === "files" && button.dataset.surface === "projects")) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
    }
    await this.refresh();
    main.focus({ preventScroll: true });
  },
  async refresh() {
    if (host.state !== "ready") return;
    if (this.surface === "projects") await renderProjects(main, this);
    else if (this.surface === "audit") await renderAudit(main, this);
    else if (this.surface === "files" && this.project) await new FilesView(main, this, this.project).render();
  },
  async openProject(id) {
    let opened;
    try {
      opened = await host.call("project.open", { project: id });
    } catch (err) {
      if (err.code === "permission-required") return renderGrantAccess(main, this, id, err);
      showRefusal(err, "Opening the project");
      return;
    }
    this.project = opened.result.project;
    await this.go("files");
  },
};

replace(nav, SURFACES.map(([id, label]) =>
  el("button", { type: "button", "data-surface": id, onclick: () => app.go(id), disabled: true }, label)));

host.addEventListener("boot", (event) => {
  setStatus("booting", "Booting…");
  renderBoot(bootRegion, event.detail);
});
host.addEventListener("ready", (event) => {
  const v = event.detail;
  setStatus("ready", `Ready — Python ${v.python}, Pyodide ${v.pyodide}, core ${v.core}`);
  bootRegion.replaceChildren();
  bootRegion.hidden = true;
  for (const button of nav.querySelectorAll("button")) button.disabled = false;
  app.go("projects");
});
host.addEventListener("fatal", (event) => {
  setStatus("error", `Error: ${event.detail.code}`);
  bootRegion.hidden = false;
  renderBootFailure(bootRegion, event.detail);
});

setStatus("booting", "Booting…");
host.start();
globalThis.voicebox = Object.freeze({ host, app });
