// The plugin sandbox frame (SPEC §7, §8; docs/plugins.md): an opaque origin with its own CSP
// (default-src 'none'; connect-src 'none') — made by frames.mjs, so it loads offline too — that
// runs create-asset and every plugin, connected by a MessageChannel whose other end goes to the
// host worker. The page only makes the introduction; it never sends the sandbox work and never
// sees what runs there.

import { opaqueFrame } from "./frames.mjs";

export async function connectSandbox(host) {
  const frame = await opaqueFrame("tools/sandbox.html", "plugin sandbox (no network, no storage)");
  const channel = new MessageChannel();
  // An opaque origin cannot be named as a target: "*" is the only way to reach it, and the
  // sandbox accepts only the first connect from its parent.
  frame.contentWindow.postMessage({ type: "voicebox-sandbox-connect" }, "*", [channel.port2]);
  await host.call("sandbox.connect", {}, { attachment: channel.port1 });
  return frame;
}
