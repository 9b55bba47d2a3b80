"""Run a create-asset-ABI module in CPython with wasmtime: no imports, memory capped.

This is the test suite's stand-in for the browser sandbox (the sandbox itself is exercised in
Chromium by test_sandbox_chromium.py): same ABI, same empty import object.
"""

from __future__ import annotations

from functools import lru_cache

import wasmtime

MEMORY_CAP = 16 * 1024 * 1024

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
    """Instantiate ``wasm`` with no imports, write ``args``, call ``create``.

    Returns the output bytes, or the negative code ``create`` returned.
    """
    store = wasmtime.Store(_engine)
    store.set_limits(memory_size=MEMORY_CAP)
    instance = wasmtime.Instance(store, _compile(wasm), [])
    ex = instance.exports(store)
    memory = ex["memory"]
    at = ex["alloc_input"](store, len(args))
    assert at != 0, "the module gave no room for the arguments"
    memory.write(store, args, at)
    n = ex["create"](store, len(args))
    if n < 0:
        return n
    start = ex["output_ptr"](store)
    return bytes(memory.read(store, start, start + n))
