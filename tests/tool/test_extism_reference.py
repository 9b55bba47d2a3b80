"""Our modules are real Extism plugins: the reference runtime — PyPI ``extism`` 1.1.1 over
``extism-sys`` 1.41.0 (Extism's own kernel on wasmtime) — runs create-asset and both example
plugins to the same output bytes as our hosts, and refuses the hostile corpus too.

Where our host is deliberately stricter than the reference (docs/plugins.md "Where this host
differs"), the difference is asserted here, so it cannot drift unnoticed: an export without the
``() -> i32`` signature is refused before it runs; host-memory handles are our own offsets."""

from __future__ import annotations

import struct
from pathlib import Path

import extism
import pytest

from tests.tool import pdk_host
from tests.tool.envelope import make_input

TEXT = b"# Notes\n\nSome  words,\tsome more.  \r\n\n\n```\n# not a heading\n```\n## Next ##\n"


def reference(wasm: bytes, **manifest: object) -> extism.Plugin:
    return extism.Plugin({"wasm": [{"data": wasm}], **manifest}, wasi=False)


@pytest.mark.parametrize(
    "args",
    [
        struct.pack("<BBBBHHI", 1, 1, 1, 0, 64, 32, 7),
        struct.pack("<BBBBHHI", 1, 3, 2, 0, 300, 200, 99),
        struct.pack("<BBBBHHI", 1, 0, 0, 2, 50, 3, 0) + b"\x00\x00\x00\xff\xff\xff",
    ],
)
def test_create_asset_draws_the_same_png_under_the_reference_runtime(
    module_bytes: bytes, args: bytes
) -> None:
    assert (
        reference(module_bytes).call("create", args)
        == pdk_host.run(module_bytes, "create", args).output
    )


@pytest.mark.parametrize(
    ("plugin", "entry", "args"),
    [
        ("textstats", "count", {"path": "a.md"}),
        ("textstats", "outline", {"path": "a.md"}),
        ("tidy", "text", {"path": "a.md", "target": "b.md"}),
    ],
)
def test_the_example_plugins_answer_the_same_under_the_reference_runtime(
    plugin_modules: dict[str, bytes], plugin: str, entry: str, args: dict
) -> None:
    data = make_input(f"{plugin}.{entry}", args, {"path": TEXT})
    ours = pdk_host.run(plugin_modules[plugin], entry, data)
    assert ours.ok
    assert reference(plugin_modules[plugin]).call(entry, data) == ours.output


def test_a_plugin_error_is_the_same_error_under_the_reference_runtime(
    test_modules: dict[str, Path],
) -> None:
    wasm = test_modules["fails"].read_bytes()
    with pytest.raises(extism.Error, match='refused on purpose: "quoted" text'):
        reference(wasm).call("said", b"")
    assert pdk_host.run(wasm, "said").message.endswith('refused on purpose: "quoted" text')
    with pytest.raises(extism.Error, match="7"):
        reference(wasm).call("silent", b"")
    assert pdk_host.run(wasm, "silent").rc == 7


@pytest.mark.parametrize(
    ("entry", "data", "config"),
    [
        ("echo", bytes(range(256)) * 3, {}),
        ("offset", b"through input_offset", {}),
        ("config", b"greeting", {"greeting": "h\u00e9llo"}),
        ("config", b"absent", {}),
        ("vars", b"", {}),
        ("nothing", b"", {}),
    ],
)
def test_the_kernel_behaves_as_the_reference_kernel(
    test_modules: dict[str, Path], entry: str, data: bytes, config: dict[str, str]
) -> None:
    wasm = test_modules["kernel_probe"].read_bytes()
    expected = reference(wasm, config=config).call(entry, data)
    assert pdk_host.run(wasm, entry, data, config=config).output == expected


@pytest.mark.parametrize("name", ["needs_import", "wasi", "host_function", "bad_signature"])
def test_imports_we_refuse_are_refused_by_the_reference_runtime(
    test_modules: dict[str, Path], name: str
) -> None:
    wasm = test_modules[name].read_bytes()
    with pytest.raises(extism.Error, match="Unable to create Extism plugin"):
        reference(wasm)
    assert pdk_host.run(wasm, "create").reason == "import-refused"


def test_an_http_request_fails_under_the_reference_runtime_without_allowed_hosts(
    test_modules: dict[str, Path],
) -> None:
    wasm = test_modules["http"].read_bytes()
    with pytest.raises(extism.Error):
        reference(wasm).call("get", b"http://127.0.0.1:9/")
    assert pdk_host.run(wasm, "get", b"http://127.0.0.1:9/").code == "network-egress-refused"


def test_where_we_are_stricter_than_the_reference(test_modules: dict[str, Path]) -> None:
    fails = test_modules["fails"].read_bytes()
    assert reference(fails).call("nothing", b"") == b""  # the reference runs a void export
    assert pdk_host.run(fails, "nothing").reason == "abi"  # we refuse it before it runs
    probe = test_modules["kernel_probe"].read_bytes()
    theirs = reference(probe).call("handles", b"").split()
    ours = pdk_host.run(probe, "handles").output.split()
    assert theirs[-2:] == ours[-2:]  # alloc(0) is 0; lengths agree
    assert theirs[:6] != ours[:6]  # handles are each host's own offsets (opaque to a plugin)
