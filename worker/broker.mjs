// The tabs' broker (issue 33 item 2; docs/architecture.md, "Every tab a workspace"): a
// SharedWorker every page of this site connects to. Its one job is to hand a follower tab's
// MessagePort to the tab whose host worker owns the storage (the leader), so the follower
// speaks the host protocol to that one host. BroadcastChannel cannot transfer ports; a
// SharedWorker can, and it lives exactly as long as a tab of the site is open. Thin glue: it
// reads no call, decides nothing about one and keeps no state but who leads and who waits.
//
// Page → broker: {kind: "lead", page}           this page's host worker owns the storage
//                {kind: "resign", page}         that page is leaving
//                {kind: "follow", avoid}  + port   hand this port to the leader, unless the
//                                               leader's page id is in `avoid` (a leader the
//                                               follower saw go, or the follower itself);
//                                               kept until a leader that fits says "lead"
// Broker → page: {kind: "follower"} + port      (to the leader) a follower's port
//                {kind: "routed", leader}       (to the follower) whose host its port reached:
//                                               the follower watches that page's life lock
//
// Only a page of this origin can reach a SharedWorker of this origin: the broker is no wider
// a door than the page itself (docs/security.md, "Every tab a workspace").

let leader = null; // {port, page}: the tab whose host owns the storage, as last said
const waiting = []; // {tab, port, avoid}: followers no leader has taken yet

function route() {
  if (!leader) return;
  for (const want of waiting.splice(0)) {
    if (want.avoid.includes(leader.page)) {
      waiting.push(want);
      continue;
    }
    leader.port.postMessage({ kind: "follower" }, [want.port]);
    want.tab.postMessage({ kind: "routed", leader: leader.page });
  }
}

self.onconnect = (event) => {
  const tab = event.ports[0];
  tab.onmessage = (message) => {
    const data = message.data;
    if (!data || typeof data !== "object" || typeof data.kind !== "string") return;
    if (data.kind === "lead" && typeof data.page === "string") {
      leader = { port: tab, page: data.page };
      route();
    } else if (data.kind === "resign" && leader?.port === tab) leader = null;
    else if (data.kind === "follow" && message.ports[0]) {
      const avoid = Array.isArray(data.avoid)
        ? data.avoid.filter((id) => typeof id === "string")
        : [];
      waiting.push({ tab, port: message.ports[0], avoid });
      route();
    }
  };
};
