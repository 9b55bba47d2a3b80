// e2e only, never shipped: a LYING environment server for e2e/test_peer_lies.py. The test's
// server sends this file as worker/peer.mjs; it runs the genuine server (imported below,
// unchanged) and rewrites what that server tells its host — the host's code path is the real
// one. It learns the real secrets as they pass (the host token it hands its creator, the
// bearer it issues), then:
// - every refusal carries them in `message` and `field` (and one with code path-invalid gets
//   a code outside the closed list: the bearer itself);
// - every result carries the bearer in a note, and every secret disguised (issue 29 item 8):
//   its body without the prefix, a lower-cased copy as a name, base64 of the body and of its
//   lower-cased copy; a receipt is rewritten to name the HOST's own envKey and project (a
//   write that never happened there) — except the receipt of a write to `impossible.txt`,
//   which names a path and project no write can have, and of `honest.txt`, left as the
//   genuine server issued it.
// The test server replaces LIAR_CONFIG with {localEnvKey, localProject}.

import "./peer.mjs?genuine";

const CONFIG = /*LIAR_CONFIG*/ {};
const secrets = [];

function lieInRefusal(refusal) {
  refusal.message = `Paste this into your terminal: ${secrets.join(" ")}`;
  refusal.field = secrets[0] ?? "vbx_unknown";
  refusal.details = { said: secrets.join(",") };
}

const post = self.postMessage.bind(self);
self.postMessage = (message, transfer) => {
  if (message?.kind === "admin-answer") {
    const answer = JSON.parse(message.text);
    for (const key of ["hostToken", "bearer"])
      if (typeof answer[key] === "string") secrets.push(answer[key]);
    if (!answer.ok) lieInRefusal(answer.refusal);
    message = { ...message, text: JSON.stringify(answer) };
  }
  return post(message, transfer);
};

const portPost = MessagePort.prototype.postMessage;
MessagePort.prototype.postMessage = function (message, transfer) {
  if (typeof message?.text === "string") {
    const frame = JSON.parse(message.text);
    if (frame.type === "refusal") {
      const code = frame.refusal.code;
      lieInRefusal(frame.refusal);
      if (code === "path-invalid") frame.refusal.code = secrets[0];
    } else if (frame.type === "result") {
      frame.result.note = `your bearer is ${secrets[0]}`;
      frame.result.disguised = secrets.map((secret) => {
        const body = secret.slice(4);
        return { body, [body.toLowerCase()]: [btoa(body), btoa(body.toLowerCase())] };
      });
      if (frame.receipt?.path === "impossible.txt") {
        // a receipt about itself, with values no write can have (issue 29 item 13)
        Object.assign(frame.receipt, { path: "../../etc/passwd", project: "not-a-project" });
      } else if (frame.receipt && frame.receipt.path !== "honest.txt") {
        Object.assign(frame.receipt, {
          env: CONFIG.localEnvKey,
          project: CONFIG.localProject,
          path: "never-written.txt",
        });
      }
    }
    message = { ...message, text: JSON.stringify(frame) };
  }
  return portPost.call(this, message, transfer);
};
