"""A rule lives in exactly one place (issue 14; STYLE §3): the human gate, SAFE mode, the
sentence a validation error becomes, and the format of the instants the host writes each have
one home in ``core``, and the operations' handlers check no gate themselves (the pipeline does,
from what each operation declares). Read from the sources, so it runs inside Pyodide too."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"


def _sources() -> dict[str, str]:
    return {
        str(p.relative_to(CORE.parent)): p.read_text(encoding="utf-8")
        for p in sorted(CORE.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".j2")
    }


def _where(predicate) -> set[str]:  # type: ignore[no-untyped-def]
    """Files of core whose syntax tree has a node ``predicate`` accepts."""
    found = set()
    for name, source in _sources().items():
        if name.endswith(".py") and any(predicate(n) for n in ast.walk(ast.parse(source))):
            found.add(name)
    return found


def _calls(*names: str):  # type: ignore[no-untyped-def]
    def accept(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in names

    return accept


def _refuses(code: str):  # type: ignore[no-untyped-def]
    def accept(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "Refused"
            and bool(node.args)
            and ast.unparse(node.args[0]) == f"Code.{code}"
        )

    return accept


def test_the_gesture_token_is_written_once_in_core() -> None:
    lines = [
        f"{name}:{n}"
        for name, source in _sources().items()
        for n, line in enumerate(source.splitlines(), 1)
        if "human-ui" in line
    ]
    assert lines == ["core/gestures.py:40"]
    assert 'HumanUi = Literal["human-ui"]' in (CORE / "gestures.py").read_text().splitlines()[39]


def test_one_gate_refuses_a_missing_human_gesture() -> None:
    assert _where(_refuses("HUMAN_GESTURE_REQUIRED")) == {"core/gestures.py"}
    assert _where(_calls("require_human_gesture")) == {"core/host/pipeline.py"}


def test_safe_mode_is_one_check() -> None:
    """Refused in one function, asked by the pipeline's gate and, early, by admission; the
    broker leaves it to the gate of the write that performs what it allows (issue 35 item 2)."""
    assert _where(_refuses("READ_ONLY_MODE")) == {"core/policy.py"}
    assert _where(_calls("require_writable")) == {
        "core/host/pipeline.py",
        "core/tools/admission.py",
    }


def test_a_validation_error_becomes_a_refusal_sentence_in_one_place() -> None:
    assert _where(_calls("quiet_error_text", "quiet_first_error")) == {"core/refusals.py"}


def test_the_instants_the_host_writes_have_one_format() -> None:
    def formats_time(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in (
            "isoformat",
            "strftime",
            "fromtimestamp",
            "utcfromtimestamp",
        )

    assert _where(formats_time) == {"core/time.py"}


def test_no_handler_checks_a_gate_the_pipeline_enforces() -> None:
    gates = _calls("require_human_gesture", "require_writable", "accept_origin")
    handlers = {name for name in _where(gates) if name.startswith("core/host/")}
    assert {h for h in handlers if h.endswith("_ops.py")} == set()
    assert _where(_refuses("MESSAGE_MALFORMED")) >= {"core/host/pipeline.py"}
    ops_refusing_bodies = {
        name
        for name, source in _sources().items()
        if name.endswith("_ops.py") and ("needs the" in source or "takes no body" in source)
    }
    assert ops_refusing_bodies == set()
