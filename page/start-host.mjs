// The host worker starts first (issue 34, cold boot): index.html loads this small module
// before app.mjs, so the worker is spawned as soon as this module's few imports are in —
// not after the whole page's module graph (every ui/*.mjs) has been fetched and run, which
// put about 175 ms before the worker even existed on a cold load (bench/README.md, "Cold
// boot profile"). What the host says before app.mjs listens is held by the client and given
// to app.mjs, in order, when it calls `host.listen()` (page/host-client.mjs).

import { HostClient } from "./host-client.mjs";
import { controlBeforeBoot } from "./sw-register.mjs";

/** The page's one host client, started here; app.mjs listens to it. */
export const host = new HostClient();
host.hold();

/** Settles once the worker is spawned: after a service worker that is active but not yet in
 * control has taken this page over (a hard reload: the host worker starts under it), or at
 * once when there is none (page/sw-register.mjs, controlBeforeBoot). */
export const started = controlBeforeBoot().then(() => host.start());
