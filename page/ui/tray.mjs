// The mission tray (seed 004 §3; SPEC §9): fixed at the right edge on every surface. Collapsed,
// a thin strip of per-phase counts; expanded, one card per mission head of the open project.
// It is read-only over letters: its only writes are a person's gestures — import a receipt
// (then post the landed letter), archive a merge_wait mission, hide a failed or stalled card.
// Every rule (what is pinned, stagnant, dismissible; which actions a card offers; the letters it
// posts; the archive preview) is the host's (core/missions/tray.py); this module shows what the
// host answers. Dismissals and the expanded/collapsed state are kept by the host (HOST_DIR
// ui-state.json), never in the page.
//
// The tray follows the project being viewed wherever it lives (issue 30): while a person views
// a project of a remote environment (its Missions… or Files on Environments; app.viewing), the
// tray shows that project's missions, read through the host (remote.tray: the same rules, with
// the actions a remote card offers — open or review its mission view, cancel it while its
// runner has it). It reads again when the host says (follow_ms: fast while a mission moves,
// slow when none does); going back to a local project shows that one again.

import {
  HUMAN_UI as HUMAN,
  OPERATOR,
  PHASE_MEANINGS as PHASE_MEANING,
  PHASES,
  STAGNANT_PHASES,
} from "../contract.gen.mjs";
import { phaseBadge, phaseLabel, phaseTitle, seatAndCapability } from "./words.mjs";
import { el, formatDuration, formatTime, literal, name, replace } from "../dom.mjs";
import { blocked } from "./safe.mjs";
import { refusalParts, showNotice, showRefusal } from "./alerts.mjs";
import { confirmDialog } from "./dialog.mjs";

const POLL_MS = 2500;

function instantMs(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

export class Tray {
  constructor(node, app) {
    this.node = node;
    this.app = app;
    this.view = null;
    this.signature = "";
    // At 900 px and less the tray is a drawer over the page: it starts closed, and opening or
    // closing it there is not remembered (the host keeps the wide layout's choice).
    this.narrow = matchMedia("(max-width: 900px)");
    this.open = !this.narrow.matches;
    this.fetchedAt = 0;
    this.expanded = new Set(); // missions whose provenance is shown
    this.busy = new Map(); // mission id -> what is running
    this.errors = new Map(); // mission id -> refusal shown on its card
    this.timer = null;
    this.loading = false;
    this.clocks = []; // the time texts of the drawing shown ({node, sinceMs, say}; clockText)
    node.addEventListener("keydown", (event) => {
      if (
        event.key === "Escape" &&
        this.open &&
        !event.defaultPrevented &&
        !document.querySelector("dialog[open]")
      ) {
        event.preventDefault();
        this.setOpen(false);
      }
    });
    this.narrow.addEventListener("change", () => {
      this.open = this.narrow.matches ? false : (this.view?.tray_open ?? true);
      this.render(true);
    });
    document.getElementById("tray-backdrop")?.addEventListener("click", () => {
      if (this.open) this.setOpen(false);
    });
    this.render();
  }

  get project() {
    return this.app.project;
  }

  start() {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (document.visibilityState === "visible") this.refresh();
    }, POLL_MS);
    this.refresh();
  }

  /** Fetch the open project's tray; re-render only when something changed. */
  async refresh({ force = false } = {}) {
    if (this.app.host.state !== "ready") return;
    if (this.viewing) return this.refreshRemote(this.viewing, force);
    clearTimeout(this.remoteTimer);
    this.remote = null;
    const project = this.project;
    if (!project) {
      this.view = null;
      this.render();
      return;
    }
    if (this.loading && !force) return;
    this.loading = true;
    try {
      const answer = await this.app.host.call("tray.read", { project: project.id });
      if (this.project?.id !== project.id) return;
      this.view = answer.result;
      this.fetchedAt = Date.now();
      if (this.firstLoad !== project.id) {
        this.firstLoad = project.id;
        this.open = this.narrow.matches ? false : this.view.tray_open;
      }
      this.render(force);
    } catch (err) {
      if (err.code === "project-not-found") {
        this.view = null;
        this.render(true);
        return;
      }
      this.loadError = err;
      this.render(true);
    } finally {
      this.loading = false;
    }
  }

  async setOpen(open) {
    this.open = open;
    this.render(true);
    const toggle = this.node.querySelector("#tray-toggle");
    toggle?.focus();
    if (this.narrow.matches) return; // the drawer: not remembered
    try {
      await this.app.host.call(
        "tray.layout",
        this.project && !this.viewing ? { open, project: this.project.id } : { open },
      );
    } catch (err) {
      showRefusal(err, "Remembering the tray layout");
    }
  }

  // ---------------------------------------------------------------- rendering

  nowMs() {
    const base = this.view ? instantMs(this.view.now) : null;
    return base === null ? Date.now() : base + (Date.now() - this.fetchedAt);
  }

  /** A text that says how long ago `sinceMs` was (`say(duration)`), kept true in place: the
   * drawing remembers it and every later render() — each poll, drawn again or not — sets
   * only its text. The clock never draws the tray again, so no control is replaced under a
   * keyboard walk and a screen reader hears no redraw when a minute turns. */
  clockText(attrs, sinceMs, say) {
    if (sinceMs === null) return el("span", attrs, "");
    const node = el("span", attrs, say(formatDuration(this.clockNow() - sinceMs)));
    this.clocks.push({ node, sinceMs, say });
    return node;
  }

  /** The host's time as the tray shown reads it: the remote project's or the local one's. */
  clockNow() {
    return this.viewing ? this.remoteNowMs() : this.nowMs();
  }

  /** Set each time text of the drawing to the clock's time now; a text that reads the same
   * is left alone (no mutation). */
  #tick() {
    const now = this.clockNow();
    for (const { node, sinceMs, say } of this.clocks) {
      const text = say(formatDuration(now - sinceMs));
      if (node.textContent !== text) node.textContent = text;
    }
  }

  render(force = false) {
    const signature = JSON.stringify([
      this.open,
      this.app.readOnly,
      this.project?.id ?? null,
      this.view && { ...this.view, now: null },
      this.viewing && [this.viewing.env.envKey, this.viewing.project.id],
      this.remote && { ...this.remote, now: null },
      [...this.expanded],
      [...this.busy],
      [...this.errors].map(([k, e]) => [k, e.code]),
      this.loadError?.code ?? null,
    ]);
    // the host's time is left out (`now: null`): what depends on it — stagnant, dismissible, the
    // actions a card offers — the host decides and answers, so it changes the signature
    // with the next poll; the time texts alone follow the clock, in place (#tick)
    if (!force && signature === this.signature) {
      this.#tick();
      return;
    }
    this.signature = signature;
    this.clocks = [];
    const focusKey = this.node.contains(document.activeElement)
      ? document.activeElement?.dataset?.key
      : null;
    document.documentElement.dataset.tray = this.open ? "open" : "closed";
    // open with no project to show, the tray is narrow (issue 34: empty, it took 30 % of
    // 1280 px); with one — local or remote, with missions or none yet — it has one fixed width,
    // so a mission's card arriving (or the missions loading) never moves the page (stop 44)
    document.documentElement.toggleAttribute("data-tray-empty", this.open && this.#noProject());
    this.node.dataset.open = String(this.open);
    replace(this.node, this.open ? this.renderOpen() : this.renderClosed());
    if (focusKey) this.node.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  /** True when the tray has no project to show: none open and none viewed on an environment. */
  #noProject() {
    return !this.viewing && !this.project;
  }

  toggleButton() {
    return el(
      "button",
      {
        type: "button",
        id: "tray-toggle",
        class: "tray-toggle",
        "data-key": "toggle",
        "aria-expanded": String(this.open),
        "aria-controls": "tray-body",
        onclick: () => this.setOpen(!this.open),
      },
      el("span", { "aria-hidden": "true", class: "tray-toggle-icon" }, this.open ? "▸" : "◂"),
      el("span", {}, this.open ? "Collapse" : "Missions"),
    );
  }

  counts(view = this.view) {
    const counts = view?.counts ?? {};
    return el(
      "ul",
      { id: "tray-counts", class: "tray-counts", "aria-label": "Missions by phase" },
      PHASES.map((phase) => {
        const n = counts[phase] ?? 0;
        return el(
          "li",
          {
            "data-phase": phase,
            class: `count phase-${phase}${n ? " nonzero" : ""}`,
            title: phaseTitle(phase),
          },
          el("span", { class: "count-n" }, String(n)),
          el("span", { class: "count-phase", "data-raw": phase }, phaseLabel(phase)),
        );
      }),
    );
  }

  renderClosed() {
    return [
      el("h2", { id: "tray-title", class: "visually-hidden" }, "Missions"),
      this.toggleButton(),
      this.viewing
        ? this.remote
          ? this.counts(this.remote)
          : el("p", { class: "tray-strip-note" }, "…")
        : this.project && this.view
          ? this.counts()
          : el("p", { class: "tray-strip-note" }, this.project ? "…" : "no project"),
      el("div", { id: "tray-body", hidden: true }),
    ];
  }

  renderOpen() {
    if (this.viewing) return this.renderRemote();
    const head = el(
      "div",
      { class: "tray-head" },
      el(
        "div",
        {},
        el("h2", { id: "tray-title" }, "Missions"),
        el(
          "p",
          { class: "tray-project muted" },
          this.project ? name(this.project.name, { id: "tray-project-name" }) : "no project open",
        ),
      ),
      this.toggleButton(),
    );
    const body = el("div", { id: "tray-body", class: "tray-body" });
    if (!this.project) {
      body.append(
        el(
          "div",
          { class: "tray-empty" },
          el("p", {}, "Open a project to see its missions."),
          el(
            "button",
            { type: "button", "data-key": "to-projects", onclick: () => this.app.go("projects") },
            "Projects",
          ),
        ),
      );
      return [head, body];
    }
    if (!this.view) {
      body.append(
        this.loadError
          ? el("p", { class: "card-error", role: "alert" }, refusalParts(this.loadError))
          : el(
              "p",
              { class: "muted", role: "status" },
              el("progress", { "aria-label": "Loading missions" }),
              " Loading missions…",
            ),
      );
      return [head, body];
    }
    const v = this.view;
    const waiting = v.counts.merge_wait ?? 0;
    body.append(this.counts());
    if (waiting)
      body.append(
        el("p", { class: "tray-bell", id: "tray-bell" }, `${waiting} waiting for a receipt import`),
      );
    if (v.skipped)
      body.append(
        el(
          "p",
          { class: "muted small" },
          `${v.skipped} unreadable mailbox line${v.skipped === 1 ? "" : "s"} skipped.`,
        ),
      );
    const shown = v.cards.filter((c) => !c.hidden);
    const hidden = v.cards.filter((c) => c.hidden);
    if (!v.cards.length) {
      body.append(
        el(
          "div",
          { class: "tray-empty", id: "tray-empty" },
          el("p", {}, "no missions yet — point an agent at a block"),
          el(
            "button",
            {
              type: "button",
              class: "link",
              "data-key": "to-compose",
              onclick: () => this.app.go("compose"),
            },
            "Compose a mission",
          ),
        ),
      );
    } else if (!shown.length) {
      body.append(el("p", { class: "tray-empty muted" }, "Every mission here is hidden."));
    }
    body.append(
      el(
        "ol",
        { class: "tray-cards", id: "tray-cards", "aria-label": "Mission heads" },
        shown.map((c) => el("li", {}, this.card(c))),
      ),
    );
    if (hidden.length) {
      body.append(
        el(
          "details",
          { class: "tray-hidden", id: "tray-hidden" },
          el("summary", { "data-key": "hidden-summary" }, `${hidden.length} hidden`),
          el(
            "ul",
            {},
            hidden.map((c) =>
              el(
                "li",
                { "data-mission": c.mission_id, class: "hidden-row" },
                phaseBadge(c.letter.phase),
                " ",
                this.blockLabel(c),
                " ",
                el(
                  "button",
                  {
                    type: "button",
                    class: "link",
                    "data-key": `show-${c.mission_id}`,
                    "aria-label": `Show mission ${c.mission_id} again`,
                    onclick: () => this.restore(c),
                  },
                  "Show again",
                ),
              ),
            ),
          ),
        ),
      );
    }
    return [head, body];
  }

  blockLabel(card) {
    if (card.anchor === "block") return name(card.block_name);
    if (card.anchor === "skeleton") return el("span", {}, "the whole skeleton");
    return el("span", {}, el("code", {}, card.letter.block_id), " (not in the store)");
  }

  card(c) {
    const l = c.letter;
    const id = c.mission_id;
    const updated = instantMs(l.updated_at);
    const busy = this.busy.get(id);
    const blockButton =
      c.anchor === "block"
        ? name(
            c.block_name,
            {
              type: "button",
              class: "link block-link",
              "data-key": `block-${id}`,
              onclick: () => this.app.go("blocks", { focus: l.block_id }),
            },
            "button",
          )
        : this.blockLabel(c);
    const actions = [];
    if (c.actions.includes("import")) {
      const safe = blocked(this.app, "tray.land");
      actions.push(
        el(
          "button",
          {
            type: "button",
            class: "primary",
            "data-key": `import-${id}`,
            disabled: Boolean(busy || safe),
            title: safe,
            onclick: () => this.importReceipt(c),
          },
          "Import this receipt",
        ),
      );
    }
    if (c.actions.includes("archive")) {
      const safe = blocked(this.app, "mission.post");
      actions.push(
        el(
          "button",
          {
            type: "button",
            "data-key": `archive-${id}`,
            disabled: Boolean(busy || safe),
            title: safe,
            onclick: () => this.archive(c),
          },
          "Archive…",
        ),
      );
    }
    if (c.actions.includes("provenance")) {
      const open = this.expanded.has(id);
      actions.push(
        el(
          "button",
          {
            type: "button",
            "data-key": `prov-${id}`,
            "aria-expanded": String(open),
            "aria-controls": `prov-${id}`,
            onclick: () => this.toggleProvenance(c),
          },
          open ? "Hide provenance" : "Provenance",
        ),
      );
    }
    if (c.actions.includes("dismiss")) {
      actions.push(
        el(
          "button",
          {
            type: "button",
            class: "subtle",
            "data-key": `dismiss-${id}`,
            disabled: Boolean(busy),
            onclick: () => this.dismiss(c),
          },
          "Dismiss…",
        ),
      );
    }
    const receipt =
      l.phase === "landed" && l.receipt?.imported
        ? el("p", { class: "card-receipt" }, `receipt ✓ store v${l.receipt.store_version}`)
        : null;
    return this.cardFrame(c, {
      title: blockButton,
      noRunner: "no runner",
      actions,
      after: this.expanded.has(id) ? this.provenanceBlock(c) : null,
      middle: [
        el(
          "p",
          { class: "card-meta muted" },
          "from ",
          name(c.agent_id, { class: "literal agent-id" }),
          ` · letter ${l.mission_seq}`,
          c.superseded_count ? ` (${c.superseded_count} earlier)` : "",
          c.off_chain_count ? ` · ${c.off_chain_count} off-chain` : "",
        ),
        el("p", { class: "card-phase-meaning muted" }, c.status ?? PHASE_MEANING[l.phase] ?? ""),
        l.verdict
          ? el(
              "p",
              { class: "card-verdict" },
              el("strong", {}, l.verdict.decision),
              " — ",
              literal(l.verdict.gist, { class: "literal gist" }),
            )
          : null,
        l.gate
          ? el(
              "p",
              { class: "card-gate" },
              el(
                "code",
                {},
                literal(l.gate.command, { class: "literal gate-command" }),
                ` · exit ${l.gate.exit_status}`,
              ),
            )
          : null,
        receipt,
        c.stagnant
          ? el(
              "p",
              { class: "card-stagnant" },
              this.clockText({}, updated, (d) => `No movement for ${d}.`),
            )
          : null,
      ],
    });
  }

  /** The frame every card has, of a project here or of a remote one: the phase, the pin and
   *  the elapsed clock, the `title`, the seat, capability and runner (`noRunner`: what an empty
   *  runner means there), then `middle`, the busy line, the refusal, the `actions`, and
   *  `after`. A remote card says so in `data-remote`. */
  cardFrame(c, { title, noRunner, middle, actions, after = null, remote = false }) {
    const l = c.letter;
    const id = c.mission_id;
    const titleId = `card-${id}-title`;
    const busy = this.busy.get(id);
    const error = this.errors.get(id);
    return el(
      "article",
      {
        class: `card phase-${l.phase}${c.pinned ? " pinned" : ""}${c.stagnant ? " stagnant" : ""}`,
        "data-mission": id,
        "data-phase": l.phase,
        "data-letter": c.letter_id,
        "data-remote": remote ? "true" : null,
        "aria-labelledby": titleId,
      },
      el(
        "div",
        { class: "card-top" },
        phaseBadge(l.phase),
        c.pinned ? el("span", { class: "pin" }, "pinned") : null,
        this.clockText(
          { class: "card-elapsed muted", title: `started ${formatTime(l.started_at)}` },
          instantMs(l.started_at),
          (d) => `elapsed ${d}`,
        ),
      ),
      el("h3", { id: titleId, class: "card-title" }, title),
      el(
        "p",
        { class: "card-seat" },
        seatAndCapability(l.seat, l.capability),
        " · ",
        l.runner_id
          ? el("span", {}, "runner ", name(l.runner_id, { class: "literal runner-id" }))
          : el("span", { class: "muted" }, noRunner),
      ),
      middle,
      busy
        ? el(
            "p",
            { class: "card-busy", role: "status" },
            el("progress", { "aria-label": busy }),
            ` ${busy}`,
          )
        : null,
      error ? el("p", { class: "card-error", role: "alert" }, refusalParts(error)) : null,
      actions.length ? el("div", { class: "card-actions" }, actions) : null,
      after,
    );
  }

  provenanceBlock(c) {
    const id = c.mission_id;
    const p = this.provenance?.[id];
    const box = el("div", { class: "provenance", id: `prov-${id}` });
    if (!p) {
      box.append(el("p", { class: "muted", role: "status" }, "Loading the chain…"));
      return box;
    }
    if (p.error) {
      box.append(el("p", { class: "card-error" }, refusalParts(p.error)));
      return box;
    }
    const hash = (h) =>
      h ? el("code", { class: "hash" }, h) : el("span", { class: "muted" }, "none");
    box.append(
      el("h4", {}, "Provenance"),
      el(
        "ol",
        { class: "prov-chain" },
        el(
          "li",
          { "data-step": "packet" },
          el("span", { class: "prov-label" }, "packet"),
          hash(p.packet_ref),
        ),
        el(
          "li",
          { "data-step": "runner" },
          el("span", { class: "prov-label" }, "runner"),
          p.runner_id ? literal(p.runner_id) : el("span", { class: "muted" }, "none"),
          ` (${p.capability}, seat ${p.seat})`,
        ),
        el(
          "li",
          { "data-step": "gate" },
          el("span", { class: "prov-label" }, "gate artifact"),
          hash(p.gate_artifact_hash),
        ),
        el(
          "li",
          { "data-step": "receipt" },
          el("span", { class: "prov-label" }, "receipt"),
          p.receipt
            ? el(
                "span",
                {},
                `✓ store v${p.receipt.store_version} · imported ${formatTime(p.receipt.imported_at)} · `,
                hash(p.receipt.candidate_id),
              )
            : el("span", { class: "muted" }, "not in the store"),
        ),
      ),
      el(
        "p",
        { class: "prov-letters muted" },
        "Letters: ",
        p.chain.map((s, i) => [
          i ? " → " : "",
          el(
            "span",
            { "data-raw": s.phase, title: `${s.phase} · ${s.sha12} by ${s.agent_id}` },
            phaseLabel(s.phase),
          ),
        ]),
      ),
    );
    return box;
  }

  // ---------------------------------------------------------------- gestures

  async run(card, label, work) {
    const id = card.mission_id;
    this.busy.set(id, label);
    this.errors.delete(id);
    this.render(true);
    try {
      return await work();
    } catch (err) {
      this.errors.set(id, {
        code: err.code ?? "internal-error",
        message: err.message ?? String(err),
      });
      showRefusal(err, label.replace(/…$/, ""));
      return null;
    } finally {
      this.busy.delete(id);
      await this.refresh({ force: true });
    }
  }

  async importReceipt(card) {
    const l = card.letter;
    const cand = l.receipt_candidate;
    const v = this.view;
    const window = cand.evidence?.window;
    const body = [
      el(
        "p",
        {},
        "This imports the receipt the mission's gate produced into the block store. It is your gesture: the host records it, the block ",
        literal(card.block_name ?? cand.block_id),
        " may turn green, and the store moves from version ",
        String(v.store_version ?? 0),
        " to ",
        String((v.store_version ?? 0) + 1),
        ". Then the tray posts the mission's landed letter.",
      ),
      el(
        "dl",
        { class: "candidate" },
        el("dt", {}, "block"),
        el("dd", {}, el("code", {}, cand.block_id)),
        el("dt", {}, "type"),
        el("dd", {}, cand.type),
        el("dt", {}, "scope"),
        el(
          "dd",
          {},
          `boundary v${cand.scope.boundary_version}, contract v${cand.scope.contract_version}`,
        ),
        el("dt", {}, "artifact"),
        el("dd", {}, el("code", { class: "hash" }, cand.evidence.artifact_hash)),
        el("dt", {}, "window"),
        el(
          "dd",
          {},
          window
            ? `${formatTime(window.started_at)} → ${formatTime(window.finished_at)}`
            : "none (the host will refuse it)",
        ),
        cand.evidence.evidence_refs?.length
          ? [
              el("dt", {}, "evidence"),
              el(
                "dd",
                {},
                cand.evidence.evidence_refs.map((r, i) => [i ? ", " : "", literal(r)]),
              ),
            ]
          : null,
      ),
    ];
    const sure = await confirmDialog({
      title: "Import this receipt?",
      body,
      confirmLabel: "Import receipt",
      id: "import-dialog",
    });
    if (!sure) return;
    const project = this.project.id;
    await this.run(card, "Importing the receipt…", async () => {
      const landed = await this.app.host.call(
        "tray.land",
        {
          project,
          mission_id: card.mission_id,
          letter_id: card.letter_id,
          imported_via: HUMAN,
          ...(v.store_version ? { if_store_version: v.store_version } : {}),
        },
        { human: true },
      );
      const sv = landed.result.imported.store_version;
      showNotice(`Receipt imported: the store is at version ${sv}, and the mission landed.`);
      this.app.surfaceChanged?.("blocks");
    });
  }

  async archive(card) {
    const project = this.project.id;
    let preview;
    try {
      preview = (
        await this.app.host.call("tray.archive_preview", { project, mission_id: card.mission_id })
      ).result;
    } catch (err) {
      this.errors.set(card.mission_id, { code: err.code, message: err.message });
      showRefusal(err, "Checking the mission before archiving");
      this.render(true);
      return;
    }
    const p = preview;
    const boundaries =
      p.proved_boundary === null
        ? "This mission carries no receipt candidate."
        : p.block_boundary === null
          ? `Proved at boundary v${p.proved_boundary} — the block is no longer in the store.`
          : p.proved_boundary === p.block_boundary
            ? `Proved at boundary v${p.proved_boundary} — the block is still at v${p.block_boundary}.`
            : `Proved at boundary v${p.proved_boundary} — the block is at v${p.block_boundary}.`;
    const body = [
      el("p", { class: "boundaries", id: "archive-boundaries" }, boundaries),
      p.would_import
        ? el(
            "p",
            { class: "still-imports", id: "archive-still-imports" },
            el("strong", {}, "This receipt would still import right now."),
            " Archiving sets it aside anyway.",
          )
        : el(
            "p",
            { id: "archive-would-not" },
            "The receipt would not import now: ",
            refusalParts(
              { code: p.import_code, message: p.import_message ?? "" },
              { fallback: "—" },
            ),
          ),
      el(
        "p",
        {},
        "Archiving posts an archived letter over this merge_wait head, signed as your gesture. The earlier letters and the receipt candidate stay in the mailbox, nothing can extend an archived mission, and the landing count drops by one.",
      ),
    ];
    const sure = await confirmDialog({
      title: "Archive this mission?",
      body,
      confirmLabel: p.would_import ? "Archive anyway" : "Archive",
      danger: true,
      id: "archive-dialog",
    });
    if (!sure) return;
    await this.run(card, "Archiving…", async () => {
      await this.app.host.call(
        "mission.post",
        { project, agent_id: OPERATOR, letter: p.letter, archived_via: HUMAN },
        { human: true },
      );
      showNotice("The mission is archived.");
    });
  }

  async dismiss(card) {
    const stalled = card.dismissible === "stagnant";
    const text = stalled
      ? `Hides this mission from the tray. The letter itself stays in the mailbox — moving a stalled ${STAGNANT_PHASES.map(phaseLabel).join(" or ")} mission to an end state is not part of this version. If the mission moves again (to ${phaseLabel("merge_wait")} or ${phaseLabel("landed")}, say), it shows again.`
      : "Hides this failed mission from the tray. Its letters stay in the mailbox and nothing else changes. If the mission moves again, it shows again.";
    const sure = await confirmDialog({
      title: stalled ? "Hide this stalled mission?" : "Hide this failed mission?",
      text,
      confirmLabel: "Hide from the tray",
      id: "dismiss-dialog",
    });
    if (!sure) return;
    await this.run(card, "Hiding…", async () => {
      await this.app.host.call(
        "tray.dismiss",
        { project: this.project.id, mission_id: card.mission_id, letter_id: card.letter_id },
        { human: true },
      );
    });
    this.node.querySelector("#tray-toggle")?.focus();
  }

  async restore(card) {
    await this.run(card, "Showing again…", async () => {
      await this.app.host.call(
        "tray.dismiss",
        {
          project: this.project.id,
          mission_id: card.mission_id,
          letter_id: card.letter_id,
          hide: false,
        },
        { human: true },
      );
    });
  }

  async toggleProvenance(card) {
    const id = card.mission_id;
    if (this.expanded.has(id)) {
      this.expanded.delete(id);
      this.render(true);
      return;
    }
    this.expanded.add(id);
    this.provenance ??= {};
    delete this.provenance[id];
    this.render(true);
    try {
      this.provenance[id] = (
        await this.app.host.call("tray.provenance", { project: this.project.id, mission_id: id })
      ).result;
    } catch (err) {
      this.provenance[id] = { error: { code: err.code, message: err.message } };
    }
    this.render(true);
  }
  // ---------------------------------------------------------------- a remote project (issue 30)

  /** The project of a remote environment being viewed ({env, project}), or null. */
  get viewing() {
    return this.app.viewing ?? null;
  }

  /** Read the remote project's tray (remote.tray); read again when the host says. */
  async refreshRemote(viewing, force) {
    clearTimeout(this.remoteTimer);
    if (this.remoteLoading && !force) return;
    this.remoteLoading = true;
    try {
      const answer = await this.app.host.call("remote.tray", {
        envKey: viewing.env.envKey,
        project: viewing.project.id,
      });
      if (this.viewing !== viewing) return;
      this.remote = answer.result;
      this.remoteAt = Date.now();
      this.remoteError = null;
      this.render();
    } catch (err) {
      if (this.viewing !== viewing) return;
      this.remoteError = err;
      this.render(true);
    } finally {
      this.remoteLoading = false;
      if (this.viewing === viewing) {
        clearTimeout(this.remoteTimer);
        const again = () =>
          document.visibilityState === "visible"
            ? this.refresh()
            : (this.remoteTimer = setTimeout(again, this.remote?.follow_ms ?? POLL_MS));
        this.remoteTimer = setTimeout(again, this.remote?.follow_ms ?? POLL_MS);
      }
    }
  }

  remoteNowMs() {
    const base = this.remote ? instantMs(this.remote.now) : null;
    return base === null ? Date.now() : base + (Date.now() - this.remoteAt);
  }

  renderRemote() {
    const { env, project } = this.viewing;
    const v =
      this.remote && this.remote.env_key === env.envKey && this.remote.project === project.id
        ? this.remote
        : null;
    const head = el(
      "div",
      { class: "tray-head" },
      el(
        "div",
        {},
        el("h2", { id: "tray-title" }, "Missions"),
        el(
          "p",
          { class: "tray-project muted", id: "tray-where" },
          name(project.name, { id: "tray-project-name" }),
          el("span", { class: "tray-on" }, " on "),
          name(env.name, { id: "tray-env-name" }),
        ),
      ),
      this.toggleButton(),
    );
    const body = el("div", { id: "tray-body", class: "tray-body", "data-remote": "true" });
    if (this.app.project) {
      body.append(
        el(
          "p",
          { class: "small" },
          el(
            "button",
            {
              type: "button",
              class: "link",
              id: "tray-to-local",
              "data-key": "to-local",
              onclick: () => this.app.viewLocal(),
            },
            "Show the missions of ",
            name(this.app.project.name),
          ),
        ),
      );
    }
    if (!v) {
      body.append(
        this.remoteError
          ? el("p", { class: "card-error", role: "alert" }, refusalParts(this.remoteError))
          : el(
              "p",
              { class: "muted", role: "status" },
              el("progress", { "aria-label": "Loading missions" }),
              " Loading missions…",
            ),
      );
      return [head, body];
    }
    body.append(this.counts(v));
    if (v.note) body.append(el("p", { class: "card-error", id: "tray-note" }, v.note));
    if (this.remoteError)
      body.append(el("p", { class: "card-error", role: "alert" }, refusalParts(this.remoteError)));
    if (v.moving)
      body.append(
        el(
          "p",
          { class: "muted small", id: "tray-following" },
          "Following the runner as it posts.",
        ),
      );
    if (!v.cards.length && v.paired) {
      body.append(
        el(
          "div",
          { class: "tray-empty", id: "tray-empty" },
          el("p", {}, "no missions yet — spawn one for a block"),
          el(
            "button",
            {
              type: "button",
              class: "link",
              "data-key": "to-compose",
              onclick: () => this.app.go("compose"),
            },
            "Compose a mission",
          ),
        ),
      );
    }
    body.append(
      el(
        "ol",
        { class: "tray-cards", id: "tray-cards", "aria-label": "Mission heads" },
        v.cards.map((c) => el("li", {}, this.remoteCard(c))),
      ),
    );
    return [head, body];
  }

  remoteCard(c) {
    const l = c.letter;
    const id = c.mission_id;
    const busy = this.busy.get(id);
    const actions = [];
    if (c.actions.includes("open")) {
      actions.push(
        el(
          "button",
          {
            type: "button",
            "data-key": `open-${id}`,
            class: "remote-open",
            onclick: () => this.openRemote(c),
          },
          "Open",
        ),
      );
    }
    if (c.actions.includes("review")) {
      actions.push(
        el(
          "button",
          {
            type: "button",
            class: "primary remote-review",
            "data-key": `review-${id}`,
            onclick: () => this.openRemote(c),
          },
          "Review…",
        ),
      );
    }
    if (c.actions.includes("cancel")) {
      const safe = blocked(this.app, "remote.cancel");
      actions.push(
        el(
          "button",
          {
            type: "button",
            class: "remote-cancel",
            "data-key": `cancel-${id}`,
            disabled: Boolean(busy || safe),
            title: safe,
            "aria-label": `Cancel mission ${id}`,
            onclick: () => this.cancelRemote(c),
          },
          "Cancel",
        ),
      );
    }
    const title =
      c.anchor === "block"
        ? name(c.block_name)
        : c.anchor === "skeleton"
          ? el("span", {}, "the whole skeleton")
          : el("span", {}, el("code", {}, l.block_id), " (not in the store)");
    return this.cardFrame(c, {
      title,
      noRunner: "any live runner",
      remote: true,
      actions,
      middle: [
        el("p", { class: "card-meta muted" }, el("code", {}, id), ` · letter ${l.mission_seq}`),
        el("p", { class: "card-phase-meaning muted" }, c.status),
        c.reason
          ? el(
              "p",
              { class: "card-verdict card-reason" },
              literal(c.reason, { class: "literal gist" }),
            )
          : null,
        c.receipt ? el("p", { class: "card-receipt" }, c.receipt) : null,
      ],
    });
  }

  /** The card's mission view: the Missions panel of its project on Environments. */
  openRemote(card) {
    const { env, project } = this.viewing;
    this.app.go("environments", {
      env: env.envKey,
      missions: project.id,
      mission: card.mission_id,
    });
  }

  async cancelRemote(card) {
    const { env, project } = this.viewing;
    await this.run(card, "Cancelling…", async () => {
      await this.app.host.call(
        "remote.cancel",
        { envKey: env.envKey, project: project.id, missionId: card.mission_id },
        { human: true },
      );
      showNotice("Cancelled: its runner stops the run and posts failed.");
    });
  }
}
