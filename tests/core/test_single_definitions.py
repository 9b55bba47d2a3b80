"""A shape is written once: an answer that carries a contract extends it instead of copying its
fields, and the host's ``run`` options are written once (``RunOptions``) for everything that
calls it, its overloads and one implementation checked against them (issue 35 item 5).
"""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

from core.host.operations import HostRuntime, RunOptions
from core.host.pipeline import Host
from core.host.tray_ops import PreviewAnswer
from core.missions.tray import ArchivePreview

CORE = Path(__file__).resolve().parents[2] / "core"


def test_the_archive_preview_answer_extends_the_preview_instead_of_copying_its_fields() -> None:
    assert issubclass(PreviewAnswer, ArchivePreview)
    own = set(PreviewAnswer.model_fields) - set(ArchivePreview.model_fields)
    assert own == {"mission_id", "head_letter_id", "letter"}
    restated = {
        node.target.id
        for node in ast.walk(ast.parse(inspect.getsource(PreviewAnswer)))
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert restated == own


def _shape(function: object) -> list[tuple[str, object, object]]:
    fn = typing.cast(typing.Callable[..., object], function)
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def _run_signatures() -> list[str]:
    """Every ``run`` in core/ that takes the host's run options — ``**options:
    Unpack[RunOptions]``, or ``within`` / ``receipt_as`` (the options only the host's run has)
    as its own parameters — by place."""
    found = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if not (isinstance(item, ast.AsyncFunctionDef) and item.name == "run"):
                    continue
                kwarg = item.args.kwarg
                unpacked = kwarg is not None and "RunOptions" in ast.unparse(
                    kwarg.annotation or kwarg
                )
                own = {"within", "receipt_as"} & {a.arg for a in item.args.kwonlyargs}
                if unpacked or own:
                    found.append(f"{path.relative_to(CORE).as_posix()}:{node.name}.run")
    return found


def test_the_host_run_options_are_written_once_and_its_implementation_matches_them() -> None:
    # the options are one TypedDict; the typed overloads (issue 35 item 1: Operation[A, R] →
    # Ran[R]; a name → Ran[Contract]) are declared in both, each taking **options of it, and
    # the one implementation's parameters match them
    # (its module's annotations are postponed, so Required is read from the annotation's text)
    assert {k: v.__forward_arg__ for k, v in RunOptions.__annotations__.items()} == {
        "actor": "Required[str]",
        "body": "bytes | None",
        "origin": "str | None",
        "sink": "Sink | None",
        "within": "Call[Contract] | None",
        "receipt_as": "str | None",
    }
    assert list(dict.fromkeys(_run_signatures())) == [
        "host/operations.py:HostRuntime.run",
        "host/pipeline.py:Host.run",
    ]
    declared = typing.get_overloads(HostRuntime.run)
    implemented = typing.get_overloads(Host.run)
    assert len(declared) == len(implemented) == 2
    assert [_shape(f) for f in implemented] == [_shape(f) for f in declared]
    assert all(_shape(f) == _shape(Host.run) for f in declared)
    assert _shape(Host.run)[-1][:2] == ("options", inspect.Parameter.VAR_KEYWORD)
