// TEST ONLY: runs wasm_tools/pdk_host.js — the very source the sandbox's run worker gets — under
// Node, so tests/tool/test_pdk_conformance.py can compare it with the CPython host on the same
// modules. Reads one JSON array of jobs on stdin ({wasm, input: base64, entry, config,
// maxMemoryBytes, maxOutputBytes}), prints one JSON array of answers (output as base64).
import { readFileSync } from "node:fs";

const source = readFileSync(new URL("../../wasm_tools/pdk_host.js", import.meta.url), "utf8");
const host = new Function(`${source}\nreturn pdkHost();`)();

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const jobs = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const answers = [];
for (const job of jobs) {
  const answer = await host.run({
    ...job,
    wasm: Buffer.from(job.wasm, "base64"),
    input: Buffer.from(job.input, "base64"),
  });
  answers.push(answer.ok
    ? { ok: true, output: Buffer.from(answer.output).toString("base64") }
    : answer);
}
process.stdout.write(JSON.stringify(answers));
