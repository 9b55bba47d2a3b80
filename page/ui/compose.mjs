// Compose: point an agent at a block (seed 004 §4; SPEC §9). The host renders the packet
// (core/missions/packet.py, a jinja2 template — a pure function of what is chosen here) and drafts the
// mission's first letter; this surface shows the packet exactly and sends it by the chosen mode:
//   clipboard — copy the text (with a visible fallback when the browser refuses);
//   direct    — mission.deliver: the seq-1 judging letter plus the packet in the agent's inbox;
//   spawn     — unavailable for a project of this browser, with the host's reason.
// Which modes are offered is the host's answer (read-only host: clipboard only, and why).
//
// With a project of a remote environment viewed (app.viewing, issue 30), Compose is for that
// project (renderRemoteCompose): the host renders the packet from the remote store
// (remote.compose) and says whether spawn is offered — a live runner pinned for the chosen
// capability in a git repository — or which reason holds; spawning is remote.spawn, a person's
// gesture, and the mission then shows in the tray as its runner posts.

import { el, literal, name, replace } from "../dom.mjs";
import { OPERATOR } from "../contract.gen.mjs";
import { seatAndCapability } from "./words.mjs";
import { clearAlerts, guarded, refusalParts, showRefusal } from "./alerts.mjs";
import { blocked } from "./safe.mjs";
import { checkAsTyped } from "./validate.mjs";
import { composeControls, composeLayout, drawModes, draftOnChange } from "./compose_form.mjs";

const DIRECT_NOTICE = "direct: posted to the agent's inbox — delivery is not execution.";

export async function renderCompose(node, app, params = {}) {
  if (app.viewing) return renderRemoteCompose(node, app, app.viewing, params);
  const project = app.project;
  const blocks = await guarded("Reading the blocks", () =>
    app.host.call("blocks.get", { project: project.id }),
  );
  const store = blocks?.result.store ?? null;
  if (!store || !store.blocks.length) {
    replace(
      node,
      el("h2", {}, "Compose a mission"),
      el(
        "p",
        { class: "empty" },
        "This project has no blocks yet. A mission is always about a block: add one first.",
      ),
      el(
        "button",
        { type: "button", class: "primary", onclick: () => app.go("blocks") },
        "Go to Blocks",
      ),
    );
    return;
  }
  const state = { drafted: null, mode: app.readOnly ? "clipboard" : "direct", seq: 0 };
  const blockSelect = el(
    "select",
    { id: "compose-block" },
    store.blocks.map((b) =>
      el(
        "option",
        { value: b.id, selected: params.block === b.id },
        `${b.name} — boundary v${b.boundary_version}`,
      ),
    ),
    el("option", { value: store.skeleton_id }, "The whole skeleton"),
  );
  if (params.block) blockSelect.value = params.block;
  const controls = composeControls({ to: params.to, runnerPlaceholder: "none" });
  const { agentInput, seatSelect, capSelect, runnerInput, noteInput } = controls;
  const { modeBox, preview, refLine, metaLine, status } = controls;
  const fallback = el("div", { id: "clipboard-fallback", hidden: true });
  const send = el(
    "button",
    { type: "button", class: "primary", id: "compose-send", onclick: () => sendPacket() },
    "Deliver to the inbox",
  );

  function currentArgs() {
    const args = {
      project: project.id,
      block_id: blockSelect.value,
      to: agentInput.value.trim(),
      seat: seatSelect.value,
      capability: capSelect.value,
      note: noteInput.value,
      mode: state.mode === "clipboard" ? "clipboard" : "direct",
    };
    if (runnerInput.value.trim()) args.runner_id = runnerInput.value.trim();
    return args;
  }

  let modesShown = "";
  function renderModes(modes, readOnly) {
    send.textContent = state.mode === "clipboard" ? "Copy the packet" : "Deliver to the inbox";
    const signature = JSON.stringify([modes, readOnly]);
    if (signature === modesShown) {
      for (const radio of modeBox.querySelectorAll("input[type=radio]"))
        radio.checked = radio.value === state.mode;
      return;
    }
    modesShown = signature;
    drawModes(modeBox, modes, state.mode, (mode) => {
      state.mode = mode;
      draft();
    });
    if (readOnly)
      modeBox.append(
        el(
          "p",
          { class: "warn", id: "read-only-note" },
          "This host is read-only (SAFE mode): only the clipboard is offered, because direct delivery writes a letter.",
        ),
      );
  }

  async function draft() {
    const seq = ++state.seq;
    fallback.hidden = true;
    if (!state.drafted) replace(status);
    const args = currentArgs();
    if (!args.to) {
      state.drafted = null;
      preview.textContent = "";
      refLine.textContent = "Name the agent to render the packet.";
      send.disabled = true;
      return;
    }
    refLine.textContent = "Rendering…";
    let answer;
    try {
      answer = await app.host.call("compose.packet", args);
    } catch (err) {
      if (seq !== state.seq) return;
      state.drafted = null;
      send.disabled = true;
      preview.textContent = "";
      refLine.replaceChildren(...refusalParts(err));
      return;
    }
    if (seq !== state.seq) return;
    const d = answer.result;
    state.drafted = d;
    const usable = d.modes.find((m) => m.mode === state.mode && m.available);
    if (!usable) state.mode = "clipboard";
    renderModes(d.modes, d.read_only);
    preview.textContent = d.packet;
    replace(refLine, "packet_ref ", el("code", { id: "packet-ref-value" }, d.packet_ref));
    replace(
      metaLine,
      "mission ",
      el("code", { id: "packet-mission" }, d.mission_id),
      ` · ${d.packet.length} characters · `,
      seatAndCapability(d.letter.seat, d.letter.capability),
    );
    send.disabled = false;
  }

  async function sendPacket() {
    const d = state.drafted;
    if (!d) return;
    clearAlerts();
    if (state.mode === "clipboard") {
      try {
        await navigator.clipboard.writeText(d.packet);
        replace(
          status,
          el(
            "p",
            { class: "ok" },
            `Copied the packet (${d.packet.length} characters) to the clipboard. No letter was posted: the agent opens the mission itself.`,
          ),
        );
      } catch (err) {
        const area = el("textarea", {
          id: "clipboard-fallback-text",
          readonly: true,
          rows: "10",
          "aria-label": "Packet text to copy",
        });
        area.value = d.packet;
        replace(
          fallback,
          el(
            "p",
            { class: "warn" },
            `The browser refused clipboard access (${err?.name ?? "error"}). The packet is selected below: copy it with Ctrl+C (⌘C on a Mac).`,
          ),
          area,
        );
        fallback.hidden = false;
        replace(status, el("p", {}, "Clipboard refused — use the text below."));
        area.focus();
        area.select();
      }
      return;
    }
    send.disabled = true;
    replace(status, el("p", {}, el("progress", { "aria-label": "Delivering" }), " Delivering…"));
    try {
      const done = await app.host.call(
        "mission.deliver",
        {
          project: project.id,
          agent_id: OPERATOR,
          to: agentInput.value.trim(),
          letter: d.letter,
          packet: d.packet,
        },
        { human: true },
      );
      const posted = done.result.posted;
      replace(
        status,
        el("p", { class: "ok", id: "direct-notice" }, DIRECT_NOTICE),
        el(
          "p",
          { class: "muted" },
          "Mission ",
          el("code", { id: "delivered-mission" }, posted.mission_id),
          ` opened as letter ${posted.mission_seq} (${posted.phase}); the packet is in `,
          literal(agentInput.value.trim()),
          "'s inbox. ",
          done.result.notice,
        ),
      );
      app.tray?.refresh({ force: true });
      // The preview keeps showing exactly what was delivered; the next change (or "Compose
      // another") drafts a new mission.
      state.drafted = null;
      send.textContent = "Delivered";
      status.append(
        el(
          "button",
          { type: "button", id: "compose-another", onclick: () => draft() },
          "Compose another",
        ),
      );
    } catch (err) {
      replace(status);
      showRefusal(err, "Delivering the packet");
      send.disabled = false;
    }
  }

  draftOnChange(draft, {
    choices: [blockSelect, seatSelect, capSelect],
    typed: [agentInput, runnerInput, noteInput],
  });

  replace(
    node,
    el("h2", {}, "Compose a mission"),
    el(
      "p",
      { class: "muted" },
      "Point an agent at a block. The host renders the packet; direct delivery opens the mission with its first letter and puts the packet in the agent's inbox.",
    ),
    composeLayout(controls, {
      blockSelect,
      runnerHint: "The owner-pinned runner, if any.",
      send,
      agentCheck: checkAsTyped(agentInput, "compose.packet", "to", {
        transform: (v) => v.trim(),
      }),
      after: [fallback],
    }),
  );
  await draft();
}

/** Compose for `viewing.project` of the remote environment `viewing.env` (issue 30). */
async function renderRemoteCompose(node, app, viewing, params = {}) {
  const { env, project } = viewing;
  const base = { envKey: env.envKey, project: project.id };
  const state = { drafted: null, mode: "spawn", seq: 0, blocks: "" };
  const blockSelect = el("select", { id: "compose-block" });
  const controls = composeControls({ to: params.to, runnerPlaceholder: "any live runner" });
  const { agentInput, seatSelect, capSelect, runnerInput, noteInput } = controls;
  const { modeBox, preview, refLine, metaLine, status } = controls;
  const send = el(
    "button",
    {
      type: "button",
      class: "primary",
      id: "compose-send",
      disabled: true,
      onclick: () => sendPacket(),
    },
    "Spawn",
  );

  function currentArgs() {
    const args = {
      ...base,
      to: agentInput.value.trim(),
      seat: seatSelect.value,
      capability: capSelect.value,
      note: noteInput.value,
    };
    if (blockSelect.value) args.block_id = blockSelect.value;
    if (runnerInput.value.trim()) args.runner_id = runnerInput.value.trim();
    return args;
  }

  function renderModes(modes) {
    drawModes(modeBox, modes, state.mode, (mode) => {
      state.mode = mode;
      showSend();
    });
  }

  function showSend() {
    send.textContent = state.mode === "clipboard" ? "Copy the packet" : "Spawn";
    send.disabled =
      !state.drafted?.packet || (state.mode === "spawn" && Boolean(blocked(app, "remote.spawn")));
  }

  async function draft() {
    const seq = ++state.seq;
    const args = currentArgs();
    if (!args.to) {
      refLine.textContent = "Name the agent to render the packet.";
      send.disabled = true;
      return;
    }
    refLine.textContent = "Rendering…";
    let answer;
    try {
      answer = await app.host.call("remote.compose", args);
    } catch (err) {
      if (seq !== state.seq) return;
      state.drafted = null;
      send.disabled = true;
      preview.textContent = "";
      refLine.replaceChildren(...refusalParts(err));
      return;
    }
    if (seq !== state.seq) return;
    const d = answer.result;
    state.drafted = d;
    const signature = JSON.stringify([d.blocks, d.skeleton_id]);
    if (signature !== state.blocks) {
      state.blocks = signature;
      replace(
        blockSelect,
        d.blocks.map((b) =>
          el("option", { value: b.id }, `${b.name} — boundary v${b.boundaryVersion}`),
        ),
        d.skeleton_id && d.blocks.length
          ? el("option", { value: d.skeleton_id }, "The whole skeleton")
          : null,
      );
      if (d.block_id)
        blockSelect.value =
          params.block && d.blocks.some((b) => b.id === params.block) && !state.chosen
            ? params.block
            : d.block_id;
    }
    if (!d.modes.find((m) => m.mode === state.mode && m.available))
      state.mode = d.modes.find((m) => m.available)?.mode ?? "clipboard";
    renderModes(d.modes);
    preview.textContent = d.packet ?? "";
    if (d.packet === null) {
      replace(refLine, el("span", { id: "compose-note-line" }, d.note ?? ""));
      metaLine.textContent = "";
    } else {
      replace(refLine, "packet_ref ", el("code", { id: "packet-ref-value" }, d.packet_ref));
      replace(
        metaLine,
        `preview · ${d.packet.length} characters · `,
        seatAndCapability(d.letter.seat, d.letter.capability),
        ` · spawning renders it again from ${env.name}'s store under a mission id of its own`,
      );
    }
    showSend();
  }

  async function sendPacket() {
    const d = state.drafted;
    if (!d?.packet) return;
    clearAlerts();
    if (state.mode === "clipboard") {
      try {
        await navigator.clipboard.writeText(d.packet);
        replace(
          status,
          el(
            "p",
            { class: "ok" },
            `Copied the packet (${d.packet.length} characters) to the clipboard. No mission was opened.`,
          ),
        );
      } catch (err) {
        replace(
          status,
          el(
            "p",
            { class: "warn" },
            `The browser refused clipboard access (${err?.name ?? "error"}): select the packet and copy it.`,
          ),
        );
      }
      return;
    }
    send.disabled = true;
    replace(status, el("p", {}, el("progress", { "aria-label": "Spawning" }), " Spawning…"));
    const args = currentArgs();
    args.block_id = blockSelect.value;
    try {
      const done = await app.host.call("remote.spawn", args, { human: true });
      const r = done.result;
      replace(
        status,
        el(
          "p",
          { class: "ok", id: "spawn-notice" },
          "Spawned mission ",
          el("code", { id: "spawned-mission" }, r.mission_id),
          ` for runner ${r.runner_id} on ${env.name}; it shows in the tray as its runner posts.`,
        ),
        el(
          "button",
          {
            type: "button",
            id: "open-spawned",
            onclick: () =>
              app.go("environments", {
                env: env.envKey,
                missions: project.id,
                mission: r.mission_id,
              }),
          },
          "Open its mission view",
        ),
      );
      app.tray?.refresh({ force: true });
      noteInput.value = "";
      await draft();
    } catch (err) {
      replace(status, el("p", {}, refusalParts(err, { codeId: "spawn-refusal" })));
      showRefusal(err, "Spawning the mission");
      showSend();
    }
  }

  blockSelect.addEventListener("change", () => {
    state.chosen = true;
  });
  draftOnChange(draft, {
    choices: [blockSelect, seatSelect, capSelect],
    typed: [agentInput, runnerInput, noteInput],
  });

  replace(
    node,
    el(
      "h2",
      {},
      "Compose a mission in ",
      name(project.name, { id: "compose-project" }),
      ` on ${env.name}`,
    ),
    el(
      "p",
      { class: "muted" },
      "Point an agent at a block of this remote project. Spawn hands the packet to the environment's pinned runner, which runs the agent and then the gate in a worktree of its own and posts each phase; the tray follows it.",
    ),
    composeLayout(controls, {
      blockSelect,
      runnerHint: "A runner pinned on the environment; empty: any live one.",
      send,
    }),
  );
  await draft();
}
