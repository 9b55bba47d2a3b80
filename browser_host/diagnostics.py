"""Runtime figures for ``host.info`` (:class:`core.host.info_ops.RuntimeProbe`): the Wasm
memory's size and the Python allocator's block count. Non-secret, cheap, read on demand."""

from __future__ import annotations

import sys

__all__ = ["runtime_figures"]


def runtime_figures() -> dict[str, int]:
    """``{"wasm_memory_bytes", "python_allocated_blocks"}`` of this Pyodide instance."""
    import pyodide_js

    return {
        "wasm_memory_bytes": int(pyodide_js._module.HEAP8.length),
        "python_allocated_blocks": sys.getallocatedblocks(),
    }
