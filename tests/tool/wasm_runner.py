"""Inspect modules and run create-asset in CPython with wasmtime, through the CPython host of
the Extism PDK ABI (tests/tool/pdk_host.py): the test suite's stand-in for the browser sandbox
(exercised in Chromium by test_sandbox_chromium.py), with the same kernel, caps and answers.
"""

from __future__ import annotations

from functools import lru_cache

import wasmtime

from tests.tool import pdk_host

MEMORY_CAP = 16 * 1024 * 1024
#: Generous: each host call into Python costs microseconds (a 1024 x 1024 noise PNG is ~400,000
#: of them, ~3 s here); the browser host answers the same run in tens of milliseconds.
TIME_MS = 60_000

_engine = wasmtime.Engine()


@lru_cache(maxsize=16)
def _compile(wasm: bytes) -> wasmtime.Module:
    return wasmtime.Module(_engine, wasm)


def imports_of(wasm: bytes) -> list[tuple[str, str]]:
    """The module's imports as ``(module, name)`` pairs (WebAssembly.Module.imports)."""
    return [(i.module, i.name) for i in _compile(wasm).imports]


def exports_of(wasm: bytes) -> dict[str, str]:
    """The module's exports: name → kind (``func``/``memory``/…)."""
    kinds = {
        wasmtime.FuncType: "func",
        wasmtime.MemoryType: "memory",
        wasmtime.GlobalType: "global",
        wasmtime.TableType: "table",
    }
    return {e.name: kinds[type(e.type)] for e in _compile(wasm).exports}


def memory_limits(wasm: bytes) -> tuple[int, int | None]:
    """``(minimum, maximum)`` pages of the exported memory."""
    (mem,) = [e.type for e in _compile(wasm).exports if isinstance(e.type, wasmtime.MemoryType)]
    return mem.limits.min, mem.limits.max


def run_create(wasm: bytes, args: bytes) -> bytes | int:
    """Call ``create`` of ``wasm`` on ``args`` through the PDK host (memory capped at
    :data:`MEMORY_CAP`). Returns the output bytes, or the non-zero code ``create`` returned.
    Any other failure (a trap, a refused import) fails the test with the host's answer.
    """
    answer = pdk_host.run(wasm, "create", args, max_memory=MEMORY_CAP, time_ms=TIME_MS)
    if answer.ok:
        return answer.output
    assert answer.rc is not None, f"create did not return: {answer}"
    return answer.rc
