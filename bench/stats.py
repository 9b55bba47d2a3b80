"""Summaries the report uses: runs (median, min, max) and latency samples (p50, p95)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

__all__ = ["percentile", "ratio", "runs", "samples"]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0–1) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def runs(values: Sequence[float], digits: int = 1) -> dict[str, object]:
    """``{median, min, max, n, values}`` of one figure measured once per run."""
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
        "values": [round(v, digits) for v in values],
    }


def samples(values: Sequence[float], digits: int = 3) -> dict[str, object]:
    """``{p50, p95, min, max, n}`` of many latency samples."""
    return {
        "p50": round(percentile(values, 0.5), digits),
        "p95": round(percentile(values, 0.95), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
    }


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` rounded to 3 digits (inf when the denominator is 0)."""
    return round(numerator / denominator, 3) if denominator else float("inf")
