"""The host's first import (issue 34, cold boot; browser_host/boot_import.py).

The worker imports the host with the forward references ``typing`` makes compiled when they
are first evaluated, not when made (Python 3.14 compiles each the moment it is made, about
900 of them in pydantic_core's schema types alone, all on the path to ``ready``). The law:
within that import every forward reference evaluates exactly as it would have, one that is
not an expression is still refused with ``SyntaxError`` (when evaluated), and ``typing`` is
as it was after it, whatever happened. On a Python without the eager step (CPython 3.11, the
tests' own) the block changes nothing and says so; in Pyodide's 3.14 (the core suite's
in-Pyodide run, ``tests/pyodide_runner.mjs``) it defers the compile.
"""

from __future__ import annotations

import typing

import pytest

from browser_host.boot_import import forward_refs_compiled_when_evaluated

NOT_AN_EXPRESSION = "int )"
FIELDS = {"a": "int", "b": "list[str]", "c": "dict[str, typing.Any] | None"}


def test_forward_refs_made_in_the_hosts_import_compile_when_evaluated_and_evaluate_the_same() -> (
    None
):
    outside = typing.TypedDict("Outside", FIELDS)  # type: ignore[misc]
    with forward_refs_compiled_when_evaluated() as deferred:
        inside = typing.TypedDict("Inside", FIELDS)  # type: ignore[misc]
        refs = list(inside.__annotations__.values())
        compiled_when_made = [getattr(ref, "__code__", None) is not None for ref in refs]
    assert deferred is hasattr(typing, "_make_forward_ref")  # Python 3.14's eager step
    assert all(isinstance(ref, typing.ForwardRef) for ref in refs)
    if deferred:  # the step left out: nothing compiled until evaluated
        assert compiled_when_made == [False, False, False]
    assert typing.get_type_hints(inside) == typing.get_type_hints(outside)
    assert typing.get_type_hints(inside) == {
        "a": int,
        "b": list[str],
        "c": dict[str, typing.Any] | None,
    }


def test_a_forward_ref_that_is_not_an_expression_is_still_refused() -> None:
    def make_and_evaluate() -> object:
        broken = typing.TypedDict("Broken", {"x": NOT_AN_EXPRESSION})  # type: ignore[misc]  # noqa: UP013
        return typing.get_type_hints(broken)  # 3.14 in the block: refused here, when evaluated

    with forward_refs_compiled_when_evaluated(), pytest.raises(SyntaxError):
        make_and_evaluate()


def test_typing_is_as_it_was_after_the_hosts_import_even_when_it_failed() -> None:
    before = getattr(typing, "_make_forward_ref", None)
    with pytest.raises(ImportError), forward_refs_compiled_when_evaluated():
        raise ImportError("a module of the host failed to import")
    assert getattr(typing, "_make_forward_ref", None) is before
