"""The plugin runtime's laws (docs/plugins.md "The ABI"; issue 16), on the CPython host of the
Extism PDK ABI (tests/tool/pdk_host.py). test_pdk_conformance.py shows the browser's host
(wasm_tools/pdk_host.js) answers every one of these cases the same way; test_sandbox_chromium.py
runs the sandbox itself in Chromium.

Each hostile module (wasm_tools/testdata/) is named for what it tries."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tool.pdk_host import PAGE, SIGNATURES, inspect, run

CAP = 4 << 20  # a cap below every module's declared maximum, so the host's is the one that binds


def module(test_modules: dict[str, Path], name: str) -> bytes:
    return test_modules[name].read_bytes()


def leb(n: int) -> bytes:
    out = bytearray()
    while True:
        x, n = n & 0x7F, n >> 7
        out.append(x | (0x80 if n else 0))
        if not n:
            return bytes(out)


def section(kind: int, body: bytes) -> bytes:
    return bytes([kind]) + leb(len(body)) + body


def name(text: str) -> bytes:
    return leb(len(text)) + text.encode()


HEADER = b"\0asm\1\0\0\0"


# --- what a module may import ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name_", "what"),
    [
        ("needs_import", "env.reach_out"),
        ("wasi", "wasi_snapshot_preview1.fd_write"),
        ("host_function", "extism:host/user.read_secret"),
        ("bad_signature", "extism:host/env.alloc with another signature"),
    ],
)
def test_only_kernel_functions_with_their_signatures_are_importable(
    test_modules: dict[str, Path], name_: str, what: str
) -> None:
    answer = run(module(test_modules, name_), "create")
    assert (answer.ok, answer.code, answer.reason) == (
        False,
        "tool-output-invalid",
        "import-refused",
    )
    assert what in answer.message


def test_a_memory_import_is_refused_before_instantiation() -> None:
    imports = section(2, leb(1) + name("env") + name("memory") + b"\x02\x00\x01")
    answer = run(HEADER + imports, "create")
    assert (answer.code, answer.reason) == ("tool-output-invalid", "import-refused")


def test_a_shared_memory_is_refused() -> None:
    memory = section(5, leb(1) + b"\x03\x01\x02")
    answer = run(HEADER + memory, "create")
    assert (answer.code, answer.reason) == ("tool-output-invalid", "module-invalid")


def test_bytes_that_are_not_a_module_are_refused() -> None:
    answer = run(b"\0asm\2\0\0\0", "create")
    assert (answer.code, answer.reason) == ("tool-output-invalid", "module-invalid")


def test_the_provided_kernel_is_the_published_one() -> None:
    # every function of extism-pdk's extern block (docs.rs extism-pdk, module `extism`), plus
    # the kernel's input_offset and the PDKs' http_headers / get_log_level / log_trace
    assert set(SIGNATURES) == {
        "input_length",
        "input_load_u8",
        "input_load_u64",
        "input_offset",
        "length",
        "length_unsafe",
        "alloc",
        "free",
        "output_set",
        "error_set",
        "store_u8",
        "load_u8",
        "store_u64",
        "load_u64",
        "config_get",
        "var_get",
        "var_set",
        "http_request",
        "http_status_code",
        "http_headers",
        "log_info",
        "log_debug",
        "log_warn",
        "log_error",
        "log_trace",
        "get_log_level",
    }


# --- memory ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name_", ["no_max_memory", "max_memory_too_large"])
def test_a_declared_maximum_is_rewritten_to_the_cap(
    test_modules: dict[str, Path], name_: str
) -> None:
    data = module(test_modules, name_)
    found = inspect(data, CAP // PAGE)
    ((_, top, declared),) = found.memories
    assert top == CAP // PAGE
    assert declared is None or declared > CAP // PAGE
    (memory,) = [
        e.type
        for e in wasmtime.Module(wasmtime.Engine(), found.bytes).exports
        if e.name == "memory"
    ]
    assert memory.limits.max == CAP // PAGE
    # growing page by page stops exactly at the cap
    answer = run(data, "create", max_memory=CAP)
    assert answer.ok, answer
    assert int(answer.output) == CAP // PAGE


def test_a_smaller_declared_maximum_is_kept(module_bytes: bytes) -> None:
    # create-asset declares 8 MiB (128 pages): a 16 MiB cap keeps it, a 4 MiB one lowers it
    ((_, top, declared),) = inspect(module_bytes, 256).memories
    assert declared == top == 128
    ((_, top, declared),) = inspect(module_bytes, 64).memories
    assert (declared, top) == (128, 64)


def test_growing_linear_memory_past_the_cap_is_memory_exceeded(
    test_modules: dict[str, Path],
) -> None:
    answer = run(module(test_modules, "memory_hog"), "create", max_memory=CAP)
    assert (answer.ok, answer.code, answer.reason) == (False, "tool-memory-exceeded", "memory")


def test_asking_the_host_for_more_than_its_cap_is_memory_exceeded(
    test_modules: dict[str, Path],
) -> None:
    answer = run(module(test_modules, "memory_hog"), "kernel", max_memory=CAP)
    assert (answer.ok, answer.code, answer.reason) == (False, "tool-memory-exceeded", "memory")


def test_the_host_never_hands_out_more_memory_than_its_cap(test_modules: dict[str, Path]) -> None:
    answer = run(module(test_modules, "memory_hog"), "kernel_count", max_memory=CAP)
    assert answer.ok, answer
    assert 0 < int(answer.output) <= CAP


def test_a_module_starting_above_the_cap_is_refused_before_it_runs(
    test_modules: dict[str, Path],
) -> None:
    answer = run(module(test_modules, "initial_too_large"), "create", max_memory=16 << 20)
    assert (answer.code, answer.reason) == ("tool-memory-exceeded", "memory")
    assert "starts with" in answer.message
    assert run(module(test_modules, "initial_too_large"), "create", max_memory=32 << 20).ok


def test_an_input_larger_than_the_host_memory_cap_is_refused(test_modules: dict[str, Path]) -> None:
    answer = run(module(test_modules, "kernel_probe"), "echo", bytes(CAP), max_memory=CAP)
    assert (answer.code, answer.reason) == ("tool-memory-exceeded", "memory")


# --- time, traps, output -------------------------------------------------------------------


def test_a_module_that_never_returns_is_stopped_at_its_time_limit(
    test_modules: dict[str, Path],
) -> None:
    answer = run(module(test_modules, "runaway"), "create", time_ms=300)
    assert (answer.ok, answer.code, answer.reason) == (False, "tool-timeout", "timeout")


@pytest.mark.parametrize(
    ("name_", "entry"),
    [("traps", "create"), ("out_of_bounds", "create"), ("out_of_bounds", "load")],
)
def test_a_trap_is_output_invalid(test_modules: dict[str, Path], name_: str, entry: str) -> None:
    answer = run(module(test_modules, name_), entry)
    assert (answer.ok, answer.code, answer.reason) == (False, "tool-output-invalid", "trap")


def test_output_past_the_cap_is_refused_when_it_is_set(test_modules: dict[str, Path]) -> None:
    data = module(test_modules, "oversize_output")
    answer = run(data, "create", max_output=4 << 20, max_memory=8 << 20)
    assert (answer.code, answer.reason) == ("tool-output-invalid", "output-too-large")
    allowed = run(data, "create", max_output=6 << 20, max_memory=8 << 20)
    assert allowed.ok and len(allowed.output) == 5 << 20


def test_a_failing_plugin_says_why_and_its_words_are_bounded(test_modules: dict[str, Path]) -> None:
    said = run(module(test_modules, "fails"), "said")
    assert (said.code, said.reason, said.rc) == ("tool-output-invalid", "plugin-error", 1)
    assert said.message == 'the plugin failed: refused on purpose: "quoted" text'
    silent = run(module(test_modules, "fails"), "silent")
    assert (silent.reason, silent.rc, silent.message) == (
        "plugin-error",
        7,
        "the plugin failed: it returned 7",
    )


@pytest.mark.parametrize("entry", ["nothing", "wide"])
def test_an_export_without_the_plugin_signature_is_refused(
    test_modules: dict[str, Path], entry: str
) -> None:
    answer = run(module(test_modules, "fails"), entry)
    assert (answer.code, answer.reason) == ("tool-output-invalid", "abi")


def test_an_entry_the_module_does_not_export_is_refused(test_modules: dict[str, Path]) -> None:
    answer = run(module(test_modules, "kernel_probe"), "missing")
    assert (answer.code, answer.reason) == ("tool-output-invalid", "no-entry")


# --- no network, no host state ---------------------------------------------------------------


def test_an_http_request_fails_the_call(test_modules: dict[str, Path]) -> None:
    answer = run(module(test_modules, "http"), "get", b"http://127.0.0.1:9/")
    assert (answer.ok, answer.code, answer.reason) == (False, "network-egress-refused", "network")


# --- the kernel ------------------------------------------------------------------------------


@given(st.binary(max_size=3000))
@settings(deadline=None)  # each example instantiates a Wasm module; time is bench/'s
def test_the_input_reaches_the_plugin_unchanged(test_modules: dict[str, Path], data: bytes) -> None:
    probe = module(test_modules, "kernel_probe")
    assert run(probe, "echo", data).output == data
    assert run(probe, "offset", data).output == data


def test_config_values_reach_the_plugin_and_missing_keys_are_none(
    test_modules: dict[str, Path],
) -> None:
    probe = module(test_modules, "kernel_probe")
    config = {"greeting": "héllo", "empty": ""}
    assert run(probe, "config", b"greeting", config=config).output == "héllo".encode()
    assert run(probe, "config", b"absent", config=config).output == b"(none)"
    assert run(probe, "config", b"greeting").output == b"(none)"


def test_vars_live_for_the_call(test_modules: dict[str, Path]) -> None:
    assert run(module(test_modules, "kernel_probe"), "vars").output == b"a=second;gone=1"


def test_handles_are_offsets_and_freed_blocks_are_reused(test_modules: dict[str, Path]) -> None:
    # the documented allocator: 8-aligned bump from offset 8, first fit over freed blocks,
    # freeing the last block lowers the top; alloc(0) and unknown handles are 0
    lines = run(module(test_modules, "kernel_probe"), "handles").output.decode().split()
    assert [int(x) for x in lines] == [8, 24, 128, 24, 136, 136, 0, 50 * 1000 + 10 * 10 + 0]


def test_logs_are_discarded_and_the_level_is_above_every_level(
    test_modules: dict[str, Path],
) -> None:
    assert run(module(test_modules, "kernel_probe"), "logs").output == b"2147483647"


def test_no_output_set_is_empty_output(test_modules: dict[str, Path]) -> None:
    answer = run(module(test_modules, "kernel_probe"), "nothing")
    assert (answer.ok, answer.output) == (True, b"")
