// The page's side of the host protocol (SPEC §4): one dedicated module worker, one answer per
// request id. This module holds no secret and makes no decision: it sends what the UI asks,
// and hands back the host's answer (result or refusal) unchanged.

import { trustedWorkerUrl } from "./trusted-types.mjs";

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
  #next = 0;
  #waiting = new Map();
  #queue = [];
  state = "booting";
  versions = null;
  failure = null;

  start() {
    this.#worker = new Worker(trustedWorkerUrl(), { type: "module", name: "voicebox-host" });
    this.#worker.onmessage = (event) => this.#receive(event.data);
    this.#worker.onerror = (event) => {
      event.preventDefault();
      this.#fail({ code: "boot-failed", message: `The host worker failed: ${event.message || "script error"}`, file: "worker/host.mjs" });
    };
  }

  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  #fail(failure) {
    this.state = "error";
    this.failure = failure;
    this.#emit("fatal", failure);
    for (const { reject } of this.#waiting.values()) reject(new Refusal({ code: failure.code, status: 503, message: failure.message }));
    this.#waiting.clear();
  }

  #receive(data) {
    if (!data || typeof data !== "object") return;
    if (data.kind === "boot") {
      if (this.state === "booting") this.#emit("boot", data);
    }
    else if (data.kind === "ready") {
      this.state = "ready";
      this.versions = data.versions;
      this.#emit("ready", data.versions);
    } else if (data.kind === "fatal") this.#fail(data);
    else if (data.kind === "chunk") {
      const waiter = this.#waiting.get(data.id);
      if (!waiter) return;
      waiter.chunks.push(data.data);
      waiter.received += data.data.byteLength;
      waiter.onChunk?.(waiter.received);
    } else if (data.kind === "answer") {
      const answer = JSON.parse(data.text);
      const waiter = this.#waiting.get(answer.id);
      if (!waiter) return;
      this.#waiting.delete(answer.id);
      const stream = waiter.chunks.length ? new Blob(waiter.chunks) : null;
      if (answer.ok) waiter.resolve({ result: answer.result, body: data.body ?? null, stream, attachment: data.attachment ?? null, logged: answer.logged });
      else waiter.reject(new Refusal(answer.refusal));
    }
  }

  /**
   * Send `op` with `args`; resolve {result, body, logged} or reject with a Refusal.
   * `body` (ArrayBuffer) is transferred; `human: true` marks a person's gesture ("human-ui");
   * `attachment` (a FileSystemDirectoryHandle the person picked) is structured-cloned.
   * A streaming answer (e.g. an archive) arrives as chunks, reported to `onChunk(bytesSoFar)`
   * and resolved as `stream` (a Blob).
   */
  call(op, args = {}, { body = null, human = false, attachment = null, onChunk = null } = {}) {
    const id = `p${++this.#next}`;
    const message = { v: 1, id, op, args };
    if (human) message.origin = "human-ui";
    const text = JSON.stringify(message);
    return new Promise((resolve, reject) => {
      if (this.state === "error") {
        reject(new Refusal({ code: this.failure.code, status: 503, message: this.failure.message }));
        return;
      }
      this.#waiting.set(id, { resolve, reject, onChunk, chunks: [], received: 0 });
      const transfer = body ? [body] : [];
      if (attachment instanceof MessagePort) transfer.push(attachment);
      this.#worker.postMessage({ kind: "call", id, text, body, attachment }, transfer);
    });
  }

  /** Post a raw text message (used only to show that malformed input gets a refusal). */
  callRaw(text, id) {
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject, chunks: [], received: 0 });
      this.#worker.postMessage({ kind: "call", id, text, body: null });
    });
  }
}
