"""Runtime figures for ``host.info`` (:class:`core.host.info_ops.RuntimeProbe`): the Wasm
memory's size, the Python allocator's block count and what the export's byte path held at most
(``browser_host/byte_path.py``). Non-secret, cheap, read on demand."""

from __future__ import annotations

import gc
import sys

__all__ = ["runtime_figures"]


def runtime_figures() -> dict[str, int]:
    """``{"wasm_memory_bytes", "python_allocated_blocks", "byte_path_peak_held_bytes",
    "byte_path_bytes", "gc_frozen_objects"}`` of this Pyodide instance and its worker's byte
    path."""
    import pyodide_js

    from browser_host.byte_path import byte_path_figures

    relayed = byte_path_figures()
    return {
        "wasm_memory_bytes": int(pyodide_js._module.HEAP8.length),
        "python_allocated_blocks": sys.getallocatedblocks(),
        "byte_path_peak_held_bytes": relayed["peak_held_bytes"],
        "byte_path_bytes": relayed["bytes"],
        "gc_frozen_objects": gc.get_freeze_count(),
    }
