// Bench only (never shipped): the floor of the remote export (issue 34) — a bare WebSocket
// reader in a dedicated worker pulling the same bytes from the same environment server: it
// opens the server's execute channel, sends the hello (with a bearer the bench issued) and one
// execute frame of project.export, and counts the binary messages until the result frame for
// that id. No Python, no host, no checks. With `post`, each message is also transferred to the
// page, which keeps them and makes one Blob at the end (what the page does with an export).
// {url, hello, execute, id, post} → {ok, ms, bytes, messages, blob_ms}.

self.onmessage = (event) => {
  const { url, hello, execute, id, post } = event.data;
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  let bytes = 0;
  let messages = 0;
  let started = 0;
  socket.onopen = () => {
    socket.send(hello);
    started = performance.now();
    socket.send(execute);
  };
  socket.onmessage = (message) => {
    const data = message.data;
    if (typeof data !== "string") {
      bytes += data.byteLength;
      messages += 1;
      if (post) self.postMessage({ kind: "chunk", data }, [data]);
      return;
    }
    const frame = JSON.parse(data);
    if (frame.id !== id) return;
    const ms = performance.now() - started;
    socket.close();
    if (frame.type === "result") self.postMessage({ ok: true, ms, bytes, messages });
    else self.postMessage({ ok: false, message: data.slice(0, 300) });
  };
  socket.onerror = () => self.postMessage({ ok: false, message: "the channel failed" });
};

self.postMessage({ kind: "ready" });
