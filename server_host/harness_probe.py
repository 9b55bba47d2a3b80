"""The runner's probe of its pinned agent templates (issue 31 "Harness": each environment
reports which agent CLIs it has; nothing is run from the browser's say-so).

For each template of a pin (:meth:`core.missions.runner_pins.RunnerPin.templates`) the runner
resolves the executable, ``command[0]``, as the sandbox would for an agent: on the ``PATH``
of :func:`server_host.runner_run.runner_env` (a bare name), or the absolute path as it is;
a relative path names a file of the worktree, which exists only when a mission runs, and is
reported as such. A found executable is run as ``<executable> --version`` **inside the
sandbox** (:func:`probe_fence`: no worktree, the environment's root and the users' homes
hidden, no network), with the agent's scrubbed environment and **no provider key**, stdin
``/dev/null``, at most :data:`~core.missions.harness.PROBE_S` seconds (then its process group
is stopped) and :data:`~core.missions.harness.PROBE_OUTPUT_BYTES` bytes of output read. What
is reported is :class:`core.missions.harness.TemplateProbe`: the executable's name, found or
not, the first line of its version (paths cut to their last part) or the reason.

The probe runs when the runner starts, again whenever its pins change and every ten minutes
(:class:`Probes`); the runner sends it with every announce.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from pathlib import Path

from core.missions.harness import PROBE_OUTPUT_BYTES, PROBE_S, TemplateProbe, probe_words
from core.missions.runner_pins import RunnerPin, RunnerTemplate
from core.refusals import Refused
from server_host.home import Home
from server_host.runner_run import runner_env, stop_tree
from server_host.sandbox import Fence, ProcessSandbox, spawn

__all__ = ["PROBE_AGAIN_S", "Probes", "probe_fence", "probe_pin", "probe_template"]


def probe_fence(home: Home, network: bool = False) -> Fence:
    """What a probe's ``--version`` sees: no writable folder, the environment's root and the
    users' homes hidden, a private ``/tmp`` and ``HOME``, no network."""
    try:
        own: tuple[Path, ...] = (Path.home(),)
    except (RuntimeError, KeyError):
        own = ()
    return Fence(
        writable=(),
        hidden=(home.root, *own),
        scratch=(Path("/tmp"), home.exec_home),
        network=network,
    )


def _resolve(argv0: str, env: dict[str, str], fence: Fence) -> tuple[str | None, str | None]:
    """``(path, reason)``: where the sandbox would find ``argv0``, or why not (a file under a
    folder the fence hides, or under a scratch folder it replaces, is not there for the
    agent)."""
    if "/" not in argv0:
        found = shutil.which(argv0, mode=os.F_OK, path=env.get("PATH", os.defpath))
    elif not argv0.startswith("/"):
        return None, "relative"
    else:
        found = argv0 if Path(argv0).is_file() else None
    if found is None or _hidden(Path(found), fence):
        return None, "missing"
    return (found, None) if os.access(found, os.X_OK) else (None, "not-executable")


def _hidden(path: Path, fence: Fence) -> bool:
    real = Path(os.path.realpath(path))
    for folder in (*fence.hidden, *fence.scratch):
        with contextlib.suppress(OSError):
            if real.is_relative_to(Path(os.path.realpath(folder))):
                return True
    return False


async def probe_template(
    template: RunnerTemplate,
    *,
    sandbox: ProcessSandbox,
    fence: Fence,
    env: dict[str, str],
    cwd: Path,
    limit_s: float = PROBE_S,
) -> TemplateProbe:
    """One template's probe (module docstring); never raises for what the executable did."""
    argv0 = template.command[0]
    path, reason = _resolve(argv0, env, fence)
    if path is None:
        return TemplateProbe.of(template.label, argv0, found=False, reason=reason)  # type: ignore[arg-type]  # reason is set whenever path is None
    try:
        process = await spawn([argv0, "--version"], sandbox=sandbox, fence=fence, cwd=cwd, env=env)
    except (FileNotFoundError, NotADirectoryError):
        return TemplateProbe.of(template.label, argv0, found=False, reason="missing")
    except PermissionError:
        return TemplateProbe.of(template.label, argv0, found=False, reason="not-executable")
    except Refused:
        return TemplateProbe.of(template.label, argv0, found=True, reason="failed")
    assert process.stdout is not None
    stream = process.stdout
    output = bytearray()
    deadline = asyncio.get_running_loop().time() + limit_s

    async def read() -> None:  # until its end, or enough: the rest is never read
        while len(output) < PROBE_OUTPUT_BYTES and (chunk := await stream.read(1024)):
            output.extend(chunk)

    timed_out = False
    try:
        await asyncio.wait_for(read(), limit_s)
        if len(output) < PROBE_OUTPUT_BYTES:  # it ended its output: let it exit
            left = max(deadline - asyncio.get_running_loop().time(), 0.05)
            await asyncio.wait_for(process.wait(), left)
    except TimeoutError:
        timed_out = True
    finally:
        if process.returncode is None:  # too slow, or too much output: its group goes
            await stop_tree(process, step_s=0.2)
        with contextlib.suppress(TimeoutError, OSError):  # to its end: the pipe closes
            await asyncio.wait_for(stream.read(), 2)
    words = probe_words(bytes(output))
    if timed_out:
        return TemplateProbe.of(template.label, argv0, found=True, reason="timed-out")
    if process.returncode != 0 and len(output) < PROBE_OUTPUT_BYTES:
        return TemplateProbe.of(template.label, argv0, found=True, version=words, reason="failed")
    return TemplateProbe.of(template.label, argv0, found=True, version=words)


async def probe_pin(home: Home, pin: RunnerPin, sandbox: ProcessSandbox) -> list[TemplateProbe]:
    """Every template of ``pin``, probed one after the other (module docstring)."""
    env = runner_env(pin, home.exec_home, dict(os.environ))
    home.exec_home.mkdir(parents=True, exist_ok=True)
    fence = probe_fence(home)
    return [
        await probe_template(t, sandbox=sandbox, fence=fence, env=env, cwd=home.exec_home)
        for t in pin.templates()
    ]


PROBE_AGAIN_S = 600.0
"""Seconds after which a pin's probes are made again though it did not change (a CLI
installed or upgraded while the runner runs shows within ten minutes)."""


class Probes:
    """The runner's probes, per pin: made before the pin's first announce, then made again — in
    the background, the last ones announced meanwhile, so a slow ``--version`` never delays an
    announce past the liveness window — when that pin's templates or environment change
    (``runners.toml`` edited while the runner runs) or they are older than
    :data:`PROBE_AGAIN_S`."""

    def __init__(self, home: Home, sandbox: ProcessSandbox) -> None:
        self.home, self.sandbox = home, sandbox
        self._made: dict[str, tuple[str, float, list[TemplateProbe]]] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        """The probes being made again, by runner id."""

    async def _make(self, pin: RunnerPin, key: str) -> None:
        made = await probe_pin(self.home, pin, self.sandbox)
        self._made[pin.runner_id] = (key, time.monotonic(), made)

    async def of(self, pin: RunnerPin) -> list[TemplateProbe]:
        """The probes of ``pin``'s templates (module docstring)."""
        key = pin.model_dump_json(include={"command", "template", "env"})
        made = self._made.get(pin.runner_id)
        if made is None:
            await self._make(pin, key)
            return self._made[pin.runner_id][2]
        stale = made[0] != key or time.monotonic() - made[1] > PROBE_AGAIN_S
        if stale and pin.runner_id not in self.pending:
            task = asyncio.ensure_future(self._make(pin, key))
            self.pending[pin.runner_id] = task
            task.add_done_callback(lambda _: self.pending.pop(pin.runner_id, None))
        return made[2]
