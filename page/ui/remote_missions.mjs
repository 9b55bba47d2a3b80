// Missions in a project of a remote environment (issue 30, the browser side; seed 004 §4b, §5):
// compose → spawn, the project's missions following the runner live, and a mission view with
// the run's log, its timeline in words and Cancel. The runner daemon runs on the environment
// server; the host asks it with the bearer it holds (core/host/remote_mission_ops.py). Every rule
// — when spawn is offered and why not, the log stripped of escape codes, the timeline — is the
// host's (core/missions/remote_runs.py); this module shows what the host answers, as text nodes.
//
// Live: the board is read again every BUSY_MS while a mission is waiting or running (a letter
// the runner posts shows within about that), every IDLE_MS otherwise; an open mission's log
// every LOG_MS until its run finished. Everything stops when the section leaves the page.

import { CAPABILITIES, HUMAN_UI } from "../contract.gen.mjs";
import { capabilityLabel, term, wordOption } from "./words.mjs";
import { el, formatTime, literal, name, replace } from "../dom.mjs";
import { acted, refusalParts } from "./alerts.mjs";
import { confirmDialog } from "./dialog.mjs";
import { guard } from "./safe.mjs";

const BUSY_MS = 500;
const IDLE_MS = 5000;
const LOG_MS = 250;

/** Open the missions of `project` (a project of the remote `env`) in `section`; `opts.mission`:
 * open that mission's view at once (the tray's Open / Review…, issue 30). */
export function openRemoteMissions(section, app, env, project, opts = {}) {
  const state = {
    board: null,
    open: null,
    log: null,
    capability: CAPABILITIES[0],
    timer: null,
    logTimer: null,
    logSeq: 0,
    generation: (section._missions ?? 0) + 1,
  };
  section._missions = state.generation;
  const alive = () =>
    section.isConnected && !section.hidden && section._missions === state.generation;
  const call = (op, args, opts) =>
    app.host.call(op, { envKey: env.envKey, project: project.id, ...args }, opts);

  const blockSelect = el("select", { id: "spawn-block" });
  const capSelect = el(
    "select",
    { id: "spawn-capability" },
    CAPABILITIES.map((c) =>
      wordOption(c, capabilityLabel(c), { selected: c === state.capability }),
    ),
  );
  const runnerSelect = el(
    "select",
    { id: "spawn-runner" },
    el("option", { value: "" }, "any live runner"),
  );
  const agentInput = el("input", {
    id: "spawn-agent",
    type: "text",
    value: "hand-1",
    autocomplete: "off",
    spellcheck: "false",
  });
  const noteInput = el("textarea", { id: "spawn-note", rows: "3" });
  const spawnButton = guard(
    app,
    "remote.spawn",
    el(
      "button",
      {
        type: "submit",
        id: "spawn-send",
        class: "primary",
        disabled: true,
        "aria-describedby": "spawn-reason",
      },
      "Spawn",
    ),
  );
  const reason = el(
    "p",
    { id: "spawn-reason", class: "muted", role: "status", "aria-live": "polite" },
    "Reading the project…",
  );
  const runners = el("p", { id: "spawn-runners", class: "muted" });
  const keys = el("p", { id: "spawn-keys", class: "muted" });
  const list = el("ul", {
    id: "remote-mission-list",
    class: "mission-list",
    "aria-label": `Missions of ${project.name}`,
  });
  const view = el("section", { id: "mission-view", "aria-label": "Mission", hidden: true });
  capSelect.addEventListener("change", () => {
    state.capability = capSelect.value;
    refresh();
  });
  runnerSelect.addEventListener("change", () => {
    if (state.board) showKeys(state.board);
  });

  const form = el(
    "form",
    {
      class: "compose-form",
      id: "spawn-form",
      "aria-label": `Spawn a mission in ${project.name}`,
      onsubmit: async (e) => {
        e.preventDefault();
        if (spawnButton.disabled) return;
        spawnButton.disabled = true;
        const args = {
          block_id: blockSelect.value,
          to: agentInput.value.trim() || "hand-1",
          capability: capSelect.value,
          note: noteInput.value,
        };
        if (runnerSelect.value) args.runner_id = runnerSelect.value;
        let refused = null; // shown in the panel too (key-not-granted names the variable)
        const done = await acted("Spawning the mission", () =>
          call("remote.spawn", args, { human: true }).catch((err) => {
            refused = err;
            throw err;
          }),
        );
        spawnButton.disabled = false;
        if (!done) {
          if (refused) replace(reason, refusalParts(refused, { codeId: "spawn-refusal" }));
          return;
        }
        noteInput.value = "";
        replace(
          reason,
          "Spawned mission ",
          el("code", { id: "spawned-mission" }, done.result.mission_id),
          ` for runner ${done.result.runner_id}; it shows below as its runner posts.`,
        );
        app.tray?.refresh({ force: true });
        await refresh();
        openMission(done.result.mission_id);
      },
    },
    el("div", { class: "field" }, el("label", { for: "spawn-block" }, "Block"), blockSelect),
    el(
      "div",
      { class: "field-row" },
      el(
        "div",
        { class: "field" },
        el("label", { for: "spawn-capability" }, term("capability")),
        capSelect,
      ),
      el("div", { class: "field" }, el("label", { for: "spawn-runner" }, "Runner"), runnerSelect),
      el("div", { class: "field" }, el("label", { for: "spawn-agent" }, "Agent id"), agentInput),
    ),
    el(
      "div",
      { class: "field" },
      el("label", { for: "spawn-note" }, "What you ask of the agent"),
      noteInput,
    ),
    el("div", { class: "toolbar" }, spawnButton),
    reason,
    runners,
    keys,
  );

  section.hidden = false;
  replace(
    section,
    el("h4", {}, "Missions in ", name(project.name), ` on ${env.name}`),
    el(
      "p",
      { class: "muted" },
      "Spawn hands the packet to the environment's pinned runner, which runs the agent and then the gate in a worktree of its own and posts each phase.",
    ),
    el("div", { class: "compose-layout" }, form, el("div", {}, el("h5", {}, "Missions"), list)),
    view,
  );

  // The provider keys the chosen runner's harness needs (issue 31): names and fingerprints
  // only, and whether each is granted to this environment (the host's answer, b.keys).
  function showKeys(b) {
    const chosen = b.runners.find((r) => r.runnerId === runnerSelect.value);
    const needs = (b.keys ?? []).filter((k) => !chosen || chosen.keys.includes(k.variable));
    replace(
      keys,
      needs.length
        ? [
            "Provider keys the runner needs: ",
            needs.map((k, i) => [
              i ? ", " : "",
              el("code", { "data-key": k.variable }, k.variable),
              k.fingerprint === null
                ? " (not set)"
                : [
                    " (",
                    el("code", {}, k.fingerprint),
                    k.granted
                      ? ", granted to this environment)"
                      : ", not granted to this environment)",
                  ],
            ]),
          ]
        : "",
    );
    keys.hidden = needs.length === 0;
  }

  function showBoard(b) {
    const signature = JSON.stringify(b.blocks);
    if (blockSelect.dataset.signature !== signature) {
      const chosen = blockSelect.value;
      replace(
        blockSelect,
        b.blocks.map((x) =>
          el("option", { value: x.id }, `${x.name} — boundary v${x.boundaryVersion}`),
        ),
        b.skeleton_id ? el("option", { value: b.skeleton_id }, "The whole skeleton") : null,
      );
      if (chosen) blockSelect.value = chosen;
      blockSelect.dataset.signature = signature;
    }
    const pinned = b.runners.filter((r) => r.capability === capSelect.value).map((r) => r.runnerId);
    if (runnerSelect.dataset.signature !== pinned.join(" ")) {
      const chosen = runnerSelect.value;
      replace(
        runnerSelect,
        el("option", { value: "" }, "any live runner"),
        pinned.map((id) => el("option", { value: id }, id)),
      );
      runnerSelect.value = pinned.includes(chosen) ? chosen : "";
      runnerSelect.dataset.signature = pinned.join(" ");
    }
    const usable = b.spawn.available && b.blocks.length > 0 && !spawnButton.title;
    spawnButton.disabled = !usable;
    if (!reason.querySelector("#spawned-mission, #spawn-refusal") || !usable) {
      replace(
        reason,
        b.spawn.available
          ? b.blocks.length
            ? "Spawn is available."
            : "This project has no blocks yet: a mission is about a block."
          : b.spawn.reason,
      );
    }
    reason.dataset.available = String(b.spawn.available);
    replace(
      runners,
      b.runners.length
        ? [
            "Runners: ",
            b.runners.map((r, i) => [
              i ? ", " : "",
              literal(r.runnerId),
              ` (${r.capability}, ${r.live ? "live" : "not live"}${r.busy ? `, ${r.busy} running` : ""})`,
            ]),
          ]
        : "No runner is pinned on this environment.",
    );
    showKeys(b);
    replace(
      list,
      b.heads.length
        ? b.heads.map((h) =>
            el(
              "li",
              {
                "data-mission": h.mission_id,
                "data-phase": h.phase,
                class: `mission-card phase-${h.phase}`,
              },
              el(
                "button",
                {
                  type: "button",
                  class: "link mission-open",
                  onclick: () => openMission(h.mission_id),
                  "aria-label": `Open mission ${h.mission_id}`,
                },
                h.mission_id,
              ),
              " ",
              el("span", { class: "mission-words" }, h.words),
              el("span", { class: "muted" }, ` · letter ${h.seq} · ${formatTime(h.updated_at)}`),
              h.reason ? el("span", { class: "mission-reason" }, ` — ${h.reason}`) : null,
            ),
          )
        : el("li", { class: "empty" }, "No missions yet."),
    );
    if (state.open) showMission();
  }

  function showMission() {
    const h = state.board?.heads.find((x) => x.mission_id === state.open);
    if (!h) return;
    view.hidden = false;
    if (view.dataset.mission !== h.mission_id) {
      view.dataset.mission = h.mission_id;
      const log = el("pre", {
        id: "mission-log",
        class: "text-view mission-log",
        tabindex: "0",
        role: "log",
        "aria-label": "Run log",
        "aria-live": "off",
      });
      replace(
        view,
        el("h4", {}, "Mission ", el("code", {}, h.mission_id)),
        el("ol", { id: "mission-timeline", class: "timeline" }),
        el("p", { id: "mission-status", role: "status", "aria-live": "polite" }),
        el(
          "div",
          { class: "toolbar" },
          guard(
            app,
            "remote.cancel",
            el("button", { type: "button", id: "mission-cancel", onclick: cancel }, "Cancel"),
          ),
        ),
        el("p", { id: "mission-evidence", hidden: true }),
        el("section", { id: "mission-review", "aria-label": "The branch's change", hidden: true }),
        el("h5", {}, "Log"),
        el("p", { id: "mission-log-meta", class: "muted" }),
        log,
      );
    }
    const evidence = view.querySelector("#mission-evidence");
    if (h.phase === "merge_wait" && evidence.dataset.asked !== h.mission_id) {
      evidence.dataset.asked = h.mission_id;
      call("remote.evidence", { missionId: h.mission_id }).then(
        (answer) => {
          if (view.dataset.mission === h.mission_id) showEvidence(answer.result);
        },
        (err) => {
          evidence.hidden = false;
          replace(evidence, refusalParts(err));
        },
      );
    }
    const review = view.querySelector("#mission-review");
    review.hidden = !h.mergeable;
    if (h.mergeable && review.dataset.asked !== `${h.mission_id} ${h.seq}`) {
      review.dataset.asked = `${h.mission_id} ${h.seq}`;
      showReview(h.mission_id, review);
    }
    view.dataset.phase = h.phase;
    replace(
      view.querySelector("#mission-timeline"),
      h.timeline.map((s) =>
        el(
          "li",
          { class: `step ${s.state}`, "data-phase": s.phase, "data-state": s.state },
          s.state === "done" ? "✓ " : s.state === "now" ? "▶ " : "· ",
          s.words,
        ),
      ),
    );
    replace(
      view.querySelector("#mission-status"),
      el("span", { class: "mission-words" }, h.words),
      h.reason ? el("span", { id: "mission-reason" }, ` — ${h.reason}`) : null,
      el(
        "span",
        { class: "muted" },
        ` (${h.phase}, letter ${h.seq}, runner ${h.runner_id ?? "none yet"})`,
      ),
    );
    const cancelButton = view.querySelector("#mission-cancel");
    cancelButton.hidden = !h.cancellable;
    showLanding(h);
    showLog();
  }

  // Landing (issue 30, Review): "Import this receipt" on a merge_wait head (remote.land, a
  // person's gesture); a candidate that is only its poster's claim takes an extra dialog that
  // says so. A landed head shows the host's words for its receipt (h.receipt).
  function showLanding(h) {
    let button = view.querySelector("#mission-land");
    if (!button) {
      button = guard(
        app,
        "remote.land",
        el(
          "button",
          {
            type: "button",
            id: "mission-land",
            class: "primary",
            onclick: () => land(view.dataset.mission),
          },
          "Import this receipt",
        ),
      );
      view.querySelector(".toolbar").append(button);
    }
    button.hidden = !(h.phase === "merge_wait" && h.letter.receipt_candidate);
    let line = view.querySelector("#mission-receipt");
    if (!line) {
      line = el("p", { id: "mission-receipt", class: "ok", role: "status" });
      view.querySelector("#mission-status").after(line);
    }
    line.hidden = !h.receipt;
    line.textContent = h.receipt ?? "";
  }

  function showEvidence(e) {
    const evidence = view.querySelector("#mission-evidence");
    evidence.hidden = false;
    evidence.dataset.checked = String(e.checked);
    evidence.className = e.checked ? "ok" : "warn";
    replace(
      evidence,
      "Receipt candidate: ",
      e.words,
      " (",
      el("code", { class: "hash" }, e.artifact_hash),
      ").",
    );
  }

  async function land(id) {
    const button = view.querySelector("#mission-land");
    const asked = await acted("Reading the receipt's evidence", () =>
      call("remote.evidence", { missionId: id }),
    );
    if (!asked) return;
    const evidence = asked.result;
    if (view.dataset.mission === id) showEvidence(evidence); // what the landing is decided on
    if (!evidence.checked) {
      const sure = await confirmDialog({
        title: "Import a receipt that is only its poster's claim?",
        confirmLabel: "Import the claim",
        danger: true,
        id: "claim-confirm",
        body: [
          el(
            "p",
            {},
            "This receipt candidate is ",
            el("strong", {}, "only the poster's claim"),
            `: no log the runner kept on ${env.name} has its artifact hash `,
            el("code", { class: "hash" }, evidence.artifact_hash),
            ". Nothing on the environment checked it.",
          ),
          el(
            "p",
            {},
            "Importing it turns the block green on the poster's word, and the mission's landed letter names the new store version.",
          ),
        ],
      });
      if (!sure) return;
    }
    if (button) button.disabled = true;
    const done = await acted("Importing the receipt", () =>
      call(
        "remote.land",
        { missionId: id, confirmClaim: !evidence.checked, imported_via: HUMAN_UI },
        { human: true },
      ),
    );
    if (button) button.disabled = false;
    if (done) {
      app.tray?.refresh({ force: true }); // the card says landed now, not after the idle pace
      await refresh();
    }
  }

  // The branch's change (remote.diff) and the Merge gesture (remote.merge); which phases may
  // be merged is the host's `mergeable`. Diffs are text nodes; a cut one says why.
  async function showReview(id, review) {
    replace(review, el("p", { class: "muted" }, "Reading the branch's change…"));
    let d;
    try {
      d = (await call("remote.diff", { missionId: id })).result;
    } catch (err) {
      if (view.dataset.mission === id) replace(review, el("p", {}, refusalParts(err)));
      return;
    }
    if (view.dataset.mission !== id) return;
    const count = (f) => (f.binary ? "binary" : `+${f.added} −${f.removed}`);
    const mergeButton = guard(
      app,
      "remote.merge",
      el(
        "button",
        {
          type: "button",
          id: "mission-merge",
          disabled: !d.into,
          title: d.into ? "" : "The project has no branch checked out.",
          onclick: () => merge(id, d),
        },
        d.into ? `Merge into ${d.into}` : "Merge",
      ),
    );
    replace(
      review,
      el("h5", {}, "Change on ", el("code", {}, d.branch)),
      el(
        "p",
        { class: "muted" },
        `${d.files.length} file${d.files.length === 1 ? "" : "s"} changed against ${d.base.slice(0, 12)}`,
        d.more ? ` (and ${d.more} more not listed)` : "",
        ".",
      ),
      el(
        "ul",
        { id: "diff-files", class: "diff-files" },
        d.files.map((f) =>
          el(
            "li",
            { "data-path": f.path },
            el("a", { href: `#diff-${d.files.indexOf(f)}` }, el("code", {}, f.path)),
            " ",
            el("span", { class: "diff-count" }, count(f)),
          ),
        ),
      ),
      d.secret_warning
        ? el("p", { id: "diff-secret", class: "warn", role: "note" }, d.secret_warning)
        : null,
      el("div", { class: "toolbar" }, mergeButton),
      el("p", { id: "merge-status", role: "status", "aria-live": "polite" }),
      d.files.map((f, i) =>
        el(
          "details",
          { id: `diff-${i}`, class: "diff-file", open: i < 5, "data-path": f.path },
          el(
            "summary",
            {},
            el("code", {}, f.path),
            " ",
            el("span", { class: "diff-count" }, count(f)),
          ),
          f.patch !== null
            ? el("pre", { class: "text-view diff-patch", tabindex: "0" }, f.patch)
            : null,
          f.cut ? el("p", { class: "muted diff-cut" }, f.cut) : null,
        ),
      ),
    );
  }

  async function merge(id, d) {
    const sure = await confirmDialog({
      title: `Merge ${d.branch} into ${d.into}?`,
      confirmLabel: "Merge",
      id: "merge-confirm",
      text: `This merges the mission's branch ${d.branch} into ${d.into}, the branch checked out in ${project.name} on ${env.name}: a fast-forward, or a merge commit naming the mission. A conflict changes nothing.${d.secret_warning ? ` ${d.secret_warning}` : ""}`,
    });
    if (!sure) return;
    const button = view.querySelector("#mission-merge");
    if (button) button.disabled = true;
    const done = await acted("Merging the branch", () =>
      call("remote.merge", { missionId: id }, { human: true }),
    );
    if (button) button.disabled = false;
    const status = view.querySelector("#merge-status");
    if (done && status && view.dataset.mission === id) {
      const how = {
        "fast-forward": "fast-forwarded",
        "merge-commit": "merged with a merge commit",
        "up-to-date": "already contained it",
      }[done.result.how];
      replace(
        status,
        `${done.result.into} ${how}: now at `,
        el("code", {}, done.result.head.slice(0, 12)),
        ".",
      );
      status.dataset.how = done.result.how;
    }
  }

  async function cancel() {
    const id = state.open;
    const button = view.querySelector("#mission-cancel");
    button.disabled = true;
    const done = await acted("Cancelling the mission", () =>
      call("remote.cancel", { missionId: id }, { human: true }),
    );
    button.disabled = false;
    if (done) {
      app.tray?.refresh({ force: true });
      await refresh();
    }
  }

  function openMission(id) {
    state.open = id;
    state.log = null;
    state.logSeq += 1;
    clearTimeout(state.logTimer);
    showMission();
    view.scrollIntoView({ block: "nearest" });
    followLog(state.logSeq);
  }

  // The last log answer (or refusal) of the open mission, shown again whenever the view is
  // (re)built: opened from the tray's Review…, the log may answer before the board does.
  function showLog() {
    const got = state.log;
    if (!got || got.mission !== view.dataset.mission) return;
    const pre = view.querySelector("#mission-log");
    const meta = view.querySelector("#mission-log-meta");
    if (got.error) {
      if (meta)
        replace(meta, "The log could not be read: ", refusalParts(got.error), " (trying again)");
      return;
    }
    const logView = got.view;
    if (pre && pre.textContent !== logView.text) {
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.textContent = logView.text;
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    }
    if (meta)
      meta.textContent = `${logView.bytes} bytes${logView.finished ? " · the run has ended" : " · following"}${logView.truncated ? " · more was printed than the runner kept" : ""}`;
  }

  async function followLog(seq) {
    if (!alive() || seq !== state.logSeq) return;
    let finished = false;
    const mission = state.open;
    try {
      const answer = await call("remote.log", { missionId: mission });
      if (seq !== state.logSeq) return;
      state.log = { mission, view: answer.result };
      finished = answer.result.finished;
    } catch (err) {
      if (seq !== state.logSeq) return;
      state.log = { mission, error: err }; // said in the view, and asked again
    }
    showLog();
    // the host's pace for a running log (core FOLLOW_LOG_MS, via the tray's remote.tray answer)
    if (!finished && alive())
      state.logTimer = setTimeout(() => followLog(seq), app.tray?.remote?.log_ms ?? LOG_MS);
  }

  async function refresh() {
    clearTimeout(state.timer);
    if (!alive()) return;
    try {
      const answer = await call("remote.board", { capability: state.capability });
      state.board = answer.result;
      showBoard(state.board);
    } catch (err) {
      replace(reason, refusalParts(err));
      spawnButton.disabled = true;
    }
    if (!alive()) return;
    state.timer = setTimeout(refresh, state.board?.moving ? BUSY_MS : IDLE_MS);
  }

  refresh();
  if (opts.mission) openMission(opts.mission);
}
