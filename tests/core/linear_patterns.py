"""Find every regular expression in a source tree and prove each one linear (issue 13 #4).

Two engines run our patterns, and each has its own proof:

- **Python's ``re``** (``re.compile``, ``re.fullmatch``, … in our code) backtracks. A pattern is
  in the *linear class* when every quantifier has a finite upper bound and repeats one
  character test only (a literal, a class, ``.``), and it holds no back-reference or
  conditional. Such a pattern has a finite backtracking tree whose size does not depend on the
  text: :func:`re_cost` computes ``leaves`` (an upper bound on its paths: a greedy or lazy
  ``{lo,hi}`` offers ``hi - lo + 1`` ways, an alternation the sum of its branches' ways) and
  ``width`` (the most characters one path reads, lookarounds included). One match attempt
  costs at most ``leaves × width`` character tests, so ``search`` over ``n`` characters costs
  at most ``n × leaves × width`` — linear in ``n``. ``[A-Za-z][A-Za-z0-9+.-]*://`` is outside
  the class: from each of ``n`` starts its ``*`` reads the rest of a letter run, ``n²/2`` tests.
- **pydantic-core** (``Field(pattern=…)``, ``StringConstraints(pattern=…)``) compiles patterns
  with Rust's ``regex`` crate, a finite-automaton engine with a linear-time guarantee; it has
  no backtracking fallback (it refuses a lookaround outright), and nothing here may switch a
  model to ``regex_engine="python-re"``.

:func:`find_patterns` walks the modules' syntax trees (no import: ``browser_host`` needs a
browser) and resolves names to module-level constants, following ``from core.x import NAME``;
a pattern it cannot resolve to a constant is reported, never skipped — with one named exception,
:data:`GUARDED`: the pattern a person types into search in files (issue 33 item 1) is not ours
to make linear; it is compiled in exactly one place, after :mod:`core.projects.search` bounded
the cost of each step of its search (its module docstring, "Regex safety";
``tests/core/test_search.py`` proves the guard).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parse
from typing import Literal

ROOT = Path(__file__).resolve().parents[2]
RE_FUNCTIONS = frozenset(
    {"compile", "fullmatch", "match", "search", "findall", "finditer", "sub", "subn", "split"}
)
Engine = Literal["re", "pydantic"]
GUARDED = frozenset({("core.projects.search", "guarded")})
"""``(module, variable)``: the one ``re.compile`` of a person's own pattern (module docstring)."""


@dataclass(frozen=True)
class Found:
    """One pattern in the source: where, its text and flags, and the engine that runs it."""

    where: str
    pattern: str
    flags: int
    engine: Engine


@dataclass(frozen=True)
class Unresolved:
    """A pattern (or a way of reaching ``re``) the scan could not pin to a constant."""

    where: str
    why: str


class _Module:
    def __init__(self, root: Path, path: Path) -> None:
        self.root = root
        parts = path.relative_to(root).with_suffix("").parts
        # a package's __init__ is the package itself (what ``from pkg import X`` names)
        self.name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.consts: dict[str, ast.expr] = {}
        self.imports: dict[str, tuple[str, str]] = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    self.consts[target.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.value is not None:
                    self.consts[node.target.id] = node.value
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)


class _Tree:
    def __init__(self, root: Path, packages: tuple[str, ...]) -> None:
        self.root = root
        self.modules = {
            m.name: m
            for package in packages
            for m in (_Module(root, p) for p in sorted((root / package).rglob("*.py")))
        }

    def resolve(self, module: _Module, node: ast.expr) -> object:
        """The constant ``node`` stands for (a str or int), or raise ``LookupError``."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in module.consts:
                return self.resolve(module, module.consts[node.id])
            if node.id in module.imports:
                source, name = module.imports[node.id]
                other = self.modules.get(source)
                if other is None:
                    raise LookupError(f"{node.id} comes from {source}, outside the scan")
                return self.resolve(other, ast.Name(id=name))
            raise LookupError(f"{node.id} is not a module-level constant")
        if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "re":
            return int(getattr(re, node.attr))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return int(self.resolve(module, node.left)) | int(self.resolve(module, node.right))
        if isinstance(node, ast.JoinedStr):
            raise LookupError("an f-string pattern is built at run time")
        raise LookupError(f"{ast.dump(node)[:60]} is not a constant")


_FLAGS_AT = {"compile": 1, "sub": 4, "subn": 4, "split": 3}  # else 2: (pattern, string, flags)


def _flags_of(call: ast.Call, function: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "flags":
            return keyword.value
    index = _FLAGS_AT.get(function, 2)
    return call.args[index] if len(call.args) > index else None


def find_patterns(
    root: Path = ROOT, packages: tuple[str, ...] = ("core", "browser_host")
) -> tuple[list[Found], list[Unresolved]]:
    """Every pattern in ``packages`` under ``root`` (see the module docstring), and what could
    not be resolved: ``re`` reached other than as ``import re`` + ``re.<function>``, a
    pattern that is not a constant, or a model configured with another regex engine."""
    tree = _Tree(root, packages)
    found: list[Found] = []
    unresolved: list[Unresolved] = []
    for module in tree.modules.values():
        for node in ast.walk(module.tree):
            where = f"{module.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "re" and alias.asname not in (None, "re"):
                        unresolved.append(Unresolved(where, "re imported under another name"))
                    if alias.name in ("sre_compile", "regex"):
                        unresolved.append(Unresolved(where, f"{alias.name} imported"))
            elif isinstance(node, ast.ImportFrom) and node.module in ("re", "regex"):
                unresolved.append(Unresolved(where, f"names imported from {node.module}"))
            elif "regex_engine" in (getattr(node, "arg", None), getattr(node, "value", None)):
                unresolved.append(Unresolved(where, "a model sets regex_engine"))
            elif isinstance(node, ast.Call):
                found_here, missed = _patterns_of_call(tree, module, node, where)
                found += found_here
                unresolved += missed
    return found, unresolved


def _patterns_of_call(
    tree: _Tree, module: _Module, call: ast.Call, where: str
) -> tuple[list[Found], list[Unresolved]]:
    found: list[Found] = []
    missed: list[Unresolved] = []
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "re"
        and func.attr in RE_FUNCTIONS
    ):
        pattern = call.args[0] if call.args else None
        for keyword in call.keywords:
            if keyword.arg == "pattern":
                pattern = keyword.value
        flags_node = _flags_of(call, func.attr)
        if isinstance(pattern, ast.Name) and (module.name, pattern.id) in GUARDED:
            return found, missed
        try:
            text = tree.resolve(module, pattern) if pattern is not None else None
            flags = 0 if flags_node is None else int(tree.resolve(module, flags_node))
            if not isinstance(text, str):
                raise LookupError("the pattern is not a string constant")
            found.append(Found(where, text, flags, "re"))
        except LookupError as exc:
            missed.append(Unresolved(where, f"re.{func.attr}: {exc}"))
        return found, missed
    for keyword in call.keywords:
        if keyword.arg == "pattern":
            try:
                text = tree.resolve(module, keyword.value)
                if not isinstance(text, str):
                    raise LookupError("the pattern is not a string constant")
                found.append(Found(where, text, 0, "pydantic"))
            except LookupError as exc:
                missed.append(Unresolved(where, f"pattern=: {exc}"))
    return found, missed


# ---- the linear class of Python's re ---------------------------------------------------


class NotLinear(ValueError):
    """The pattern is outside the linear class; the message names the construct."""


@dataclass(frozen=True)
class Cost:
    """A pattern's backtracking tree: ``leaves`` paths, each reading at most ``width``
    characters. ``steps`` bounds one match attempt (character tests)."""

    leaves: int
    width: int

    @property
    def steps(self) -> int:
        return self.leaves * max(self.width, 1)


_ONE_CHARACTER = {sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}


def _cost(items: sre_parse.SubPattern | list) -> Cost:
    leaves, width = 1, 0
    for op, av in items:
        if op in _ONE_CHARACTER:
            width += 1
        elif op is sre.AT:
            continue
        elif op in _REPEATS:
            low, high, body = av
            if high is sre.MAXREPEAT:
                raise NotLinear(f"an unbounded repeat ({{{low},}}, *, +)")
            if len(body) != 1 or body[0][0] not in _ONE_CHARACTER:
                raise NotLinear("a repeat of more than one character test")
            width += high
            leaves *= 1 if op is sre.POSSESSIVE_REPEAT else high - low + 1
        elif op is sre.SUBPATTERN:
            inner = _cost(av[3])
            leaves, width = leaves * inner.leaves, width + inner.width
        elif op is sre.ATOMIC_GROUP:
            inner = _cost(av)
            leaves, width = leaves * inner.leaves, width + inner.width
        elif op is sre.BRANCH:
            branches = [_cost(b) for b in av[1]]
            leaves *= sum(b.leaves for b in branches)
            width += max(b.width for b in branches)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            inner = _cost(av[1])
            leaves, width = leaves * inner.leaves, width + inner.width
        else:
            raise NotLinear(f"{op} (a back-reference or conditional) can backtrack without bound")
    return Cost(leaves, width)


def re_cost(pattern: str, flags: int = 0) -> Cost:
    """The :class:`Cost` of ``pattern`` for Python's ``re``; raises :class:`NotLinear` when
    it is outside the linear class (module docstring)."""
    return _cost(sre_parse.parse(pattern, flags))


# ---- adversarial text ------------------------------------------------------------------

_CATEGORY_SAMPLE = {
    sre.CATEGORY_DIGIT: "7",
    sre.CATEGORY_NOT_DIGIT: "a",
    sre.CATEGORY_SPACE: " ",
    sre.CATEGORY_NOT_SPACE: "a",
    sre.CATEGORY_WORD: "a",
    sre.CATEGORY_NOT_WORD: "!",
}


_POOL = "a0 !/.:~\u00e9\u00a0"
_CATEGORY_TEST = {
    sre.CATEGORY_DIGIT: str.isdecimal,
    sre.CATEGORY_SPACE: str.isspace,
    sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
}


def _in_class(members: list, char: str) -> bool:
    """Whether the character class ``members`` (a parsed ``[...]``) accepts ``char``."""
    hit = False
    for kind, value in members:
        if kind is sre.LITERAL:
            hit |= char == chr(value)
        elif kind is sre.RANGE:
            hit |= value[0] <= ord(char) <= value[1]
        elif kind is sre.CATEGORY:
            positive = {
                sre.CATEGORY_NOT_DIGIT: sre.CATEGORY_DIGIT,
                sre.CATEGORY_NOT_SPACE: sre.CATEGORY_SPACE,
                sre.CATEGORY_NOT_WORD: sre.CATEGORY_WORD,
            }
            base = positive.get(value, value)
            hit |= _CATEGORY_TEST[base](char) != (base is not value)
    negated = any(kind is sre.NEGATE for kind, _ in members)
    return hit != negated


def _samples(items: sre_parse.SubPattern | list, *, runs: bool = False) -> list[str]:
    """One character each character test of the pattern accepts, in pattern order. With
    ``runs``, only those worth a run of their own: classes, repeated characters, and the
    literal that starts a sequence (a run of ``w`` starts ``www.`` at every position; a run of
    a literal further in is just another character that does not match)."""
    out: list[str] = []
    for index, (op, av) in enumerate(items):
        if op is sre.LITERAL:
            if not runs or index == 0:
                out.append(chr(av))
        elif op is sre.NOT_LITERAL:
            out.append("a" if av != ord("a") else "b")
        elif op is sre.ANY:
            out.append("a")
        elif op is sre.IN:
            if any(kind is sre.NEGATE for kind, _ in av):
                out += [next(c for c in _POOL if _in_class(av, c))]
            for kind, value in av:
                if kind is sre.LITERAL:
                    out.append(chr(value))
                elif kind is sre.RANGE:
                    out.append(chr(value[0]))
                elif kind is sre.CATEGORY:
                    out.append(_CATEGORY_SAMPLE[value])
        elif op in _REPEATS:
            out += _samples(av[2])
        elif op is sre.SUBPATTERN:
            out += _samples(av[3], runs=runs)
        elif op is sre.ATOMIC_GROUP:
            out += _samples(av, runs=runs)
        elif op is sre.BRANCH:
            for branch in av[1]:
                out += _samples(branch, runs=runs)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            out += _samples(av[1], runs=runs)
    return out


def adversarial_texts(pattern: str, flags: int, length: int) -> list[str]:
    """Texts of exactly ``length`` characters shaped to make ``pattern`` work hardest: a run
    of each character it tests for (the shape that made the URL pattern quadratic), and its
    characters in order, pumped (a near match, again and again, that fails at the end)."""
    parsed = sre_parse.parse(pattern, flags)
    samples = list(dict.fromkeys(_samples(parsed))) or ["a"]
    texts = [(s * length)[:length] for s in dict.fromkeys(_samples(parsed, runs=True))]
    pump = "".join(samples)
    texts.append((pump * (length // len(pump) + 1))[:length])
    near = pump[:-1] or pump
    texts.append((near * (length // len(near) + 1))[: length - 1] + "\u00e9")
    return texts
