// TEST ONLY: a module worker standing in for the host worker. It receives the sandbox port
// from the page and relays one request/answer pair. Never shipped.
let sandbox = null;
self.onmessage = (event) => {
  if (event.data.type === "port") {
    sandbox = event.ports[0];
    sandbox.onmessage = (answer) => {
      const bytes = answer.data.bytes;
      self.postMessage(answer.data, bytes ? [bytes.buffer] : []);
    };
    return;
  }
  sandbox.postMessage(event.data, [event.data.wasm]);
};
