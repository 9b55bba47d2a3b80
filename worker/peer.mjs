// An environment server (SPEC §6, E1): a dedicated worker the HOST worker spawns — the page
// has no handle to it. Boots Python like the host, then serves one environment from its own
// fenced storage: admin requests from its parent, execute channels on transferred ports.
// Thin glue: the hello gate, authorisation and tools are all in Python (core/custody/env_server.py).
//
// Parent → here: {kind: "start", name}, {kind: "admin", id, text}, {kind: "connect", envKey} + [port]
// Here → parent: {kind: "ready", envKey}, {kind: "fatal", code, message},
//                {kind: "admin-answer", id, text}

import { BootFailure, bootPython, holdLock } from "./boot.mjs";
import { installEgressGuard } from "./egress-guard.mjs";
import { Database } from "./idb.mjs";
import * as io from "./opfs-io.mjs";
import { AuditKey, Sealer } from "./sealed.mjs";

const SITE = new URL("../", import.meta.url);
const NAME = /^[a-z][a-z0-9-]{0,31}$/;
installEgressGuard({ site: SITE }); // starts no worker of its own

let bridge = null;
const waiting = [];

function handle(event) {
  const data = event.data;
  if (!bridge) {
    waiting.push(event);
    return;
  }
  if (data?.kind === "admin" && typeof data.text === "string") {
    bridge
      .admin(data.text)
      .then((text) => self.postMessage({ kind: "admin-answer", id: data.id, text }));
  } else if (data?.kind === "connect" && event.ports.length === 1) {
    bridge.accept(event.ports[0], String(data.envKey ?? ""));
  }
}

async function start(name) {
  if (!NAME.test(name)) throw new BootFailure("name-invalid", "bad environment name");
  if (!(await holdLock(`voicebox-env-${name}`))) {
    throw new BootFailure("host-active-elsewhere", `environment ${name} is served elsewhere`);
  }
  const { pyodide } = await bootPython({ site: SITE, report: () => {} });
  pyodide.registerJsModule("voicebox_io", io); // browser_host/opfs.py writes through it
  const db = new Database(`voicebox-env-${name}`);
  const main = pyodide.pyimport("browser_host.env_main");
  bridge = await main.start(name, db, new Sealer(db), new AuditKey(db));
  self.postMessage({ kind: "ready", envKey: bridge.env_key });
  for (const event of waiting.splice(0)) handle(event);
}

self.onmessage = (event) => {
  if (event.data?.kind === "start" && !bridge) {
    self.onmessage = handle;
    start(String(event.data.name)).catch((err) => {
      self.postMessage({
        kind: "fatal",
        code: err.code ?? "boot-failed",
        message: String(err.message ?? err),
      });
    });
  }
};
