"""The host's first import, made cheaper (issue 34, cold boot: navigation → ``ready``).

The worker's JavaScript imports the host through :func:`import_host` instead of importing
:mod:`browser_host.main` itself. The whole import is on the path to ``ready``, and the
profile of a cold boot (bench/README.md, "Cold boot profile") showed one cost in it that buys
nothing there: Python 3.14's ``typing`` compiles the code of every forward reference it makes
the moment it makes it (``typing._make_forward_ref``: "for compatibility, eagerly compile"),
and ``pydantic_core.core_schema`` alone makes about 900 of them in its ``TypedDict`` classes,
whose annotations nothing ever evaluates. :func:`forward_refs_compiled_when_evaluated` lets
them be compiled when they are first evaluated instead (``annotationlib.ForwardRef``'s own
``__forward_code__``, which caches it): every reference is the same object with the same
text, evaluating one gives the same result, and a reference that is not an expression is
still refused with ``SyntaxError`` — when it is evaluated, not when it is made. Outside the
import, ``typing`` is as it was.

On a Python whose ``typing`` has no ``_make_forward_ref`` (CPython before 3.14: the server's,
the tests') nothing is changed.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

__all__ = ["forward_refs_compiled_when_evaluated", "import_host"]


def _make_forward_ref_uncompiled(code: str, *, parent_fwdref: Any = None, **kwargs: Any) -> Any:
    """``typing._make_forward_ref`` of Python 3.14 without its eager compile (module docstring)."""
    import annotationlib  # type: ignore[import-not-found]  # Python 3.14 (Pyodide); mypy checks as 3.11

    if parent_fwdref is not None:
        if parent_fwdref.__forward_module__ is not None:
            kwargs["module"] = parent_fwdref.__forward_module__
        if parent_fwdref.__owner__ is not None:
            kwargs["owner"] = parent_fwdref.__owner__
    return annotationlib.ForwardRef(code, **kwargs)


@contextmanager
def forward_refs_compiled_when_evaluated() -> Iterator[bool]:
    """Within the block, forward references ``typing`` makes are compiled when first evaluated,
    not when made (module docstring). Yields True when that is so on this Python, False when
    its ``typing`` has no eager step to leave out (nothing changed). ``typing`` is restored on
    leaving, whatever happened in the block."""
    original = getattr(typing, "_make_forward_ref", None)
    if original is None:
        yield False
        return
    typing._make_forward_ref = _make_forward_ref_uncompiled  # type: ignore[attr-defined]  # 3.14 private; mypy checks as 3.11
    try:
        yield True
    finally:
        typing._make_forward_ref = original  # type: ignore[attr-defined]  # as above


def import_host() -> ModuleType:
    """Import :mod:`browser_host.main` (and so ``core`` and pydantic) with
    :func:`forward_refs_compiled_when_evaluated`; return the module. The worker calls this once,
    before ``main.start`` (``worker/host.mjs``); an import error propagates (a fatal boot)."""
    with forward_refs_compiled_when_evaluated():
        return importlib.import_module("browser_host.main")
