// The page's side of the host protocol (SPEC §4): one dedicated module worker, one answer per
// request id. This module holds no secret and makes no decision: it sends what the UI asks,
// and hands back the host's answer (result or refusal) unchanged.
//
// It also keeps the worker alive (docs/security.md, "Host crash"):
// - death: the worker holds a Web Lock named by this page (`voicebox-alive-<uuid>`) for its
//   whole life, and the page queues a request for the same lock — granted the moment the
//   worker is gone, however it went (closed itself, crashed, was killed). No event fires on a
//   `Worker` that closes itself; the lock does.
// - hang: a ping every second, answered by the worker's JavaScript; a ping unanswered for
//   `hangAfterMs` (60 s: longer than any synchronous step of the host) means it is stuck.
// - an uncaught error in the worker after boot, or a call its glue could not answer.
// Each ends the worker and starts a new one; every call in flight is answered with the
// refusal host-restarted (503, core/refusals.py): its outcome is unknown, never silence. Data
// written before survives — every write is atomic (browser_host/opfs.py).
//
// Every tab a workspace (issue 33 item 2; docs/architecture.md): a tab whose worker finds the
// storage owned by another tab's host (standby) does not stop there. It asks the tabs' broker
// (worker/broker.mjs, a SharedWorker) to hand a MessagePort of its own to that host's worker
// and speaks the same protocol on it: this tab is a follower, `role` "follower", a full
// workspace over the one host. Its own worker keeps waiting in the storage lock's queue. The
// follower watches the leader's host lock (`voicebox-host-page-<leader>`): when that host is
// gone, the calls in flight on the port are answered host-restarted (outcome unknown; an
// editor keeps its unsaved text), new calls wait in this client, and then either this tab's
// own worker takes the storage lock (boot stage "takeover": the calls go to it, queued there
// until it is ready, and this tab leads) or the port is handed to the new leader. The page is
// never emptied on the way: no standby card, no re-render.

import { HUMAN_UI, PROTOCOL_VERSION } from "./contract.gen.mjs";
import { trustedBrokerUrl, trustedWorkerUrl } from "./trusted-types.mjs";

/** core/refusals.py Code.HOST_RESTARTED — the only refusal the page itself gives. */
export const HOST_RESTARTED = Object.freeze({ code: "host-restarted", status: 503 });
const PING_MS = 1000;
const RESTARTS_PER_MINUTE = 3;
/** Held by this page for its life (`voicebox-page-<id>`); the host worker holding the storage
 * lock holds `voicebox-host-page-<id>` of the page that started it. A host worker that finds
 * the storage lock held waits a few seconds for a holder whose page is gone (a reload: the old
 * worker is still being ended) or is this page (a restart), and declares standby after a
 * short look (about 0.5 s) for a holder whose page is alive — another tab (worker/host.mjs,
 * "One host owns the storage"). */
const PAGE_LOCK_PREFIX = "voicebox-page-";
/** Held by a host worker that owns the storage, beside it, naming its page (worker/host.mjs):
 * a follower queues for it, and is granted it the moment that host worker is gone. */
const HOST_PAGE_PREFIX = "voicebox-host-page-";
/** A follower whose leader went waits this long for its own worker's takeover before it
 * asks the broker for the next leader (ms): both follow from the same lock release. */
const TAKEOVER_LOOK_MS = 300;

export class Refusal extends Error {
  constructor(refusal) {
    super(refusal.message);
    this.code = refusal.code;
    this.status = refusal.status;
    this.field = refusal.field ?? null;
  }
}

export class HostClient extends EventTarget {
  #worker = null;
  #generation = 0;
  #next = 0;
  #waiting = new Map();
  #ping = { n: 0, sentAt: null };
  #ticker = null;
  #restarts = [];
  #page = crypto.randomUUID();
  /** This page's id: the name of the lock it holds for its life (what it tells the host
   * when it says which unsaved text it holds, core/host/unsaved_ops.py). */
  get pageId() {
    return this.#page;
  }
  /** The tabs' broker's port (a SharedWorker's), or null where there is none. */
  #broker = null;
  /** The port to the leader's host worker while this tab follows, else null. */
  #port = null;
  /** The leader's page id, once the broker said where the port went. */
  #leader = null;
  /** Messages held while no host takes them: the leader went, the next is not known yet. */
  #held = null;
  /** Leaders seen going whose page is gone too: never handed a port again. */
  #gone = new Set();
  /** "booting" | "standby" | "ready" | "restarting" | "error" */
  state = "booting";
  /** "leader": this tab's worker is the host; "follower": another tab's host answers it
   * through a brokered port (issue 33 item 2); null while booting. */
  role = null;
  versions = null;
  failure = null;
  /** The last time the host stopped: {reason, detail, pending, at}, or null. */
  lastLoss = null;
  /** A ping unanswered this long means the worker is stuck (ms). */
  hangAfterMs = 60_000;

  start() {
    // Leaving the page (not into the back-forward cache): end the host now, so that its
    // storage lock is free soon for the next page's host even while it is busy (the late
    // imports run right after ready, issue 18); that host waits a few seconds for a lock held
    // by a host whose page is gone (this page's lock, below) before it declares standby.
    navigator.locks?.request(PAGE_LOCK_PREFIX + this.#page, () => new Promise(() => {}));
    addEventListener("pagehide", (event) => {
      if (event.persisted) return;
      this.#port?.postMessage({ kind: "leave" });
      if (this.role === "leader") this.#broker?.postMessage({ kind: "resign", page: this.#page });
      this.#worker?.terminate();
    });
    this.#connectBroker();
    this.#spawn();
    this.#ticker = setInterval(() => this.#tick(), PING_MS);
  }

  #spawn() {
    const generation = ++this.#generation;
    const worker = new Worker(trustedWorkerUrl(), { type: "module", name: "voicebox-host" });
    this.#worker = worker;
    this.#ping = { n: 0, sentAt: null };
    worker.onmessage = (event) => {
      if (generation === this.#generation) this.#receive(event.data, generation);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (generation !== this.#generation) return;
      const message = event.message || "script error";
      if (this.state === "booting" || this.state === "restarting") {
        this.#fail({
          code: "boot-failed",
          message: `The host worker failed: ${message}`,
          file: "worker/host.mjs",
        });
      } else this.#lost("uncaught-error", message);
    };
    worker.postMessage({ kind: "page", id: this.#page });
    if (navigator.locks)
      worker.postMessage({ kind: "watch", lock: `voicebox-alive-${crypto.randomUUID()}` });
  }

  /** Join the tabs' broker: a leader hands the ports it is given to its host worker; a
   * follower learns where its port went. No SharedWorker: standby as before (issue 10). */
  #connectBroker() {
    if (typeof SharedWorker !== "function") return;
    try {
      const broker = new SharedWorker(trustedBrokerUrl(), {
        type: "module",
        name: "voicebox-broker",
      });
      this.#broker = broker.port;
    } catch {
      return;
    }
    this.#broker.onmessage = (event) => {
      const data = event.data;
      if (data?.kind === "follower" && event.ports[0])
        this.#worker?.postMessage({ kind: "follower" }, [event.ports[0]]);
      else if (data?.kind === "routed" && typeof data.leader === "string")
        this.#watchLeader(data.leader);
    };
  }

  /** This tab's worker is in standby: follow the leader through a port of our own. */
  #follow() {
    const channel = new MessageChannel();
    const port = channel.port1;
    this.#port = port;
    this.#leader = null;
    port.onmessage = (event) => {
      if (port === this.#port) this.#fromLeader(event.data);
    };
    // the host learns this tab is gone by the lock this page holds for its life
    port.postMessage({ kind: "tab", page: this.#page });
    this.#broker.postMessage({ kind: "follow", avoid: [this.#page, ...this.#gone] }, [
      channel.port2,
    ]);
    if (this.#held) {
      const held = this.#held;
      this.#held = null;
      for (const [message, transfer] of held) port.postMessage(message, transfer);
    }
  }

  /** Learn of the leader's host worker going (however: closed tab, crash, restart) by its lock. */
  #watchLeader(leader) {
    this.#leader = leader;
    const port = this.#port;
    navigator.locks?.request(HOST_PAGE_PREFIX + leader, () => {
      if (port === this.#port) this.#leaderGone(leader);
    });
  }

  /** The leader's host worker is gone: what was in flight on the port has an unknown outcome;
   * new calls wait here until this tab's worker takes over or the port reaches the next. */
  async #leaderGone(leader) {
    this.#port?.close();
    this.#port = null;
    this.#held = [];
    this.#rejectAll({
      ...HOST_RESTARTED,
      message:
        "The tab that held the host closed while this call was in flight; whether the call took effect is unknown, so check before repeating it.",
    });
    const held = ((await navigator.locks.query()).held ?? []).map((l) => l.name);
    if (!held.includes(PAGE_LOCK_PREFIX + leader)) this.#gone.add(leader);
    // this tab's worker may be the one granted the storage lock ("takeover", at the same
    // moment); if another tab's is, the broker hands our port to that one
    await new Promise((resolve) => setTimeout(resolve, TAKEOVER_LOOK_MS));
    if (this.#held && this.role === "follower") this.#follow();
  }

  /** A message from the leader's host worker on our port. */
  #fromLeader(data) {
    if (!data || typeof data !== "object") return;
    if (data.kind === "ready") {
      const first = this.role !== "follower" || this.state !== "ready";
      this.state = "ready";
      this.role = "follower";
      this.versions = data.versions;
      if (typeof data.leader === "string" && data.leader !== this.#leader)
        this.#watchLeader(data.leader);
      if (first)
        this.#emit("ready", {
          ...data.versions,
          follower: true,
          tookOver: false,
          restarted: false,
        });
    } else if (data.kind !== "pong") this.#receive(data, this.#generation);
  }

  /** What this client said while its page did not listen yet ([type, detail] in order), or
   * null: said at once (issue 34, cold boot: page/start-host.mjs starts the host before the
   * page's own module is in). */
  #unheard = null;

  /** Hold what this client says until `listen()`: for a page that starts the host before its
   * listeners are added. */
  hold() {
    this.#unheard ??= [];
  }

  /** The page listens now: what was held is said, in order, and from now on at once. */
  listen() {
    const held = this.#unheard ?? [];
    this.#unheard = null;
    for (const [type, detail] of held) this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  #emit(type, detail) {
    if (this.#unheard) this.#unheard.push([type, detail]);
    else this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  #fail(failure) {
    this.state = "error";
    this.failure = failure;
    clearInterval(this.#ticker);
    this.#worker?.terminate();
    this.#generation += 1;
    this.#emit("fatal", failure);
    this.#rejectAll({ code: failure.code, status: 503, message: failure.message });
  }

  #rejectAll(refusal) {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const { reject } of waiting) reject(new Refusal(refusal));
    return waiting.length;
  }

  /** The worker is gone or unusable: answer what was in flight, start a new one. */
  #lost(reason, detail = "") {
    if (this.state === "error") return;
    const now = Date.now();
    this.#restarts = this.#restarts.filter((t) => now - t < 60_000);
    this.#restarts.push(now);
    if (this.#restarts.length > RESTARTS_PER_MINUTE) {
      this.#fail({
        code: "boot-failed",
        message: `The host stopped ${this.#restarts.length} times within a minute (last: ${reason}); reload the page to try again.`,
        file: null,
      });
      return;
    }
    this.#worker.terminate();
    const wasStandby = this.state === "standby";
    this.state = "restarting";
    this.#spawn();
    const pending = this.#rejectAll({
      ...HOST_RESTARTED,
      message:
        "The host stopped while this call was in flight and was restarted; whether the call took effect is unknown, so check before repeating it.",
    });
    this.lastLoss = { reason, detail, pending, at: now, wasStandby };
    this.#emit("lost", this.lastLoss);
  }

  #tick() {
    if (this.state !== "ready" && this.state !== "standby") return;
    const ping = this.#ping;
    if (ping.sentAt !== null) {
      if (performance.now() - ping.sentAt > this.hangAfterMs)
        this.#lost("hung", `no answer to a ping for ${Math.round(this.hangAfterMs / 1000)} s`);
      return;
    }
    ping.n += 1;
    ping.sentAt = performance.now();
    this.#worker.postMessage({ kind: "ping", n: ping.n });
  }

  #receive(data, generation) {
    if (!data || typeof data !== "object") return;
    if (data.kind === "boot") {
      if (data.stage === "takeover" && this.role === "follower") {
        // the leader is gone and this tab's worker holds the storage now: calls go to it (it
        // queues them until its host is ready); the page stays as it is
        if (this.#port) {
          // the storage came to this tab before the leader's lock said its host was gone
          this.#port.close();
          this.#port = null;
          this.#rejectAll({
            ...HOST_RESTARTED,
            message:
              "The tab that held the host closed while this call was in flight; whether the call took effect is unknown, so check before repeating it.",
          });
        }
        const held = this.#held ?? [];
        this.#held = null;
        this.role = "leader";
        for (const [message, transfer] of held) this.#worker.postMessage(message, transfer);
        if (this.state === "ready") {
          this.#emit("takeover", data);
          return;
        }
        // no leader ever answered this tab: an ordinary boot, at its take-over stage
      }
      if (this.state === "standby" && data.stage === "takeover") this.state = "booting";
      if (this.state === "booting" || this.state === "restarting") this.#emit("boot", data);
    } else if (data.kind === "standby") {
      if (this.#broker && navigator.locks) {
        // another tab's host owns the storage: be a workspace over it (issue 33 item 2)
        if (!this.#port && !this.#held) this.#follow();
        this.role = "follower";
        if (this.state === "restarting") {
          // this tab's own standby worker was restarted; the leader's host still answers
          this.state = "ready";
          this.#emit("ready", {
            ...this.versions,
            follower: true,
            tookOver: false,
            restarted: true,
          });
        }
        return;
      }
      this.state = "standby";
      this.#emit("standby", data);
    } else if (data.kind === "ready") {
      const restarted = this.state === "restarting";
      const tookOver = Boolean(data.tookOver);
      const wasFollower = this.state === "ready" && tookOver;
      this.state = "ready";
      this.role = "leader";
      this.versions = data.versions;
      this.#broker?.postMessage({ kind: "lead", page: this.#page });
      this.#emit("ready", {
        ...data.versions,
        tookOver,
        restarted,
        wasFollower,
        startMs: data.startMs,
      });
    } else if (data.kind === "fatal") this.#fail(data);
    else if (data.kind === "watching") {
      navigator.locks.request(data.lock, () => {
        if (generation === this.#generation) this.#lost("stopped");
      });
    } else if (data.kind === "pong") {
      if (data.n === this.#ping.n) this.#ping.sentAt = null;
    } else if (data.kind === "broken") this.#lost("broken", data.message);
    else if (data.kind === "event" && typeof data.text === "string") {
      // something the page shows changed, unasked (a remote's state: core/custody/remote.py
      // RemoteChanged): handed on as it came, an "event" event
      try {
        this.#emit("event", JSON.parse(data.text));
      } catch {
        // not JSON: nothing to hand on
      }
    } else if (data.kind === "chunk") {
      const waiter = this.#waiting.get(data.id);
      if (!waiter) return;
      if (!waiter.streamed && data.data) waiter.chunks.push(data.data);
      // a streamed call with a sink (issue 34, round 42): its bytes went to the sink, and only
      // their count comes here (`bytes`, no `data`)
      const chunk = data.data ?? null;
      if (chunk === null) waiter.received += Number(data.bytes) || 0;
      else waiter.received += chunk instanceof Blob ? chunk.size : chunk.byteLength;
      waiter.onChunk?.(waiter.received, chunk);
    } else if (data.kind === "head") {
      // a streamed call's archive: its name and its files' bytes, before its first chunk
      this.#waiting.get(data.id)?.onHead?.({ filename: data.filename, bytes: data.bytes });
    } else if (data.kind === "answer") {
      const answer = JSON.parse(data.text);
      const id = data.id ?? answer.id;
      const waiter = this.#waiting.get(id);
      if (!waiter) return;
      this.#waiting.delete(id);
      const stream = waiter.chunks.length ? new Blob(waiter.chunks) : null;
      if (answer.ok)
        waiter.resolve({
          result: answer.result,
          body: data.body ?? null,
          stream,
          attachment: data.attachment ?? null,
          logged: answer.logged,
          loggedPending: answer.logged_pending === true,
        });
      else waiter.reject(new Refusal(answer.refusal));
    }
  }

  #post(
    id,
    text,
    {
      body = null,
      attachment = null,
      onChunk = null,
      onHead = null,
      signal = null,
      sink = null,
    } = {},
  ) {
    return new Promise((resolve, reject) => {
      if (this.state === "error") {
        reject(
          new Refusal({ code: this.failure.code, status: 503, message: this.failure.message }),
        );
        return;
      }
      const streamed = signal !== null;
      this.#waiting.set(id, {
        resolve,
        reject,
        onChunk,
        onHead,
        chunks: [],
        received: 0,
        streamed,
      });
      const transfer = body ? [body] : [];
      if (attachment instanceof MessagePort) transfer.push(attachment);
      const message = { kind: "call", id, text, body, attachment };
      if (streamed) {
        message.stream = true;
        if (sink instanceof MessagePort) {
          message.sink = sink;
          transfer.push(sink);
        }
        signal.addEventListener("abort", () => this.#drop(id), { once: true });
      }
      if (this.#held)
        this.#held.push([message, transfer]); // between two hosts
      else (this.#port ?? this.#worker).postMessage(message, transfer);
    });
  }

  /** The streamed call `id` is no longer wanted: the host posts no more of its chunks and
   * stops reading (worker/host.mjs, "drop"); its answer still comes. */
  #drop(id) {
    if (!this.#waiting.has(id)) return;
    const message = { kind: "drop", id };
    if (this.#held) this.#held.push([message, []]);
    else (this.#port ?? this.#worker).postMessage(message);
  }

  /**
   * Send `op` with `args`; resolve {result, body, logged} or reject with a Refusal.
   * `body` (ArrayBuffer) is transferred; `human: true` marks a person's gesture (origin HUMAN_UI);
   * `attachment` (a FileSystemDirectoryHandle the person picked) is structured-cloned.
   * A streaming answer (e.g. an archive) arrives as chunks, reported to
   * `onChunk(bytesSoFar, chunk)` (the chunk an ArrayBuffer or a Blob, as it came: search in
   * files reads its results from it) and resolved as `stream` (a Blob).
   * With `signal` (an AbortSignal; issue 34, a streamed download) the call is streamed: its
   * chunks are ArrayBuffers handed only to `onChunk`, never gathered (`stream` is null), and
   * aborting `signal` drops it — the host posts no more chunks and stops reading; the answer
   * (a refusal, once dropped mid-way) still settles the promise. With `signal` and `sink` (a
   * MessagePort: a streamed download's, page/download.mjs; issue 34, round 42) the chunks go
   * from the host worker straight to `sink` (ArrayBuffers, then {end: true} when the answer is
   * ok, else {end: false}) and never reach this page: `onChunk(bytesSoFar, null)` counts them.
   * A streamed call's `onHead({filename, bytes})` hears, before its first chunk, the name its
   * archive is saved under and its files' bytes (round 42).
   */
  call(
    op,
    args = {},
    {
      body = null,
      human = false,
      attachment = null,
      onChunk = null,
      onHead = null,
      signal = null,
      sink = null,
    } = {},
  ) {
    const id = `p${++this.#next}`;
    const message = { v: PROTOCOL_VERSION, id, op, args };
    if (human) message.origin = HUMAN_UI;
    return this.#post(id, JSON.stringify(message), {
      body,
      attachment,
      onChunk,
      onHead,
      signal,
      sink,
    });
  }

  /** Post raw `text` (any string) under the transport id `id`, with an optional body (tests). */
  callRaw(text, id, body = null) {
    return this.#post(id, text, { body });
  }
}
