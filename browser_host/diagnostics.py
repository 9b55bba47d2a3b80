"""Runtime figures for ``host.info`` (:class:`core.host.info_ops.RuntimeProbe`): the Wasm
memory's size, the Python allocator's block count and what the export's byte path held at most
(``browser_host/byte_path.py``). Non-secret, cheap, read on demand."""

from __future__ import annotations

import gc
import sys

__all__ = ["note_frozen", "runtime_figures"]

# How many objects the settled host froze (``gc.freeze``), counted once when it froze them:
# ``gc.get_freeze_count`` walks the whole permanent generation (1.2 ms over ~200,000 objects in
# Pyodide's Python 3.14), which made every ``host.info`` 2 ms slower (p50 0.4 → 2.4 ms in stop
# 44's whole bench). Nothing unfreezes, so the count stays true.
_frozen = {"objects": 0}


def note_frozen() -> None:
    """Record the permanent generation's size right after :func:`gc.freeze` (called once, by
    ``browser_host.main.keep_boot_objects``); ``runtime_figures`` reports it."""
    _frozen["objects"] = gc.get_freeze_count()


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
        "gc_frozen_objects": _frozen["objects"],
    }
