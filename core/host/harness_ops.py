"""Settings → Harness: which pinned agent template is active, per paired environment and
capability (issue 31 "Harness"; seed 002 §2, the seed's ``.harness-settings.json``). The rules
are :mod:`core.missions.harness`; these are the handlers.

================  =======  ==============================================================
operation         gesture  what
================  =======  ==============================================================
``harness.list``  no       each paired environment's runners by capability: their templates
                           (label, executable name, keys, what the runner's probe found)
                           and the active one
``harness.choose`` yes     make a template active for an environment and capability
                           (``label`` ``null``: back to the runner's first); audited
================  =======  ==============================================================

What is listed comes from the environment's identity answer (its runners' probes of their own
pins; nothing is run from the browser's say-so) and carries no path and no secret. The choice is
kept in HOST_DIR ``harness-settings.json`` (sealed at rest by the browser host like every
HOST_DIR document); a spawn names it to the server by label, never in the letter
(:func:`core.host.remote_mission_ops.remote_spawn`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ConfigDict, Field

from core.custody.pairing import load_pairings
from core.host.env_ops import services
from core.host.operations import Call, Outcome
from core.missions.harness import TemplateView, load_harness, save_harness
from core.missions.letters import Capability
from core.missions.remote_runs import RunnerLive, parse_runners
from core.missions.runner_pins import LABEL_PATTERN
from core.model import Contract, NoArgs
from core.refusals import Code, Refused
from core.vocabulary import EnvKey

__all__ = [
    "HarnessCapability",
    "HarnessChooseArgs",
    "HarnessEnvironment",
    "HarnessList",
    "HarnessRunner",
    "harness_choose",
    "harness_list",
]


class HarnessRunner(Contract):
    """A pinned runner of one capability: its id, whether it is live, its templates."""

    runner_id: str
    live: bool
    templates: list[TemplateView]


class HarnessCapability(Contract):
    """One capability of an environment: its runners, the template labels they pin (in their
    order, each once), the ``active`` label (the person's choice, else the first runner's first
    template), whether it was ``chosen`` by a person, and ``stale``: the chosen label is no
    longer pinned (a spawn is then refused until the person chooses again)."""

    capability: str
    runners: list[HarnessRunner]
    labels: list[str]
    active: str | None
    chosen: bool
    stale: bool = False


class HarnessEnvironment(Contract):
    """A paired environment: its envKey and name, and either its capabilities or the reason
    it could not be read (``unreachable``: the refusal's sentence)."""

    env_key: str
    name: str
    capabilities: list[HarnessCapability] = Field(default_factory=list)
    unreachable: str | None = None


class HarnessList(Contract):
    """Every paired environment's harness (module docstring)."""

    environments: list[HarnessEnvironment]


class HarnessChooseArgs(Contract):
    """``harness.choose``: the environment (envKey), the capability and the template's label
    (``null``: no choice, the runner's first template)."""

    model_config = ConfigDict(populate_by_name=True)

    env_key: EnvKey = Field(alias="envKey")
    capability: Capability
    label: str | None = Field(default=None, pattern=LABEL_PATTERN)


async def _paired(call: Call[Contract]) -> list[str]:
    pairings = await load_pairings(call.ctx.state)
    return sorted({o.env_key for o in pairings.outbound if o.revoked_at is None})


def _capabilities(
    runners: list[RunnerLive], env_key: str, chosen: Mapping[tuple[str, str], str]
) -> list[HarnessCapability]:
    out = []
    for capability in sorted({r.capability for r in runners}):
        mine = [r for r in runners if r.capability == capability]
        labels: list[str] = []
        for runner in mine:
            labels += [t.label for t in runner.templates if t.label not in labels]
        choice = chosen.get((env_key, capability))
        active = choice if choice is not None else (labels[0] if labels else None)
        out.append(
            HarnessCapability(
                capability=capability,
                runners=[
                    HarnessRunner(runner_id=r.runner_id, live=r.live, templates=r.templates)
                    for r in mine
                ],
                labels=labels,
                active=active,
                chosen=choice is not None,
                stale=choice is not None and choice not in labels,
            )
        )
    return out


async def _list(call: Call[Contract]) -> HarnessList:
    admin = services(call).admin
    settings = await load_harness(call.ctx.state)
    chosen: dict[tuple[str, str], str] = {
        (c.env_key, c.capability): c.label for c in settings.choices
    }
    names = {e.key: e.name for e in (await admin.environments()).environments}
    rows = []
    for env_key in await _paired(call):
        name = names.get(env_key, env_key)
        try:
            runners = parse_runners(await admin.identity_text(env_key))
        except Refused as refusal:
            rows.append(
                HarnessEnvironment(env_key=env_key, name=name, unreachable=refusal.body().message)
            )
            continue
        rows.append(
            HarnessEnvironment(
                env_key=env_key, name=name, capabilities=_capabilities(runners, env_key, chosen)
            )
        )
    return HarnessList(environments=rows)


async def harness_list(call: Call[NoArgs]) -> Outcome:
    """Refuses ``storage-failed`` when ``harness-settings.json`` is damaged; an environment
    that cannot be reached is listed with the reason, never a refusal of the whole list."""
    return Outcome(await _list(call))


async def harness_choose(call: Call[HarnessChooseArgs]) -> Outcome:
    """Make ``label`` the active template for ``envKey`` and ``capability``. Refuses
    ``environment-not-paired`` (no live bearer for ``envKey``), ``args-invalid`` (no runner of
    ``capability`` there pins a template labelled ``label``, as its identity lists it now),
    ``environment-unreachable`` (its identity could not be read to check). Audited
    ``harness-chosen`` with envKey, capability and label."""
    a = call.args
    ctx = call.ctx
    if a.env_key not in await _paired(call):
        raise Refused(
            Code.ENVIRONMENT_NOT_PAIRED,
            "A harness is chosen for a paired environment; pair it first.",
            field="envKey",
        )
    if a.label is not None:
        runners = parse_runners(await services(call).admin.identity_text(a.env_key))
        pinned = {t.label for r in runners if r.capability == a.capability for t in r.templates}
        if a.label not in pinned:
            raise Refused(
                Code.ARGS_INVALID,
                f"No runner for {a.capability} on that environment pins a template labelled "
                f"{a.label}.",
                field="label",
            )
    async with ctx.state_lock:
        settings = await load_harness(ctx.state)
        changed = settings.choose(a.env_key, a.capability, a.label, ctx.clock.now_ms())
        await save_harness(ctx.state, changed)
    return Outcome(
        await _list(call),
        rule="harness-chosen",
        details={"envKey": a.env_key, "capability": a.capability, "label": a.label},
    )
