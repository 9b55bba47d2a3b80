"""A project's declared dependencies and the runtime's offline set (issue 32, "A project's own
``requirements.txt`` or ``pyproject.toml`` dependencies that the offline set covers are loaded on
first run"; docs/python.md, "Packages").

**The offline set** is the pure-Python wheels the site ships for the person's runtime only
(``runtime_wheels`` of ``worker/wheels.lock.json`` marked ``offline_set``), described by the
build in ``runtime/wheels/offline-set.json``: each package's name, version, wheel file and the
names it depends on (read by the build from the wheels' own metadata and checked against the
other pins). The runtime has no network, so nothing outside that set can ever be installed
from a name.

**The rule** (:func:`plan_loads`): the project's ``requirements.txt`` and ``pyproject.toml``
(``[project] dependencies``), both at the project's root, are read — stdlib only: the host's
Python has no ``packaging`` (it ships to the runtime, not the host), and a line this reader
cannot take for certain is reported, never guessed. Each requirement whose name the offline set
has, at a version its specifier admits, is loaded with its dependencies (dependencies first);
every other one is listed with a plain sentence saying why; a malformed file or line is named
with its line number. Nothing here ever raises on a project's bytes.

Reading, in detail: ``#`` comments, blank lines and ``\\`` continuations; a name (PEP 508,
compared canonicalised per PEP 503), optional ``[extras]`` (ignored: the extras' own
dependencies are not loaded), an optional version specifier list of ``==``, ``!=``, ``>=``,
``<=``, ``>``, ``<``, ``~=`` (``==1.*`` wildcards too) on release numbers, and an optional
``; marker`` — markers are not evaluated: the requirement is taken as if it applied (said in
the docs). Options (``-r``, ``-e``, ``--index-url`` …), URLs, paths and ``name @ url`` cannot
be met offline and are listed as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.json_bound import parse_json
from core.refusals import Code, Refused

__all__ = [
    "REQUIREMENT_FILES",
    "LoadPlan",
    "OfflinePackage",
    "Requirement",
    "canonical_name",
    "parse_offline_set",
    "parse_pyproject",
    "parse_requirements_txt",
    "plan_loads",
    "version_admitted",
]

REQUIREMENT_FILES = ("requirements.txt", "pyproject.toml")
"""The files read, at the project's root, in this order."""
MAX_REQUIREMENT_FILE_BYTES = 256 << 10
"""A requirements file larger than this (256 KiB) is not read (said)."""
MAX_LISTED = 50
"""At most this many uncovered names or problems are said one by one; the rest are counted."""

MAX_LINE_CHARS = 1000
"""A requirement longer than this is not read (said)."""
_OPERATORS = ("===", "~=", "==", "!=", "<=", ">=", "<", ">")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_VERSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.*+!_-")


def canonical_name(name: str) -> str:
    """PEP 503: lower case, every run of ``-``, ``_``, ``.`` one ``-``."""
    out: list[str] = []
    for char in name.lower():
        if char in "-_.":
            if not out or out[-1] != "-":
                out.append("-")
        else:
            out.append(char)
    return "".join(out)


def _is_name(text: str) -> bool:
    """PEP 508: letters, digits, ``.``, ``_``, ``-``; starting and ending with a letter or
    digit."""
    return (
        bool(text)
        and all(c in _NAME_CHARS for c in text)
        and text[0].isalnum()
        and (text[-1].isalnum())
    )


def _clause(text: str) -> tuple[str, str] | None:
    """``">= 1.2"`` → ``(">=", "1.2")``; ``None`` when it is not one operator and a version."""
    for op in _OPERATORS:
        if text.startswith(op):
            version = text[len(op) :].strip()
            ok = bool(version) and all(c in _VERSION_CHARS for c in version.lower())
            return (op, version) if ok else None
    return None


def _strip_comment(line: str) -> str:
    """What is before a ``#`` that starts the line or follows white space."""
    at = line.find("#")
    while at > 0 and not line[at - 1].isspace():
        at = line.find("#", at + 1)
    return line if at < 0 else line[:at]


@dataclass(frozen=True, slots=True)
class Requirement:
    """One declared dependency: ``name`` (canonical), ``specifier`` (as written, ``""`` for
    any), ``where`` (``"requirements.txt:3"``), ``problem`` — why it cannot be met offline
    whatever the set holds (a URL, a path, an option), or ``None``."""

    name: str
    specifier: str
    where: str
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class OfflinePackage:
    """A package of the offline set: canonical ``name``, ``version``, its wheel ``file`` (under
    ``runtime/wheels/``) and the canonical names it ``depends`` on (all in the set)."""

    name: str
    version: str
    file: str
    depends: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoadPlan:
    """What a run loads and says: ``load`` — wheel files, dependencies first; ``covered`` —
    ``"name version"`` of each package loaded; ``messages`` — sentences for the output panel
    (malformed files and lines, names the offline set does not cover and why)."""

    load: tuple[str, ...] = ()
    covered: tuple[str, ...] = ()
    messages: tuple[str, ...] = field(default_factory=tuple)


def parse_offline_set(text: str) -> dict[str, OfflinePackage]:
    """``runtime/wheels/offline-set.json`` (``{"schema": "voicebox-offline-set-v1",
    "packages": [{name, version, file, depends}]}``) → canonical name → package. Raises
    :class:`~core.refusals.Refused` ``sandbox-unavailable`` when it is not that shape (the
    build wrote it; a wrong one is a broken site, not the person's fault)."""
    data = parse_json(text, code=Code.SANDBOX_UNAVAILABLE, what="offline-set.json")
    bad = Refused(Code.SANDBOX_UNAVAILABLE, "The runtime's offline-set.json is not readable.")
    if not isinstance(data, dict) or data.get("schema") != "voicebox-offline-set-v1":
        raise bad
    out: dict[str, OfflinePackage] = {}
    for item in data.get("packages", []):
        if not isinstance(item, dict):
            raise bad
        name, version, file = item.get("name"), item.get("version"), item.get("file")
        depends = item.get("depends", [])
        fields = (name, version, file)
        if not all(isinstance(f, str) for f in fields) or not isinstance(depends, list):
            raise bad
        if not all(isinstance(d, str) for d in depends):
            raise bad
        assert isinstance(name, str) and isinstance(version, str) and isinstance(file, str)
        key = canonical_name(name)
        out[key] = OfflinePackage(key, version, file, tuple(canonical_name(d) for d in depends))
    return out


def _requirement(text: str, where: str) -> Requirement | str:
    """One PEP 508 string → a :class:`Requirement`, or the sentence saying why it is not one."""
    text = text.strip()
    if len(text) > MAX_LINE_CHARS:
        return f"{where}: a requirement over {MAX_LINE_CHARS} characters"
    head = text[:80]
    first = text.split(None, 1)[0] if text else ""
    if "://" in first or first.startswith((".", "/", "~")):
        return Requirement(
            canonical_name(head), "", where, f"'{head}' is a URL or a path, not a package name"
        )
    body = text.partition(";")[0]  # a marker is not evaluated (module docstring)
    body, at, _ = body.partition("@")
    end = 0
    while end < len(body) and body[end] in _NAME_CHARS:
        end += 1
    raw_name, rest = body[:end], body[end:].strip()
    if not _is_name(raw_name):
        return f"{where}: '{head}' does not start with a package name"
    name = canonical_name(raw_name)
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            return f"{where}: '{head}' opens '[' (extras) and never closes it"
        rest = rest[close + 1 :].strip()
    if at:
        return Requirement(name, "", where, f"'{name}' names a URL ({name} @ …)")
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1].strip()
    for clause in filter(None, (c.strip() for c in rest.split(","))):
        if _clause(clause) is None:
            return f"{where}: '{clause[:40]}' in '{head}' is not a version specifier"
    return Requirement(name, rest, where)


def parse_requirements_txt(
    text: str, where: str = "requirements.txt"
) -> tuple[list[Requirement], list[str]]:
    """``requirements.txt`` → (requirements, sentences about lines that are not one).
    Options (``-r other.txt``, ``--index-url``…) are said: nothing is fetched or followed."""
    out: list[Requirement] = []
    problems: list[str] = []
    logical: list[tuple[int, str]] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw if not pending else pending + raw
        if not pending:
            start = number
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        logical.append((start, line))
    if pending:
        logical.append((start, pending))
    for number, line in logical:
        line = _strip_comment(line).strip()
        if not line:
            continue
        at = f"{where}:{number}"
        if line.startswith("-"):
            option = line.split()[0][:40]
            out.append(
                Requirement(
                    option, "", at, f"the option '{option}' is not followed (no index, no file)"
                )
            )
            continue
        got = _requirement(line, at)
        if isinstance(got, str):
            problems.append(got)
        else:
            out.append(got)
    return out, problems


def parse_pyproject(
    text: str, where: str = "pyproject.toml"
) -> tuple[list[Requirement], list[str]]:
    """``pyproject.toml`` → (``[project] dependencies``, sentences about what is malformed).
    Optional dependencies and build requirements are not loaded."""
    import tomllib  # here, not at the top: its import is ~9 % of the host's (issue 34, cold boot)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [], [f"{where} is not valid TOML ({str(exc)[:120]}): its dependencies were not read"]
    project = data.get("project")
    if project is None:
        return [], []
    deps = project.get("dependencies", []) if isinstance(project, dict) else None
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        return [], [f"{where}: [project] dependencies is not a list of strings"]
    out: list[Requirement] = []
    problems: list[str] = []
    for index, dep in enumerate(deps, start=1):
        got = _requirement(dep, f"{where} dependency {index}")
        if isinstance(got, str):
            problems.append(got)
        else:
            out.append(got)
    return out, problems


def _release(version: str) -> tuple[int, ...] | None:
    """The release numbers of ``version`` (``"1!2.9.0.post0"`` → ``(2, 9, 0)``); ``None`` when
    it does not start with them or goes on with anything but a suffix's letters and digits."""
    text = version.strip().lower().partition("!")[2] or version.strip().lower()
    end = 0
    while end < len(text) and (text[end].isdigit() or text[end] == "."):
        end += 1
    numbers, suffix = text[:end].rstrip("."), text[end:]
    parts = numbers.split(".")
    if not numbers or not all(p.isdigit() for p in parts):
        return None
    if suffix and not all(c.isalnum() or c in "._-" for c in suffix):
        return None
    return tuple(int(p) for p in parts)


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def version_admitted(version: str, specifier: str) -> bool | None:
    """Whether ``version`` meets ``specifier`` (comma-separated clauses), comparing release
    numbers (``2.9.0.post0`` compares as ``2.9.0``); ``None`` when either cannot be read that
    way (then the package is not taken)."""
    have = _release(version)
    if have is None:
        return None
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        found = _clause(clause)
        if found is None:
            return None
        op, text = found
        if op == "===":
            if version != text:
                return False
            continue
        if text.endswith(".*") and op in ("==", "!="):
            prefix = _release(text[:-2])
            if prefix is None:
                return None
            same = have[: len(prefix)] + (0,) * max(0, len(prefix) - len(have)) == prefix
            if same != (op == "=="):
                return False
            continue
        want = _release(text)
        if want is None:
            return None
        a, b = _padded(have, want)
        ok = {
            "==": a == b,
            "!=": a != b,
            ">=": a >= b,
            "<=": a <= b,
            ">": a > b,
            "<": a < b,
            "~=": len(want) >= 2 and a >= b and have[: len(want) - 1] == want[:-1],
        }[op]
        if not ok:
            return False
    return True


def _read(files: Mapping[str, bytes]) -> tuple[list[Requirement], list[str]]:
    reqs: list[Requirement] = []
    problems: list[str] = []
    for name in REQUIREMENT_FILES:
        data = files.get(name)
        if data is None:
            continue
        if len(data) > MAX_REQUIREMENT_FILE_BYTES:
            problems.append(f"{name} is over {MAX_REQUIREMENT_FILE_BYTES >> 10} KiB")
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            problems.append(f"{name} is not UTF-8 text")
            continue
        parse = parse_requirements_txt if name == "requirements.txt" else parse_pyproject
        got, said = parse(text, name)
        reqs += got
        problems += said
    return reqs, problems


def plan_loads(files: Mapping[str, bytes], offline: Mapping[str, OfflinePackage]) -> LoadPlan:
    """What to load for a run of a project whose root files include ``files``
    (project-relative path → bytes; only :data:`REQUIREMENT_FILES` are read) from ``offline``
    (:func:`parse_offline_set`). See the module docstring for the rule. Never raises."""
    reqs, problems = _read(files)
    if not reqs and not problems:
        return LoadPlan()
    chosen: list[str] = []
    uncovered: list[str] = []

    def take(name: str, trail: tuple[str, ...] = ()) -> None:
        if name in chosen or name in trail:
            return
        for dep in offline[name].depends:
            if dep in offline:
                take(dep, (*trail, name))
        chosen.append(name)

    for req in reqs:
        if req.problem is not None:
            uncovered.append(f"{req.where}: {req.problem}")
            continue
        package = offline.get(req.name)
        if package is None:
            uncovered.append(f"{req.where}: '{req.name}' is not in the offline set")
            continue
        admitted = version_admitted(package.version, req.specifier) if req.specifier else True
        if admitted is not True:
            why = "does not meet" if admitted is False else "could not be checked against"
            uncovered.append(
                f"{req.where}: the offline set has {req.name} {package.version}, which {why} "
                f"'{req.specifier}'"
            )
            continue
        take(req.name)
    messages = [f"Not read: {p}." for p in problems[:MAX_LISTED]]
    if len(problems) > MAX_LISTED:
        messages.append(f"… and {len(problems) - MAX_LISTED} more lines not read.")
    if uncovered:
        shown = "; ".join(uncovered[:MAX_LISTED])
        more = f"; and {len(uncovered) - MAX_LISTED} more" if len(uncovered) > MAX_LISTED else ""
        have = ", ".join(sorted(offline)) or "nothing"
        messages.append(
            f"Not installed: {shown}{more}. This Python runtime has no network (connect-src "
            f"'none'; docs/python.md), so network installs are off: it loads only the offline "
            f"set shipped with the site ({have}) or a wheel file uploaded into the project."
        )
    return LoadPlan(
        load=tuple(offline[n].file for n in chosen),
        covered=tuple(f"{n} {offline[n].version}" for n in chosen),
        messages=tuple(messages),
    )
