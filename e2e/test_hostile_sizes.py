"""Hostile sizes in the real browser (issue 13 #4, #5; SPEC §4: sizes bounded, one answer each).

- The runner-seat batch of issue 13 (``blocks.candidate_edit``, 1,044,780 bytes: 104 ops with
  10,000-letter purposes) is refused by the length cap, and the largest batch the caps let
  through (200 ops of 200 + 2,000 letters, a URL at its very end) is read to its end by the
  sanitizer and refused there; each is answered within a second of host time, and a write sent
  beside it succeeds — before, the sanitizer's quadratic pattern held the worker until the
  watchdog restarted it at 60 s, and the write was answered ``host-restarted``.
- A text over the message bound, a body over the body bound and a create-asset sandbox answer
  over the asset bound are refused with their codes before they reach Python: the host's Wasm
  memory (``host.info`` → ``runtime.wasm_memory_bytes``, Pyodide's heap, which never shrinks)
  does not grow by their size. Before, each was copied into the heap first (a 536M-character
  text left it at 1 GB).
"""

from __future__ import annotations

import json

from core.protocol import MAX_BODY_BYTES, MAX_MESSAGE_BYTES
from core.tools.asset_check import MAX_ASSET_BYTES
from e2e.hostpage import HostPage

MB = 1 << 20
ISSUE_BATCH_BYTES = 1_044_780

ALONE_THEN_BESIDE_A_WRITE = """async ([text, project]) => {
  const host = window.voicebox.host;
  const answer = (promise, started) => promise.then(
    (a) => ({ ok: true, ms: performance.now() - started, result: a.result }),
    (e) => ({ ok: false, ms: performance.now() - started, code: e.code, field: e.field }));
  // alone, best of three: its host time (the page's round trip bounds it from above; the
  // best of three keeps another process's burst on this machine out of the figure)
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await answer(host.callRaw(text, `big-edit-${i}`), performance.now()));
  const alone = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
  // again, with a write sent right behind it: both are answered, the write lands
  const edit = answer(host.callRaw(text, "big-edit-beside"), performance.now());
  const body = new TextEncoder().encode("written beside the batch").buffer;
  const write = answer(host.call("file.write", { project, path: "beside.txt" }, { body }), 0);
  return { runs, alone, beside: await edit, write: (await write).ok, lost: host.lastLoss };
}"""


def _edit_text(project: str, ops: list[dict], request_id: str = "big-edit") -> str:
    args = {"project": project, "ops": ops, "seat": "runner"}
    envelope = {"v": 1, "id": request_id, "op": "blocks.candidate_edit", "args": args}
    return json.dumps(envelope, separators=(",", ":"))


def _issue_batch(project: str) -> str:
    """104 ops, each a 10,000-letter purpose, padded to exactly the issue's 1,044,780 bytes."""
    ops = [{"op": "add", "name": "n", "purpose": "q" * 10_000} for _ in range(104)]
    short = len(_edit_text(project, ops).encode())
    ops[-1]["name"] = "n" * (1 + ISSUE_BATCH_BYTES - short)
    text = _edit_text(project, ops)
    assert len(text.encode()) == ISSUE_BATCH_BYTES < MAX_MESSAGE_BYTES
    return text


def test_the_1_mb_runner_batch_is_answered_within_a_second_and_a_write_beside_it_succeeds(
    host: HostPage,
) -> None:
    project = host.ok("project.create", {"name": "batch"})["result"]["project"]["id"]
    capped = [{"op": "add", "name": "q" * 200, "purpose": "q" * 2000} for _ in range(200)]
    capped[-1]["purpose"] = "q" * 1990 + " https://x"
    cases = [
        (_issue_batch(project), ("name-invalid", "ops[0].purpose")),
        (_edit_text(project, capped), ("sanitizer_refused", "ops[199].purpose")),
    ]
    for text, refusal in cases:
        seen = host.page.evaluate(ALONE_THEN_BESIDE_A_WRITE, [text, project])
        times = ", ".join(f"{r['ms']:.0f}" for r in seen["runs"])
        print(f"\n{len(text.encode()):,}-byte batch: answered in {times} ms")
        assert seen["lost"] is None, seen
        for edit in (*seen["runs"], seen["beside"]):
            assert (edit["ok"], edit["code"], edit["field"]) == (False, *refusal)
        assert seen["alone"]["ms"] < 1000
        assert seen["write"] is True
    read = host.ok("file.read", {"project": project, "path": "beside.txt"})
    assert read["body"] == b"written beside the batch"
    assert host.page.get_attribute("#status", "data-state") == "ready"
    host.assert_clean()


def _heap(host: HostPage) -> int:
    return host.ok("host.info")["result"]["runtime"]["wasm_memory_bytes"]


OVERSIZED_TEXTS = """async ([units, count]) => {
  const host = window.voicebox.host;
  const text = '{"v":1,"id":"big","op":"host.info","args":{"pad":"' + "y".repeat(units) + '"}}';
  const answers = await Promise.all(Array.from({ length: count }, (_, i) =>
    host.callRaw(text, `big${i}`).then(() => ({ ok: true }),
      (e) => ({ ok: false, code: e.code, message: e.message }))));
  return answers;
}"""

NEAR_BOUND_TEXT = """async (chars) => {
  // fewer UTF-16 units than the bound, more UTF-8 bytes: only Python can tell, exactly
  const text = '{"v":1,"id":"near","op":"host.info","args":{"pad":"' + "é".repeat(chars) + '"}}';
  try { await window.voicebox.host.callRaw(text, "near"); return { ok: true }; }
  catch (e) { return { ok: false, code: e.code, length: text.length }; }
}"""


def test_an_oversized_text_is_refused_before_python_and_the_heap_does_not_grow(
    host: HostPage,
) -> None:
    host.wait_settled()  # the background model builds after ready are not this test's growth
    before = _heap(host)
    answers = host.page.evaluate(OVERSIZED_TEXTS, [64 * MB, 4])
    growth = _heap(host) - before
    print(f"\n4 x 64 Mi-character texts: host Wasm memory grew {growth / MB:.1f} MiB")
    assert [a["code"] for a in answers] == ["message-too-large"] * 4
    assert growth < 4 * MB
    near = host.page.evaluate(NEAR_BOUND_TEXT, MAX_MESSAGE_BYTES // 2 + 1)
    assert near["length"] <= MAX_MESSAGE_BYTES and near["code"] == "message-too-large"
    # the last records: the boot's own connections (sandbox, python runtime) may land among them
    records = host.ok("audit.list", {"limit": 20})["result"]["records"]
    assert sum(r["rule"] == "message-too-large" for r in records) >= 4  # each one audited
    host.assert_clean()


OVERSIZED_BODY = """async ([project, size]) => {
  const body = new ArrayBuffer(size);
  try {
    await window.voicebox.host.call("file.write", { project, path: "huge.bin" }, { body });
    return { ok: true };
  } catch (e) { return { ok: false, code: e.code, message: e.message }; }
}"""


def test_an_oversized_body_is_refused_before_python_and_the_heap_does_not_grow(
    host: HostPage,
) -> None:
    project = host.ok("project.create", {"name": "bodies"})["result"]["project"]["id"]
    host.wait_settled()  # the background model builds after ready are not this test's growth
    before = _heap(host)
    answer = host.page.evaluate(OVERSIZED_BODY, [project, MAX_BODY_BYTES + MB])
    growth = _heap(host) - before
    print(f"\n257 MiB body: host Wasm memory grew {growth / MB:.1f} MiB")
    assert (answer["ok"], answer["code"]) == (False, "message-too-large")
    assert growth < 4 * MB
    listed = host.ok("file.list", {"project": project, "folder": ""})["result"]["entries"]
    assert [e["name"] for e in listed] == []
    host.assert_clean()


HOSTILE_SANDBOX = """async (size) => {
  // a sandbox that answers every run with `size` bytes, whatever the module's cap says
  const channel = new MessageChannel();
  channel.port1.onmessage = (event) => {
    const bytes = new Uint8Array(size);
    bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    channel.port1.postMessage({ id: event.data.id, ok: true, bytes }, [bytes.buffer]);
  };
  channel.port1.start();
  await window.voicebox.host.call("sandbox.connect", {}, { attachment: channel.port2 });
  channel.port1.postMessage({ type: "ready", v: 1 });
  window.__hostileSandbox = channel.port1;
  return true;
}"""


def test_an_oversized_sandbox_answer_is_refused_before_python_and_the_heap_does_not_grow(
    host: HostPage,
) -> None:
    # away from the Projects surface, which re-renders on projects.changed (issue 33 item 2):
    # its host calls would run beside the measured one and grow the heap themselves
    host.page.evaluate("location.hash = '#/audit'")
    host.page.wait_for_url("**#/audit")
    project = host.ok("project.create", {"name": "assets"})["result"]["project"]["id"]
    for _ in range(100):  # the page's own sandbox first, so that ours replaces it, not after
        if host.ok("audit.list", {"op": "sandbox.connect"})["result"]["records"]:
            break
        host.page.wait_for_timeout(100)
    assert host.page.evaluate(HOSTILE_SANDBOX, 256 * MB)
    host.wait_settled()  # the background model builds after ready are not this test's growth
    before = _heap(host)
    args = {"project": project, "path": "big.png", "width": 16, "height": 16}
    refusal = host.refused("asset.create", args)
    growth = _heap(host) - before
    print(f"\n256 MiB sandbox answer: host Wasm memory grew {growth / MB:.1f} MiB")
    assert refusal["code"] == "tool-output-invalid"
    assert f"at most {MAX_ASSET_BYTES}" in refusal["message"]
    # reading the answer into Python would need 256 MiB more; the Wasm memory grows in steps
    # (one of 8.7 MiB is seen when the heap happens to be full as the refusal is made), so
    # the bound is well above a step and far below the answer
    assert growth < 32 * MB
    listed = host.ok("file.list", {"project": project, "folder": ""})["result"]["entries"]
    assert [e["name"] for e in listed] == []
    host.assert_clean()
