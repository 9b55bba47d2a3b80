"""``host.info`` runtime figures (core/host/info_ops.py): read through the placement's probe,
absent without one, and never audited."""

from __future__ import annotations

from tests.support import HostHarness


def test_host_info_has_no_runtime_figures_without_a_probe() -> None:
    assert HostHarness().ok("host.info")["runtime"] is None


def test_host_info_reports_the_probes_figures() -> None:
    h = HostHarness()
    h.ctx.services.runtime_probe = lambda: {
        "wasm_memory_bytes": 48 * 2**20,
        "python_allocated_blocks": 123_456,
    }
    assert h.ok("host.info")["runtime"] == {
        "wasm_memory_bytes": 48 * 2**20,
        "python_allocated_blocks": 123_456,
        "byte_path_peak_held_bytes": None,  # figures the probe did not give stay null
        "byte_path_bytes": None,
        "gc_frozen_objects": None,
    }
    assert h.sink.records == {}
