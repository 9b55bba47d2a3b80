// A picked folder whose access lapsed: say so, and let a person grant it again. The browser
// only asks for permission inside a gesture, so this is a button; the host then checks again.

import { el, replace } from "../dom.mjs";
import { clearAlerts, guarded, refusalParts, showRefusal } from "./alerts.mjs";

export function renderGrantAccess(node, app, projectId, refusal) {
  const grant = el(
    "button",
    {
      type: "button",
      class: "primary",
      id: "grant-access",
      onclick: async () => {
        const answer = await guarded("Asking for access", () =>
          app.host.call("project.folder_handle", { project: projectId }),
        );
        if (!answer?.attachment) return;
        let state;
        try {
          state = await answer.attachment.requestPermission({ mode: "readwrite" });
        } catch {
          state = "denied";
        }
        if (state !== "granted") {
          // The person said no (or the browser did): show the host's own refusal for this state.
          try {
            await app.host.call("project.open", { project: projectId }, { human: true });
          } catch (err) {
            showRefusal(err, "Opening the folder");
            return;
          }
        }
        clearAlerts();
        await app.openProject(projectId);
      },
    },
    "Grant access again",
  );
  replace(
    node,
    el("h2", {}, "This folder needs your permission again"),
    el("p", {}, refusalParts(refusal)),
    el(
      "p",
      { class: "muted" },
      "The browser keeps folder access only for a while. Granting it again opens the project; nothing is read or written before you do.",
    ),
    el(
      "div",
      { class: "toolbar" },
      grant,
      el("button", { type: "button", onclick: () => app.go("projects") }, "Back to projects"),
    ),
  );
  grant.focus();
}
