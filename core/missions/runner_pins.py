"""``runners.toml``: the owner's pins of the runners that may work in an environment (seed 004
§5a; issue 30).

A pin is owner-side and closed: it names one ``runner_id``, its **one** capability, the projects
it may work in, what it runs and within which limits. A runner's announce proves only that it
is alive; it never adds or widens anything a pin says. The file lives at the environment's root
(``DIR/runners.toml``, beside ``host/``), written by its operator::

    [[runner]]
    runner_id = "build-1"
    capability = "build-runner"             # build-runner | naming-runner
    projects = ["p_0123456789abcdef"]       # the allowlist; nothing else
    command = ["my-agent", "--packet", "{packet_file}", "--cwd", "{worktree}"]
    gate_command = ["python", "-m", "pytest", "-q"]
    agent_time_limit_s = 1800               # 1 .. 86400
    gate_time_limit_s = 600                 # 1 .. 86400
    output_cap_bytes = 8388608              # kept of the log; the rest is counted and hashed
    max_parallel = 1                        # missions at once (default 1)
    env = ["LANG"]                          # variables passed from the runner's environment
    keys = ["ANTHROPIC_API_KEY"]            # provider keys the harness needs, given per run
    network = false                         # the agent's sandbox shares the machine's network

``command`` and ``gate_command`` are **argv lists**, never a shell string; the only placeholders
are ``{packet_file}``, ``{worktree}`` and ``{mission_id}``, each a whole element or part of one
(any other ``{…}`` is refused).

**Several templates** (issue 31 "Harness"): instead of ``command`` and ``keys``, a runner may
declare one or more agent templates, each a ``[[runner.template]]`` table with a ``label``
(``^[a-z0-9][a-z0-9._-]{0,63}$``, unique in its runner), its own ``command`` and its own
``keys``::

    [[runner]]
    runner_id = "build-1"
    capability = "build-runner"
    projects = ["p_0123456789abcdef"]
    gate_command = ["python", "-m", "pytest", "-q"]

    [[runner.template]]
    label = "agent-a"
    command = ["agent-a", "--packet", "{packet_file}"]
    keys = ["ANTHROPIC_API_KEY"]

    [[runner.template]]
    label = "agent-b"
    command = ["agent-b", "{packet_file}"]
    keys = ["OPENAI_API_KEY"]

A runner has ``command`` (and ``keys``) or templates, never both; a file of today's single
``command`` reads as one template labelled :data:`DEFAULT_TEMPLATE`
(:meth:`RunnerPin.templates`). Which template runs is the person's choice, kept by the browser
host (Settings → Harness) and named by label in the spawn request (never in the letter); the
first template is the one used when none is named. The runner probes each template's
executable (:mod:`core.missions.harness`).

``keys`` is what a pinned agent template (the harness, issue 31 "Harness") needs of the
person's provider keys: variable names only, each one core's variable rule allows
(:func:`core.custody.provider_keys.variable_refusal`), no name twice, none also in ``env``.
The browser host asks its key custody for exactly these and sends them with the spawn for that
run only; the server refuses a spawn whose keys are not exactly its runner's ``keys``. A pin
never holds a value.

:func:`parse_pins` refuses a malformed file with the line and the reason
(:class:`PinsInvalid`); a runner refuses to start on it, and nothing runs.

:func:`check_runner_letter` is the rule of what a pinned runner may post (seat ``hand``, its own
``runner_id`` and capability, ``synthetic: false``, and only the phases a run reports:
``executing``, ``gate``, ``merge_wait``, ``failed``) — never ``landed``, ``archived`` or a
receipt. A ``failed`` letter says why in ``verdict`` ``{decision: REJECT, gist: <reason>}``
(the letter has no other field for a sentence; decided for issue 30), and a runner posts no
other verdict.
"""

from __future__ import annotations

import re
import tomllib
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import ErrorDetails

from core.model import Contract
from core.refusals import Code, Refused
from core.vocabulary import ProjectId

__all__ = [
    "DEFAULT_TEMPLATE",
    "LABEL_PATTERN",
    "PINS_FILE",
    "PLACEHOLDERS",
    "RUNNER_PHASES",
    "PinsInvalid",
    "RunnerPin",
    "RunnerPins",
    "RunnerTemplate",
    "check_runner_letter",
    "expand_argv",
    "parse_pins",
    "worktree_finished",
]

PINS_FILE = "runners.toml"
DEFAULT_TEMPLATE = "default"
"""The label of the one template a runner with a plain ``command`` declares."""
LABEL_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
"""A template's label: what Settings → Harness shows and a spawn request names."""
PLACEHOLDERS = ("{packet_file}", "{worktree}", "{mission_id}")
RUNNER_PHASES = frozenset({"executing", "gate", "merge_wait", "failed"})
"""The phases a runner reports; ``landed`` follows only a person's receipt import, ``archived``
only a person's gesture, ``judging`` only compose."""
RunnerCapability = Literal["build-runner", "naming-runner"]
_BRACE = re.compile(r"\{[^{}]{0,64}\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_FORBIDDEN_ENV = frozenset({"PATH", "HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH"})

Argv = Annotated[list[Annotated[str, Field(min_length=1, max_length=4096)]], Field(min_length=1)]


class PinsInvalid(ValueError):
    """``runners.toml`` does not hold: ``line`` (1-based, or 0 when the file as a whole) and
    ``reason`` (a sentence; never a value of the file)."""

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        where = f"line {line}" if line else "the file"
        super().__init__(f"{PINS_FILE}, {where}: {reason}")


def _argv_placeholders(argv: list[str]) -> list[str]:
    for element in argv:
        if "\x00" in element:
            raise ValueError("an argv element holds a NUL")
        for found in _BRACE.findall(element):
            if found not in PLACEHOLDERS:
                raise ValueError(
                    f"{found} is not a placeholder; the placeholders are " + ", ".join(PLACEHOLDERS)
                )
    return argv


def _key_names_rule(names: list[str]) -> list[str]:
    from core.custody.provider_keys import variable_refusal

    for name in names:
        refusal = variable_refusal(name)
        if refusal is not None:
            raise ValueError(refusal.message)
    if len(set(names)) != len(names):
        raise ValueError("a variable is named twice")
    return names


def _not_in_env(names: list[str], info: ValidationInfo) -> None:
    passed = set(info.data.get("env", ()))
    for name in names:
        if name in passed:
            raise ValueError(f"{name} is in env too; a variable comes from one of them")


class RunnerTemplate(Contract):
    """One agent template of a runner (``[[runner.template]]``, module docstring): its
    ``label``, ``command`` (an argv list with placeholders) and the provider-key variables
    ``keys`` it needs (names only)."""

    label: str = Field(pattern=LABEL_PATTERN)
    command: Argv
    keys: list[str] = Field(default_factory=list, max_length=16)

    @field_validator("command")
    @classmethod
    def _placeholders(cls, argv: list[str]) -> list[str]:
        return _argv_placeholders(argv)

    @field_validator("keys")
    @classmethod
    def _key_names(cls, names: list[str]) -> list[str]:
        return _key_names_rule(names)


class RunnerPin(Contract):
    """One ``[[runner]]`` of ``runners.toml`` (fields in the module docstring). ``command`` and
    ``keys`` are the single-template form; ``template`` the several-templates form; a pin has
    one of them (:meth:`templates` reads both alike)."""

    runner_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    capability: RunnerCapability
    projects: list[ProjectId] = Field(min_length=1)
    command: Argv | None = None
    gate_command: Argv
    agent_time_limit_s: int = Field(default=1800, ge=1, le=86_400)
    gate_time_limit_s: int = Field(default=600, ge=1, le=86_400)
    output_cap_bytes: int = Field(default=8 << 20, ge=1024, le=256 << 20)
    max_parallel: int = Field(default=1, ge=1, le=16)
    env: list[str] = Field(default_factory=list, max_length=64)
    keys: list[str] = Field(default_factory=list, max_length=16)
    template: list[RunnerTemplate] = Field(default_factory=list, max_length=16)
    network: bool = False

    @field_validator("command", "gate_command")
    @classmethod
    def _placeholders(cls, argv: list[str] | None) -> list[str] | None:
        return None if argv is None else _argv_placeholders(argv)

    @field_validator("env")
    @classmethod
    def _env_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not _ENV_NAME.match(name):
                raise ValueError("an env entry is not a variable name")
            if name in _FORBIDDEN_ENV:
                raise ValueError(f"{name} is set by the sandbox, never passed through")
        return names

    @field_validator("keys")
    @classmethod
    def _key_names(cls, names: list[str], info: ValidationInfo) -> list[str]:
        _not_in_env(names, info)
        return _key_names_rule(names)

    @field_validator("template")
    @classmethod
    def _templates(
        cls, templates: list[RunnerTemplate], info: ValidationInfo
    ) -> list[RunnerTemplate]:
        labels = [t.label for t in templates]
        if len(set(labels)) != len(labels):
            raise ValueError("a template label is used twice in one runner")
        for template in templates:
            _not_in_env(template.keys, info)
        return templates

    @model_validator(mode="after")
    def _one_form(self) -> RunnerPin:
        if self.command is None and not self.template:
            raise ValueError("command (or one [[runner.template]] or more) is required")
        if self.command is not None and self.template:
            raise ValueError("a runner has command or [[runner.template]] tables, never both")
        if self.template and self.keys:
            raise ValueError("with [[runner.template]] tables, keys belong to each template")
        return self

    def templates(self) -> list[RunnerTemplate]:
        """The runner's agent templates in the file's order: its ``[[runner.template]]``
        tables, or one labelled :data:`DEFAULT_TEMPLATE` of its ``command`` and ``keys``."""
        if self.template:
            return list(self.template)
        assert self.command is not None  # the validator holds one form
        return [RunnerTemplate(label=DEFAULT_TEMPLATE, command=self.command, keys=self.keys)]

    def template_named(self, label: str | None) -> RunnerTemplate | None:
        """The template labelled ``label`` (``None``: the first one), or ``None`` when this
        runner pins no template by that label."""
        templates = self.templates()
        if label is None:
            return templates[0]
        return next((t for t in templates if t.label == label), None)


class RunnerPins(Contract):
    """The whole file: its runners, ids unique."""

    runner: list[RunnerPin] = Field(default_factory=list)

    def get(self, runner_id: str) -> RunnerPin | None:
        """The pin of ``runner_id``, or ``None`` (unpinned)."""
        return next((p for p in self.runner if p.runner_id == runner_id), None)


def _table_lines(text: str) -> list[int]:
    """The 1-based line of each ``[[runner]]`` header, in order."""
    return [
        n
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip().split("#", 1)[0].strip() == "[[runner]]"
    ]


def _template_line(text: str, start: int, index: int) -> int:
    """The line of the ``index``-th ``[[runner.template]]`` header after line ``start``."""
    seen = -1
    for n, line in enumerate(text.splitlines()[start:], start=start + 1):
        header = line.strip().split("#", 1)[0].strip()
        if header == "[[runner]]":
            break
        if header == "[[runner.template]]":
            seen += 1
            if seen == index:
                return n
    return start


def _key_line(text: str, start: int, key: str) -> int:
    """The line of ``key = …`` in the table starting at ``start`` (else ``start``)."""
    lines = text.splitlines()
    for n in range(start, len(lines)):
        stripped = lines[n].strip()
        if stripped.startswith("[") and n + 1 != start:
            break
        name, equals, _ = stripped.partition("=")
        if equals and name.strip() == key:
            return n + 1
    return start


def parse_pins(text: str) -> RunnerPins:
    """``runners.toml``'s text → :class:`RunnerPins`. Raises :class:`PinsInvalid` with the line
    and the reason: a TOML syntax error (its line), an unknown key, a capability that is not
    ``build-runner`` or ``naming-runner``, a shell string where an argv goes, an unknown
    placeholder, a duplicate ``runner_id`` (issue 30, pins)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d{1,9})", str(exc))
        raise PinsInvalid(int(found.group(1)) if found else 0, "not valid TOML") from None
    unknown = sorted(set(data) - {"runner"})
    if unknown:
        raise PinsInvalid(0, "the only top-level table is [[runner]]")
    headers = _table_lines(text)
    try:
        pins = RunnerPins.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_input=False, include_url=False)[0]
        loc = error["loc"]
        line, key = 0, ""
        if len(loc) >= 2 and loc[0] == "runner" and isinstance(loc[1], int):
            start = headers[loc[1]] if loc[1] < len(headers) else 0
            key = str(loc[2]) if len(loc) > 2 else ""
            if key == "template" and start:  # a table of its own: that table's line
                index = loc[3] if len(loc) > 3 and isinstance(loc[3], int) else 0
                start = _template_line(text, start, index)
                key = str(loc[4]) if len(loc) > 4 else ""
            line = _key_line(text, start, key) if key and start else start
        raise PinsInvalid(line, _reason(error, key)) from None
    seen: set[str] = set()
    for index, pin in enumerate(pins.runner):
        if pin.runner_id in seen:
            start = headers[index] if index < len(headers) else 0
            raise PinsInvalid(start, f"runner_id {pin.runner_id!r} is pinned twice")
        seen.add(pin.runner_id)
    return pins


def _reason(error: ErrorDetails, key: str) -> str:
    kind = error["type"]
    if key == "capability" and kind == "literal_error":
        return "capability is build-runner or naming-runner; no other capability is pinned here"
    if key in {"command", "gate_command"} and kind == "list_type":
        return f"{key} is an argv list of strings, never a shell string"
    if kind == "extra_forbidden":
        return f"{key or 'a key'} is not a field of a runner pin"
    if kind == "missing":
        return f"{key} is required"
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    return f"{key}: {message}" if key else message


def expand_argv(argv: list[str], *, packet_file: str, worktree: str, mission_id: str) -> list[str]:
    """``argv`` with its placeholders filled in, element by element (never through a shell)."""
    values = {"{packet_file}": packet_file, "{worktree}": worktree, "{mission_id}": mission_id}
    return [_BRACE.sub(lambda m: values[m.group(0)], element) for element in argv]


def check_runner_letter(pin: RunnerPin, project: str, letter: dict[str, Any]) -> None:
    """Refuse ``permission-denied`` unless ``letter`` (JSON data) is one a run of ``pin`` may
    post in ``project`` (the rule in the module docstring: the pin's allowlist, seat ``hand``,
    the pin's ``runner_id`` and capability, ``synthetic`` false, a phase of
    :data:`RUNNER_PHASES`, no receipt, a verdict only as a failed letter's reason; issue 30,
    the run). The letter's own contract is :mod:`core.missions.letters`' (checked after this)."""

    def refuse(reason: str) -> Refused:
        return Refused(Code.PERMISSION_DENIED, f"A runner may not post that: {reason}.")

    if project not in pin.projects:
        raise refuse("that project is not in the runner's allowlist")
    if letter.get("seat") != "hand":
        raise refuse("a runner posts from the hand seat")
    if letter.get("runner_id") != pin.runner_id or letter.get("capability") != pin.capability:
        raise refuse("runner_id and capability are the pin's, never the runner's own word")
    if letter.get("synthetic", False) is not False:
        raise refuse("a run's letters are never synthetic")
    if letter.get("phase") not in RUNNER_PHASES:
        raise refuse("its phases are executing, gate, merge_wait and failed; never landed")
    if letter.get("receipt") is not None:
        raise refuse("a receipt is imported by a person")
    verdict = letter.get("verdict")
    if verdict is not None and (
        letter.get("phase") != "failed"
        or not isinstance(verdict, dict)
        or verdict.get("decision") != "REJECT"
    ):
        raise refuse("its only verdict is the REJECT of a failed letter, giving the reason")


def worktree_finished(phase: str, head_id: str, dismissed_id: str | None) -> bool:
    """True when a mission's worktree may go (issue 30, cleanup): its head is ``landed`` or
    ``archived``, or ``failed`` and a person dismissed that very head (``dismissed_id`` the
    content id the dismissal names; a later letter brings the mission back)."""
    if phase in {"landed", "archived"}:
        return True
    return phase == "failed" and dismissed_id is not None and dismissed_id == head_id
