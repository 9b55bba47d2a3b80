"""``python.connect``, ``.warm``, ``.run``, ``.eval``, ``.input``, ``.stop``: the person's
Python, run in a second runtime that holds nothing (issue 32; docs/python.md).

A run, in this order: the project's files are walked and chosen within the input limits
(:func:`core.tools.python_run.choose_inputs`) and read by the host; a file run's
``requirements.txt`` / ``pyproject.toml`` decide which packages of the runtime's offline set
load first, and what they name that the set does not cover is said in the output
(:func:`core.tools.python_requirements.plan_loads`); the runtime
(:class:`core.ports.PythonRuntime`) gets copies, runs the file as ``__main__`` (or the console's
input in its kept namespace), and its stdout/stderr reach the page as
:class:`PythonOutput` events while it runs; its report becomes the change list
(:func:`core.tools.python_run.change_list`); every change is decided
(:func:`core.tools.python_run.decide_change`) and the admitted ones are applied by the host through
``file.write`` (a ``local-write`` receipt naming ``python.run``, an audit record each) or
``file.delete`` (into the project trash: nothing lost). The answer lists every change, applied
or refused with its code.

``python.run`` is not a write operation itself: the run does not hold the host's write lock
(code may run for minutes); each write it asks for goes through every gate of its own —
SAFE mode refuses them (``read-only-mode``), listed.

Why a run ended stopped is said (``stopped_by``, issue 33 item 2): the person's Stop, another
tab connecting its own runtime frame (the runtime is one per host, in the tab that last
connected it), or the tab holding the frame closing (the worker learns it by that tab's
lock and calls :func:`release_frame`).

Refusals: ``sandbox-unavailable`` (no runtime connected, it could not start, another run is
going), ``project-not-found``, the path rule's codes and ``file-not-found`` for the file to
run.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field

from core.host.context import HostServices
from core.host.file_ops import DeleteArgs, WriteArgs, walk
from core.host.operations import Call, Outcome
from core.model import Contract, NoArgs
from core.paths import parse_path
from core.ports import ProjectFiles, PythonRuntime
from core.projects.many_reads import read_many
from core.refusals import Code, Refused
from core.tools.python_requirements import REQUIREMENT_FILES, parse_offline_set, plan_loads
from core.tools.python_run import (
    MAX_INPUT_FILE_BYTES,
    RUN_LIMIT_S,
    AppliedChange,
    RunJob,
    RunReport,
    change_list,
    choose_inputs,
    decide_change,
)
from core.vocabulary import ProjectId

__all__ = [
    "PythonCompleteArgs",
    "PythonCompletions",
    "PythonConnectArgs",
    "PythonConnected",
    "PythonEvalArgs",
    "PythonInputArgs",
    "PythonInputTaken",
    "PythonInputWanted",
    "PythonOutput",
    "PythonRunArgs",
    "PythonRunResult",
    "PythonStopped",
    "StoppedBy",
    "release_frame",
]

StoppedBy = Literal["stop", "another-tab", "tab-closed"]
"""Why a run ended ``stopped``: the person's Stop (or Stop pressed in any tab); another tab
connected its own runtime frame, which took Python from this one; the tab whose frame ran it
closed."""

RUN_ID_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
MAX_CODE_CHARS = 100_000


class PythonRunArgs(Contract):
    """``python.run``: run project file ``path`` as ``__main__``. ``run`` is the page's name
    for this run, carried by each :class:`PythonOutput` event."""

    project: ProjectId
    path: str = Field(max_length=5000, description="The .py file to run, project-relative.")
    run: str = Field(pattern=RUN_ID_PATTERN, description="Names this run's output events.")


class PythonEvalArgs(Contract):
    """``python.eval``: run ``code`` (one console input, possibly several lines) in the
    console's namespace, which the runtime keeps until it restarts."""

    project: ProjectId
    code: str = Field(max_length=MAX_CODE_CHARS)
    run: str = Field(pattern=RUN_ID_PATTERN, description="Names this input's output events.")


class PythonOutput(Contract):
    """What the host tells the page while a run goes: ``text`` written to ``stream`` by run
    ``run`` (shown as text, never as markup)."""

    type: Literal["python.output"] = "python.output"
    run: str
    stream: Literal["stdout", "stderr"]
    text: str


class PythonInputWanted(Contract):
    """What the host tells the page when run ``run`` calls ``input(prompt)``: the page shows an
    input box and answers with ``python.input``."""

    type: Literal["python.input"] = "python.input"
    run: str
    prompt: str


class PythonInputArgs(Contract):
    """``python.input``: the line the person typed for the ``input()`` the run waits on."""

    text: str = Field(max_length=65_536)


class PythonInputTaken(Contract):
    """``delivered``: a run was waiting and got the line."""

    delivered: bool


class PythonCompleteArgs(Contract):
    """``python.complete``: the console's text up to the cursor's word."""

    text: str = Field(max_length=1000)


class PythonCompletions(Contract):
    """What ``text`` may complete to (at most 200; none while a run goes)."""

    matches: list[str]


class PythonRunResult(Contract):
    """How a run ended and what it changed.

    ``exit_status``: 0, 1 after an uncaught exception, a ``SystemExit`` code; ``None`` when
    it was ``stopped`` (the Stop button, another tab taking Python, the frame's tab closing:
    ``stopped_by``) or ``timed_out`` — both end by restarting the runtime, whose console state
    is then gone (``restarted``). ``duration_ms`` as the runtime measured
    it. ``copied``: files copied in; ``left_out_note``: the sentence about files the input
    limits left out. ``output_dropped``: output bytes past the cap. ``changes``: every change,
    applied or refused.
    """

    run: str
    exit_status: int | None
    duration_ms: int
    stopped: bool = False
    stopped_by: StoppedBy | None = Field(
        default=None, description="Why the run was stopped (issue 33 item 2); null if it was not."
    )
    timed_out: bool = False
    restarted: bool = False
    copied: int
    left_out_note: str | None = None
    output_dropped: int = 0
    changes: list[AppliedChange]


class PythonConnectArgs(Contract):
    """``python.connect``: ``take`` false is a frame made ahead of need (a ``.py`` file opened):
    it is connected only when no runtime is — another tab's runtime, running or holding its
    console's variables, is never taken by a tab that only opened a file (issue 33 item 2).
    A Run connects with ``take`` true."""

    take: bool = True


class PythonConnected(Contract):
    """``connected``: the host now talks to the Python runtime's frame over the port it was
    handed (false: ``take`` was false and a runtime was already connected — the port was
    dropped, the page drops its frame). ``frame``: the connected frame's number
    (``python.connect`` only; issue 33 item 2), which the worker gives :func:`release_frame`
    when the tab holding the frame closes."""

    connected: bool
    frame: int | None = None


class PythonStopped(Contract):
    """``stopped``: a run was going and was ended (the runtime restarts)."""

    stopped: bool


async def python_connect(call: Call[PythonConnectArgs]) -> Outcome:
    """Refuses ``sandbox-unavailable`` where this host cannot run a Python runtime. With
    ``take`` (a Run) a new port replaces the old one, and the old one is stopped (issue 33
    item 2: another tab connected its own frame, or the old frame's tab is gone): a run left in
    it ends ``stopped`` at once rather than waiting on a frame no one hears until its deadline.
    Without ``take`` (a file opened) a connected runtime is kept and the port dropped:
    ``connected`` false."""
    services = call.ctx.services
    if services.connect_python is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "This host cannot run a Python runtime.")
    old = services.python
    if old is not None and not call.args.take:
        return Outcome(PythonConnected(connected=False, frame=services.python_frame))
    services.python = services.connect_python(call.attachment)
    services.python_frame += 1
    frame = services.python_frame
    if old is not None:
        await old.stop()
    return Outcome(PythonConnected(connected=True, frame=frame))


def release_frame(services: HostServices, frame: int) -> bool:
    """The tab holding runtime frame number ``frame`` (:attr:`PythonConnected.frame`) is gone
    (issue 33 item 2; the worker learns it by the tab's Web Lock, docs/architecture.md). If
    that frame is still the connected runtime, it is dropped — the next run is refused
    ``sandbox-unavailable`` until a tab connects its own — and the run in progress there ends
    ``stopped`` (``stopped_by`` ``"tab-closed"``) now instead of at its deadline. A frame
    already replaced by a later connect is left alone. ``True`` if a run was going."""
    runtime = services.python
    if runtime is None or services.python_frame != frame:
        return False
    services.python = None
    return runtime.abandon()


async def python_complete(call: Call[PythonCompleteArgs]) -> Outcome:
    """Tab completion in the console. Refuses ``sandbox-unavailable`` when no runtime is
    connected."""
    runtime = call.ctx.services.python
    if runtime is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "No Python runtime is connected.")
    return Outcome(PythonCompletions(matches=await runtime.complete(call.args.text)))


async def python_input(call: Call[PythonInputArgs]) -> Outcome:
    """Hand the typed line to the run waiting in ``input()``. Refuses ``sandbox-unavailable``
    when no runtime is connected."""
    runtime = call.ctx.services.python
    if runtime is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "No Python runtime is connected.")
    return Outcome(PythonInputTaken(delivered=runtime.answer(call.args.text)))


async def python_warm(call: Call[NoArgs]) -> Outcome:
    """Start the runtime in the background (the page asks when a ``.py`` file opens); answers
    at once. Refuses ``sandbox-unavailable`` when no runtime is connected."""
    runtime = call.ctx.services.python
    if runtime is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "No Python runtime is connected.")
    runtime.warm()
    return Outcome(PythonConnected(connected=True))


async def python_stop(call: Call[NoArgs]) -> Outcome:
    """End the run in progress (terminate and restart the runtime). Refuses
    ``sandbox-unavailable`` when no runtime is connected."""
    runtime = call.ctx.services.python
    if runtime is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "No Python runtime is connected.")
    return Outcome(PythonStopped(stopped=await runtime.stop()))


async def python_run(call: Call[PythonRunArgs]) -> Outcome:
    """See the module docstring."""
    args = call.args
    target = parse_path(args.path)
    return await _run(call, args.project, args.run, mode="file", path=str(target))


async def python_eval(call: Call[PythonEvalArgs]) -> Outcome:
    """See the module docstring; the console's input instead of a file."""
    args = call.args
    return await _run(call, args.project, args.run, mode="eval", code=args.code)


async def _run(
    call: Call[PythonRunArgs] | Call[PythonEvalArgs],
    project: str,
    run: str,
    *,
    mode: Literal["file", "eval"],
    path: str | None = None,
    code: str | None = None,
) -> Outcome:
    ctx = call.ctx
    runtime = ctx.services.python
    if runtime is None:
        raise Refused(Code.SANDBOX_UNAVAILABLE, "No Python runtime is connected to this host.")
    files = (await ctx.catalog.open(project)).files
    if path is not None:
        found = await files.stat(parse_path(path))
        if found is None:
            raise Refused(Code.FILE_NOT_FOUND, f"Nothing is at '{path}'.", field="path")
        if found.kind == "dir":
            raise Refused(Code.IS_A_DIRECTORY, f"'{path}' is a folder.", field="path")
    inputs = choose_inputs([(w.path, w.size) for w in await walk(files, ())], run=path)
    given = await _copy_in(files, inputs.paths)
    events = ctx.services.events

    def output(stream: str, text: str) -> None:
        if events is None:
            return
        if stream == "prompt":
            events.post(PythonInputWanted(run=run, prompt=text))
        elif stream in ("stdout", "stderr"):
            events.post(PythonOutput(run=run, stream=stream, text=text))  # type: ignore[arg-type]  # narrowed by the `in` above

    load: tuple[str, ...] = ()
    if mode == "file" and any(name in given for name in REQUIREMENT_FILES):
        # the project's declared dependencies the offline set covers load first (issue 32)
        shipped = await runtime.offline_set()
        plan = plan_loads(given, parse_offline_set(shipped) if shipped is not None else {})
        load = plan.load
        for message in plan.messages:
            output("stderr", message + "\n")
    job = RunJob(mode=mode, files=list(given.items()), path=path, code=code, load=load)
    report = await runtime.run(job, output, limit_s=RUN_LIMIT_S)
    assert isinstance(report, RunReport)
    stopped_by = _stopped_by(report, runtime, ctx.services.python)
    applied = await _apply(call, project, given, report)
    result = PythonRunResult(
        run=run,
        exit_status=report.exit_status,
        duration_ms=report.duration_ms,
        stopped=report.stopped,
        stopped_by=stopped_by,
        timed_out=report.timed_out,
        restarted=report.stopped or report.timed_out,
        copied=len(given),
        left_out_note=inputs.note,
        output_dropped=report.output_dropped,
        changes=applied,
    )
    return Outcome(
        result,
        project=project,
        details={
            "mode": mode,
            "path": path,
            "exit_status": report.exit_status,
            "stopped": report.stopped,
            "stopped_by": stopped_by,
            "changes": len(applied),
            "applied": sum(1 for a in applied if a.applied),
        },
    )


async def _copy_in(files: ProjectFiles, paths: tuple[str, ...]) -> dict[str, bytes]:
    """The bytes of the chosen inputs ``paths`` (project-relative), path → bytes, read in one
    call where the adapter reads many (:func:`core.projects.many_reads.read_many`; issue 34: a
    run of a 2,000-file project read them one call each, 5.5–7.8 s of its ≈ 9 s). A file the
    batch could not give (gone, or grown past :data:`~core.tools.python_run.MAX_INPUT_FILE_BYTES`
    since the walk) is read alone, as before: its refusal (``file-not-found``…) ends the run
    before anything runs, so a run never writes over a file it was not shown."""
    parsed = [parse_path(p) for p in paths]
    read = await read_many(files, parsed, MAX_INPUT_FILE_BYTES)
    return {
        p: data if isinstance(data, bytes) else await files.read(at)
        for p, at, data in zip(paths, parsed, read, strict=True)
    }


def _stopped_by(
    report: RunReport, ran_in: PythonRuntime, now: PythonRuntime | None
) -> StoppedBy | None:
    """Why ``report`` ended stopped: the runtime it ran in is still the connected one (a
    Stop), was replaced by another tab's (:func:`python_connect`) or dropped with its closed
    tab (:func:`release_frame`)."""
    if not report.stopped:
        return None
    if now is ran_in:
        return "stop"
    return "tab-closed" if now is None else "another-tab"


async def _apply(
    call: Call[PythonRunArgs] | Call[PythonEvalArgs],
    project: str,
    given: dict[str, bytes],
    report: RunReport,
) -> list[AppliedChange]:
    """Decide and apply every change of ``report``; each refusal is kept in the list."""
    out: list[AppliedChange] = []
    written = 0
    for index, change in enumerate(change_list(given, report)):
        try:
            target = decide_change(change, index=index, written_bytes=written)
            if change.data is None:
                ran = await call.host.run(
                    "file.delete",
                    DeleteArgs(project=project, path=str(target)),
                    origin=call.origin,
                    actor=call.actor,
                )
                trash_id = getattr(ran.result, "trash_id", None)
                out.append(
                    AppliedChange(
                        path=change.path, action=change.action, applied=True, trash_id=trash_id
                    )
                )
                continue
            ran = await call.host.run(
                "file.write",
                WriteArgs(project=project, path=str(target)),
                body=change.data,
                origin=call.origin,
                actor=call.actor,
                receipt_as="python.run",
            )
            written += len(change.data)
            receipt = ran.receipt
            out.append(
                AppliedChange(
                    path=change.path,
                    action=change.action,
                    applied=True,
                    size=len(change.data),
                    sha256=hashlib.sha256(change.data).hexdigest(),
                    store_version=None if receipt is None else receipt.store_version,
                    receipt=receipt,
                )
            )
        except Refused as refused:
            out.append(
                AppliedChange(
                    path=change.path,
                    action=change.action,
                    applied=False,
                    code=refused.code.value,
                    message=refused.message,
                )
            )
    return out
