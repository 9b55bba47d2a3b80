"""The host side of create-asset (core/host/asset_ops.py; SPEC §8): the pin is checked before
anything runs, the output is checked before anything is written, the host writes and
receipts. The module runs in wasmtime here, through the CPython host of the same PDK ABI as the
browser sandbox (tests/tool/pdk_host.py, via tests/tool/wasm_runner.py)."""

from __future__ import annotations

import hashlib
import io

import pytest
from PIL import Image

from core.refusals import Code, Refused
from core.tools.asset_check import MAX_ASSET_BYTES
from tests.support import HostHarness, run
from tests.tool.wasm_runner import run_create


class WasmtimeSandbox:
    """:class:`core.ports.Sandbox` over wasmtime (only the PDK kernel, output capped)."""

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, module: bytes, args: bytes, *, time_ms: int, max_output: int) -> bytes:
        self.runs += 1
        out = run_create(module, args)
        if isinstance(out, int):
            raise Refused(Code.TOOL_OUTPUT_INVALID, f"create returned {out}")
        if len(out) > max_output:
            raise Refused(Code.TOOL_OUTPUT_INVALID, "output over the cap")
        return out


class Modules:
    """:class:`core.ports.ModuleStore` serving one module with a pin."""

    def __init__(self, module: bytes, pin: str) -> None:
        self.module, self.pin = module, pin

    async def load(self, name: str) -> tuple[bytes, str]:
        return self.module, self.pin


class FixedOutput:
    """A sandbox whose module answered these exact bytes (a misbehaving tool)."""

    def __init__(self, out: bytes) -> None:
        self.out = out

    async def run(self, module: bytes, args: bytes, *, time_ms: int, max_output: int) -> bytes:
        return self.out


def harness(module: bytes, sandbox: object, pin: str | None = None) -> tuple[HostHarness, str]:
    h = HostHarness()
    h.ctx.services.sandbox = sandbox  # type: ignore[assignment]
    h.ctx.services.modules = Modules(module, pin or hashlib.sha256(module).hexdigest())
    pid = h.ok("project.create", name="assets")["project"]["id"]
    return h, pid


ARGS = {
    "path": "assets/icon.png",
    "width": 96,
    "height": 64,
    "seed": 7,
    "pattern": "identicon",
    "palette": "ocean",
}


def test_create_asset_writes_a_png_of_the_requested_size_and_reports_its_sha256(
    module_bytes: bytes,
) -> None:
    h, pid = harness(module_bytes, WasmtimeSandbox())
    result = h.ok("asset.create", project=pid, **ARGS)
    data = h.call("file.read", project=pid, path="assets/icon.png")[1]
    assert data is not None
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
    assert (result["width"], result["height"], result["size"]) == (96, 64, len(data))
    assert Image.open(io.BytesIO(data)).size == (96, 64)


def test_the_same_arguments_give_the_same_bytes(module_bytes: bytes) -> None:
    h, pid = harness(module_bytes, WasmtimeSandbox())
    first = h.ok("asset.create", project=pid, **ARGS)["sha256"]
    second = h.ok("asset.create", project=pid, **{**ARGS, "path": "b.png"})["sha256"]
    assert first == second


def test_a_module_that_differs_from_its_pin_never_runs(module_bytes: bytes) -> None:
    sandbox = WasmtimeSandbox()
    h, pid = harness(module_bytes, sandbox, pin="0" * 64)
    refusal = h.refused("asset.create", project=pid, **ARGS)
    assert refusal["code"] == "sandbox-unavailable"
    assert sandbox.runs == 0
    assert h.ok("file.walk", project=pid)["files"] == []


@pytest.mark.parametrize(
    "output",
    [b"not a png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, b"x" * (MAX_ASSET_BYTES + 1)],
    ids=["garbage", "truncated", "oversize"],
)
def test_malformed_output_is_refused_tool_output_invalid_and_nothing_is_written(
    module_bytes: bytes, output: bytes
) -> None:
    h, pid = harness(module_bytes, FixedOutput(output))
    assert h.refused("asset.create", project=pid, **ARGS)["code"] == "tool-output-invalid"
    assert h.ok("file.walk", project=pid)["files"] == []


def test_a_png_of_another_size_is_refused(module_bytes: bytes) -> None:
    other = run_create(module_bytes, run_args(width=10, height=10))
    assert isinstance(other, bytes)
    h, pid = harness(module_bytes, FixedOutput(other))
    assert h.refused("asset.create", project=pid, **ARGS)["code"] == "tool-output-invalid"


def run_args(**kw: int) -> bytes:
    from core.tools.asset_check import CreateAssetArgs

    return CreateAssetArgs(path="x.png", **kw).module_input()


def test_without_a_sandbox_the_tool_is_unavailable_and_writes_nothing(module_bytes: bytes) -> None:
    h, pid = harness(module_bytes, None)
    assert h.refused("asset.create", project=pid, **ARGS)["code"] == "sandbox-unavailable"


def test_the_target_path_passes_the_one_path_rule(module_bytes: bytes) -> None:
    h, pid = harness(module_bytes, WasmtimeSandbox())
    refusal = h.refused("asset.create", project=pid, **{**ARGS, "path": "../x.png"})
    assert refusal["code"] == "path-outside-root"


def test_discovery_offers_create_asset_as_a_local_write_with_its_schema() -> None:
    h = HostHarness()
    tools = {d.name: d for d in h.host.tools.describe()}
    entry = tools["create-asset"]
    assert (entry.effect, entry.receipt_rule) == ("write", "local-write")
    assert {"width", "height", "seed", "palette", "pattern", "path", "project"} <= set(
        entry.args_schema["properties"]
    )


def test_the_tool_call_carries_the_hosts_receipt_matching_the_file(module_bytes: bytes) -> None:
    from core.tools.admission import CallRequest

    h, pid = harness(module_bytes, WasmtimeSandbox())
    box = h.host.tools
    entry = box.registry.get("create-asset")
    assert entry is not None
    admitted = box.admit(CallRequest("create-asset", entry.descriptor_id, {"project": pid, **ARGS}))
    outcome = run(box.run(admitted, actor="page"))
    data = h.call("file.read", project=pid, path="assets/icon.png")[1]
    assert outcome.receipt is not None
    assert outcome.receipt.rung == "local-write"
    assert outcome.receipt.sha256 == hashlib.sha256(data or b"").hexdigest()
    # the store version is the audit number of the write: that record names the same bytes
    record = h.sink.records[outcome.receipt.store_version]
    assert (record["op"], record["details"]["sha256"]) == ("asset.create", outcome.receipt.sha256)


def test_create_asset_asks_before_it_writes_over_a_file(module_bytes: bytes) -> None:
    sandbox = WasmtimeSandbox()
    h, pid = harness(module_bytes, sandbox)
    h.ok("file.write", b"mine", project=pid, path="assets/icon.png")
    refusal = h.refused("asset.create", project=pid, on_conflict="refuse", **ARGS)
    assert refusal["code"] == "already-exists" and sandbox.runs == 0  # refused before running
    assert h.call("file.read", project=pid, path="assets/icon.png")[1] == b"mine"
    kept = h.ok("asset.create", project=pid, on_conflict="keep-both", **ARGS)
    assert kept["path"] == "assets/icon (2).png"
    assert h.call("file.read", project=pid, path="assets/icon.png")[1] == b"mine"
    replaced = h.ok("asset.create", project=pid, on_conflict="replace", **ARGS)
    data = h.call("file.read", project=pid, path="assets/icon.png")[1] or b""
    assert replaced["path"] == "assets/icon.png" and data.startswith(b"\x89PNG")
