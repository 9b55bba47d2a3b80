// TEST ONLY: runs wasm_tools/pdk_host.js — the very source the sandbox's run worker gets — under
// Node, so tests/tool/test_pdk_conformance.py can compare it with the CPython host on the same
// modules. Reads one JSON array of jobs on stdin, prints one JSON array of answers:
//   {kind: "run", wasm, input (base64), entry, config, maxMemoryBytes, maxOutputBytes}
//     → the host's answer (output as base64)
//   {kind: "inspect", wasm, capPages} → {bytes (base64), memories} | {code, reason, message}
import { readFileSync } from "node:fs";

const source = readFileSync(new URL("../../wasm_tools/pdk_host.js", import.meta.url), "utf8");
// eslint-disable-next-line no-new-func -- loads the classic script exactly as the sandbox inlines it
const host = new Function(`${source}\nreturn pdkHost();`)();
const b64 = (bytes) => Buffer.from(bytes).toString("base64");

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const jobs = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const answers = [];
for (const job of jobs) {
  const wasm = Buffer.from(job.wasm, "base64");
  if (job.kind === "inspect") {
    try {
      const found = host.inspect(wasm, job.capPages);
      answers.push({ bytes: b64(found.bytes), memories: found.memories });
    } catch (err) {
      answers.push({ code: err.code, reason: err.reason, message: err.message });
    }
    continue;
  }
  const answer = await host.run({ ...job, wasm, input: Buffer.from(job.input, "base64") });
  answers.push(answer.ok ? { ok: true, output: b64(answer.output) } : answer);
}
process.stdout.write(JSON.stringify(answers));
