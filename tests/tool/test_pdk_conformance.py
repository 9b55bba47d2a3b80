"""The browser's host of the PDK ABI (wasm_tools/pdk_host.js, the source the sandbox's run
worker gets) and the CPython host the tests use (tests/tool/pdk_host.py) give the same answer
— the same output bytes, or the same code and reason — on every module of the corpus, and
rewrite memory maxima to the same bytes. pdk_host.js runs under Node here (the same V8 as
Chromium); test_sandbox_chromium.py runs it inside the real sandbox.

The one case left out is the time limit: the sandbox stops a run by terminating its worker,
the CPython host by an epoch deadline (both tested on their own)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tool import pdk_host
from tests.tool.envelope import make_input

NODE_RUNNER = Path(__file__).with_name("pdk_node.mjs")
MIB = 1 << 20

#: (module, entry, input, config, memory cap, output cap): every hostile module, every
#: kernel probe, and the example plugins on real envelopes.
CASES: list[tuple[str, str, bytes, dict[str, str], int, int]] = [
    ("needs_import", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("wasi", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("host_function", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("bad_signature", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("no_max_memory", "create", b"", {}, 4 * MIB, 4 * MIB),
    ("max_memory_too_large", "create", b"", {}, 4 * MIB, 4 * MIB),
    ("memory_hog", "create", b"", {}, 4 * MIB, 4 * MIB),
    ("memory_hog", "kernel", b"", {}, 4 * MIB, 4 * MIB),
    ("memory_hog", "kernel_count", b"", {}, 4 * MIB, 4 * MIB),
    ("initial_too_large", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("initial_too_large", "create", b"", {}, 32 * MIB, 4 * MIB),
    ("oversize_output", "create", b"", {}, 8 * MIB, 4 * MIB),
    ("oversize_output", "create", b"", {}, 8 * MIB, 6 * MIB),
    ("out_of_bounds", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("out_of_bounds", "load", b"", {}, 16 * MIB, 4 * MIB),
    ("traps", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("malformed", "create", b"", {}, 16 * MIB, 4 * MIB),
    ("http", "get", b"http://127.0.0.1:9/", {}, 16 * MIB, 4 * MIB),
    ("fails", "said", b"", {}, 16 * MIB, 4 * MIB),
    ("fails", "silent", b"", {}, 16 * MIB, 4 * MIB),
    ("fails", "nothing", b"", {}, 16 * MIB, 4 * MIB),
    ("fails", "wide", b"", {}, 16 * MIB, 4 * MIB),
    ("forge", "receipt", b"", {}, 16 * MIB, 4 * MIB),
    ("forge", "grant", b"", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "echo", bytes(range(256)) * 5, {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "offset", b"through input_offset", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "config", b"greeting", {"greeting": "h\u00e9llo \u2603"}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "config", b"absent", {"greeting": "x"}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "vars", b"", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "handles", b"", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "handles", b"an input block comes first", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "logs", b"", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "nothing", b"", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "missing", b"", {}, 16 * MIB, 4 * MIB),
    ("kernel_probe", "echo", bytes(4 * MIB), {}, 4 * MIB, 4 * MIB),
]

TEXT = "# Notes\n\nSome words,  some more.\t\n\n\n```\n# not a heading\n```\n## Next ##\n"
EXAMPLES: list[tuple[str, str, bytes]] = [
    (
        "textstats",
        "count",
        make_input("textstats.count", {"path": "a.md"}, {"path": TEXT.encode()}),
    ),
    (
        "textstats",
        "outline",
        make_input("textstats.outline", {"path": "a.md"}, {"path": TEXT.encode()}),
    ),
    ("textstats", "outline", make_input("textstats.outline", {"path": "b"}, {"path": b"\xff\xfe"})),
    ("textstats", "count", b"not json"),
    (
        "tidy",
        "text",
        make_input("tidy.text", {"path": "a.md", "target": "b.md"}, {"path": TEXT.encode()}),
    ),
    ("tidy", "text", make_input("tidy.text", {"path": "a", "target": "a"}, {"path": b"tidy\n"})),
]


def node_answers(jobs: list[dict]) -> list[dict]:
    node = shutil.which("node")
    assert node, "node is required"
    out = subprocess.run(
        [node, str(NODE_RUNNER)], input=json.dumps(jobs).encode(), capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()
    return json.loads(out.stdout)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def same(python: pdk_host.Answer, js: dict) -> tuple:
    if python.ok:
        return (True, python.output), (js["ok"], base64.b64decode(js["output"]) if js["ok"] else js)
    return (False, python.code, python.reason), (js["ok"], js.get("code"), js.get("reason"))


@pytest.fixture(scope="module")
def corpus(test_modules: dict[str, Path], plugin_modules: dict[str, bytes]) -> dict[str, bytes]:
    return {**{k: p.read_bytes() for k, p in test_modules.items()}, **plugin_modules}


def test_both_hosts_answer_every_hostile_and_probe_module_alike(corpus: dict[str, bytes]) -> None:
    jobs = [
        {
            "kind": "run",
            "wasm": b64(corpus[name]),
            "entry": entry,
            "input": b64(data),
            "config": config,
            "maxMemoryBytes": memory,
            "maxOutputBytes": output,
        }
        for name, entry, data, config, memory, output in CASES
    ]
    for case, js in zip(CASES, node_answers(jobs), strict=True):
        name, entry, data, config, memory, output = case
        python = pdk_host.run(
            corpus[name], entry, data, config=config, max_memory=memory, max_output=output
        )
        expected, got = same(python, js)
        assert got == expected, (name, entry, python, js)


def test_both_hosts_run_the_example_plugins_alike(corpus: dict[str, bytes]) -> None:
    jobs = [
        {
            "kind": "run",
            "wasm": b64(corpus[name]),
            "entry": entry,
            "input": b64(data),
            "config": {},
            "maxMemoryBytes": 16 * MIB,
            "maxOutputBytes": 4 * MIB,
        }
        for name, entry, data in EXAMPLES
    ]
    for (name, entry, data), js in zip(EXAMPLES, node_answers(jobs), strict=True):
        python = pdk_host.run(corpus[name], entry, data)
        expected, got = same(python, js)
        assert got == expected, (name, entry)


def test_both_hosts_rewrite_memory_maxima_to_the_same_bytes(corpus: dict[str, bytes]) -> None:
    caps = (1, 64, 256, 1024)
    names = sorted(corpus)
    jobs = [{"kind": "inspect", "wasm": b64(corpus[n]), "capPages": c} for n in names for c in caps]
    answers = iter(node_answers(jobs))
    for name in names:
        for cap in caps:
            js = next(answers)
            try:
                python = pdk_host.inspect(corpus[name], cap)
            except pdk_host.Failure as failure:
                assert (js.get("code"), js.get("reason")) == (failure.code, failure.reason), name
                continue
            assert base64.b64decode(js["bytes"]) == python.bytes, (name, cap)
            memories = [(m["initial"], m["max"], m["declaredMax"]) for m in js["memories"]]
            assert memories == list(python.memories), (name, cap)
