// Bench only (never shipped): Python booted exactly as the host boots it (worker/boot.mjs),
// kept alive to run measurement snippets: {code} → {ok, value} (the snippet's last
// expression, awaited, as JSON text). The host's Database (worker/idb.mjs) is passed in as
// `db` on a bench-only database name.

import { bootPython } from "../worker/boot.mjs";
import { installEgressGuard } from "../worker/egress-guard.mjs";
import { Database } from "../worker/idb.mjs";

const SITE = new URL("../", import.meta.url);
installEgressGuard({ site: SITE }); // booted exactly as the host boots
const booted = bootPython({ site: SITE, report: () => {} });

self.onmessage = async (event) => {
  const { id, code } = event.data;
  try {
    const { pyodide } = await booted;
    const globals = pyodide.toPy({ db: new Database(`bench-lab-${Date.now()}`) });
    const value = await pyodide.runPythonAsync(code, { globals });
    self.postMessage({ id, ok: true, value: String(value) });
  } catch (err) {
    self.postMessage({ id, ok: false, message: String(err?.message ?? err) });
  }
};

booted.then(
  () => self.postMessage({ kind: "ready" }),
  (err) => self.postMessage({ kind: "fatal", message: `boot: ${err.message}` }),
);
