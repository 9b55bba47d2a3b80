"""The coding-agent harness: which pinned template runs, and what a runner's probe may say of
it (issue 31 "Harness"; seed 002 §2, the seed's ``.harness-settings.json``; seed 004 §5a).

A runner's pin may declare several agent templates (``[[runner.template]]``,
:mod:`core.missions.runner_pins`). Two rules live here, each once:

- **the probe's words** (:class:`TemplateProbe`, :func:`probe_words`): the runner resolves each
  template's executable on the ``PATH`` its sandbox gives an agent and runs ``<executable>
  --version`` there (bounded in time and output, scrubbed environment, no key); what travels
  to the server and on to the browser is the executable's **name** (never a path), whether it
  was found, the first line of its version output — cut to :data:`MAX_VERSION_CHARS`, control
  characters dropped, every absolute path in it reduced to its last part — or the reason it
  was not (missing, not executable, failed, timed out). The server keeps only the probes of
  labels its pin declares and takes the executable's name from the pin, never from the
  runner's word (:func:`pin_probes`);
- **the person's choice** (:class:`HarnessSettings`, HOST_DIR :data:`HARNESS_DOC`, sealed at
  rest by the browser host's HostState like every HOST_DIR document): per paired environment
  (envKey) and capability, the label of the template that is active. No choice means the
  runner's first template. A spawn names the active label to the server (which checks that the
  chosen runner pins it) and asks the key custody for exactly that template's ``keys``; the
  mission letter names none of it (seed 004 §1a: roles, never vendors).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Final, Literal, Protocol

from pydantic import ConfigDict, Field, ValidationError, field_validator

from core.missions.letters import Capability
from core.missions.runner_pins import LABEL_PATTERN, RunnerPin
from core.model import Contract
from core.ports import HostState
from core.refusals import Code, Refused
from core.vocabulary import EnvKey

__all__ = [
    "HARNESS_DOC",
    "MAX_CHOICES",
    "MAX_VERSION_CHARS",
    "PROBE_OUTPUT_BYTES",
    "PROBE_S",
    "HarnessChoice",
    "HarnessSettings",
    "TemplateProbe",
    "TemplateView",
    "executable_name",
    "harness_keys",
    "load_harness",
    "pin_probes",
    "probe_words",
    "save_harness",
]

HARNESS_DOC: Final = "harness-settings.json"
"""The HOST_DIR document of the person's harness choices (the seed's ``.harness-settings.json``;
named like ``api-keys.json`` beside it)."""
MAX_CHOICES: Final = 256
"""The most (environment, capability) choices kept."""
MAX_VERSION_CHARS: Final = 120
"""The longest version line shown."""
PROBE_S: Final = 5.0
"""How long a probe's ``--version`` may run, in seconds, before it is stopped."""
PROBE_OUTPUT_BYTES: Final = 4096
"""How much of a probe's output is read; the rest is not."""

ProbeReason = Literal["missing", "not-executable", "failed", "timed-out", "relative"]
_REASONS: Final[dict[str, str]] = {
    "missing": "not on the agent's PATH, or hidden from it",
    "not-executable": "found but not executable",
    "failed": "its --version failed",
    "timed-out": f"its --version did not answer within {PROBE_S:g} s",
    "relative": "a path inside the worktree: found only when a mission runs",
}
_OPENERS = "([<{'\"=:,"
"""What may stand before an absolute path inside a word (``(/usr/lib/x)``, ``PATH=/bin``)."""
_CLOSERS = ")]>}'\";:,"
"""What ends a path inside a word."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def executable_name(argv0: str) -> str:
    """The name shown of a template's executable: the last part of ``argv0`` (never a path)."""
    return argv0.rstrip("/").rsplit("/", 1)[-1][:128] or "?"


def probe_words(output: bytes) -> str | None:
    """The version line shown of a probe's output (module docstring): its first non-empty
    line, undecodable bytes replaced, control and invisible characters dropped, every absolute
    path reduced to its last part, at most :data:`MAX_VERSION_CHARS` characters; ``None`` when
    it printed nothing."""
    text = output[:PROBE_OUTPUT_BYTES].decode("utf-8", "replace")
    for line in text.splitlines():
        line = _CONTROL.sub("", line).strip()
        if line:
            return " ".join(_cut_paths(w) for w in line.split(" "))[:MAX_VERSION_CHARS]
    return None


def _cut_paths(word: str) -> str:
    """``word`` with each absolute path in it (a ``/`` at its start or after one of
    :data:`_OPENERS`, up to one of :data:`_CLOSERS`) cut to its last part."""
    out, k = [], 0
    while k < len(word):
        if word[k] == "/" and (k == 0 or word[k - 1] in _OPENERS):
            end = k
            while end < len(word) and word[end] not in _CLOSERS:
                end += 1
            out.append(executable_name(word[k:end]))
            k = end
            continue
        out.append(word[k])
        k += 1
    return "".join(out)


class TemplateProbe(Contract):
    """What a runner found of one template: its ``label``, the ``executable``'s name, whether
    it was ``found``, its ``version`` line (:func:`probe_words`) or the ``reason`` it was not
    found or failed (with ``said``: that reason in words)."""

    label: str = Field(pattern=LABEL_PATTERN)
    executable: str = Field(min_length=1, max_length=128, pattern=r"^[^/\x00]+$")
    found: bool
    version: str | None = Field(default=None, max_length=MAX_VERSION_CHARS)
    reason: ProbeReason | None = None
    said: str | None = Field(default=None, max_length=200)

    @classmethod
    def of(
        cls,
        label: str,
        argv0: str,
        *,
        found: bool,
        version: str | None = None,
        reason: ProbeReason | None = None,
    ) -> TemplateProbe:
        """A probe named as the module docstring says (the executable's name, the reason's
        words)."""
        return cls(
            label=label,
            executable=executable_name(argv0),
            found=found,
            version=version,
            reason=reason,
            said=None if reason is None else _REASONS[reason],
        )


def pin_probes(pin: RunnerPin, reported: list[TemplateProbe]) -> list[dict[str, object]]:
    """Each template ``pin`` declares, in its order, as the identity answer lists it:
    ``{label, executable, keys, found, version, reason, said}`` — the label, the executable's
    name and the keys from the pin; ``found``/``version``/``reason`` from the runner's report
    for that label (its version put through :func:`probe_words` again: a path in it is cut
    whatever the runner sent) (``found`` ``None`` and reason ``None`` while it has reported none). A
    report of a label the pin does not declare is ignored."""
    by_label = {p.label: p for p in reported}
    rows: list[dict[str, object]] = []
    for template in pin.templates():
        probe = by_label.get(template.label)
        rows.append(
            {
                "label": template.label,
                "executable": executable_name(template.command[0]),
                "keys": list(template.keys),
                "found": None if probe is None else probe.found,
                "version": None
                if probe is None or probe.version is None
                else probe_words(probe.version.encode("utf-8")),
                "reason": None if probe is None else probe.reason,
                "said": "not probed yet" if probe is None else probe.said,
            }
        )
    return rows


class HarnessChoice(Contract):
    """The template a person made active for one environment and capability; ``chosen_at``
    in ms since the epoch."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: EnvKey = Field(alias="envKey")
    capability: Capability
    label: str = Field(pattern=LABEL_PATTERN)
    chosen_at: int = Field(alias="chosenAt", ge=0)


class HarnessSettings(Contract):
    """:data:`HARNESS_DOC`: the person's choices, one per (envKey, capability)."""

    v: int = Field(default=1, ge=1, le=1)
    choices: tuple[HarnessChoice, ...] = Field(default=(), max_length=MAX_CHOICES)

    def active(self, env_key: str, capability: str) -> str | None:
        """The label chosen for ``env_key`` and ``capability``; ``None``: no choice (the
        runner's first template)."""
        found = next(
            (c for c in self.choices if c.env_key == env_key and c.capability == capability),
            None,
        )
        return None if found is None else found.label

    def choose(self, env_key: str, capability: str, label: str | None, at: int) -> HarnessSettings:
        """A copy with ``label`` active for ``env_key`` and ``capability`` (``None``: back to
        the first template). Refuses ``args-invalid`` past :data:`MAX_CHOICES`."""
        kept = tuple(
            c for c in self.choices if not (c.env_key == env_key and c.capability == capability)
        )
        if label is None:
            return self.model_copy(update={"choices": kept})
        if len(kept) >= MAX_CHOICES:
            raise Refused(Code.ARGS_INVALID, f"At most {MAX_CHOICES} harness choices are kept.")
        made = HarnessChoice(
            env_key=env_key,
            capability=capability,  # type: ignore[arg-type]  # a str, refused by the model unless a Capability
            label=label,
            chosen_at=at,
        )
        ordered = sorted((*kept, made), key=lambda c: (c.env_key, c.capability))
        return self.model_copy(update={"choices": tuple(ordered)})


async def load_harness(state: HostState) -> HarnessSettings:
    """:data:`HARNESS_DOC` read now (no choices when absent). Refuses ``storage-failed`` when
    it does not parse."""
    raw = await state.load(HARNESS_DOC)
    if not raw:
        return HarnessSettings()
    try:
        return HarnessSettings.model_validate_json(raw)
    except ValidationError:
        raise Refused(
            Code.STORAGE_FAILED, f"{HARNESS_DOC} in HOST_DIR is damaged; choose again."
        ) from None


async def save_harness(state: HostState, settings: HarnessSettings) -> None:
    """Store :data:`HARNESS_DOC` whole (the port's store is atomic; sealed by the browser
    host's HostState)."""
    await state.store(HARNESS_DOC, settings.model_dump_json(by_alias=True).encode("utf-8"))


class TemplateView(Contract):
    """One template of a runner as the server's identity lists it (:func:`pin_probes`) and
    the browser host reads it: never a path, never a secret. ``found`` ``None`` while the
    runner has not probed it."""

    model_config = ConfigDict(extra="ignore")

    label: str = Field(pattern=LABEL_PATTERN)
    executable: str = Field(min_length=1, max_length=128, pattern=r"^[^/\x00]+$")
    keys: list[Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{1,63}$")]] = Field(
        default_factory=list, max_length=16
    )
    found: bool | None = None
    version: str | None = Field(default=None, max_length=MAX_VERSION_CHARS)
    reason: ProbeReason | None = None
    said: str | None = Field(default=None, max_length=200)

    @field_validator("version")
    @classmethod
    def _no_path(cls, version: str | None) -> str | None:
        """The browser host cuts paths again, whatever the server sent (a second wall)."""
        return None if version is None else probe_words(version.encode("utf-8"))


class _Listed(Protocol):
    """What :func:`harness_keys` reads of a listed runner (read-only: a frozen model fits)."""

    @property
    def runner_id(self) -> str: ...
    @property
    def capability(self) -> str: ...
    @property
    def live(self) -> bool: ...
    @property
    def keys(self) -> Sequence[str]: ...
    @property
    def templates(self) -> Sequence[TemplateView]: ...


def harness_keys(
    runners: Sequence[_Listed], capability: str, runner_id: str | None, label: str | None
) -> tuple[str, ...]:
    """The provider-key variables a spawn carries: exactly those of the active template
    (``label``, the person's choice; ``None``: each runner's first) of the runner it goes to
    (issue 31 "Harness": no others). Candidates are the runner named ``runner_id``, else the
    live runners of ``capability`` (all of them when none is live: the server then refuses
    "not live"). Refuses ``permission-denied`` (``field`` ``template``) when ``label`` is
    chosen and no candidate pins it — the person chooses again in Settings → Harness — and
    ``args-invalid`` (``field`` ``runner_id``) when candidates need different keys (never
    the union: a run gets no key its harness does not need)."""
    pool = [r for r in runners if r.capability == capability]
    if runner_id is not None:
        pool = [r for r in pool if r.runner_id == runner_id]
    elif any(r.live for r in pool):
        pool = [r for r in pool if r.live]
    needs: set[tuple[str, ...]] = set()
    for runner in pool:
        if label is None:
            needs.add(tuple(sorted(runner.keys)))
            continue
        template = next((t for t in runner.templates if t.label == label), None)
        if template is not None:
            needs.add(tuple(sorted(template.keys)))
    if label is not None and pool and not needs:
        raise Refused(
            Code.PERMISSION_DENIED,
            f"The agent template {label} chosen in Settings → Harness is not pinned for "
            f"{capability} on that environment; choose another there.",
            field="template",
        )
    if len(needs) > 1:
        raise Refused(
            Code.ARGS_INVALID,
            f"The live runners for {capability} need different provider keys; choose the "
            "runner to spawn with.",
            field="runner_id",
        )
    return needs.pop() if needs else ()
