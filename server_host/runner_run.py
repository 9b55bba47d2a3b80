"""One mission's run: agent, gate, letters (seed 004 §5c–d; issue 30, the run).

:func:`run_mission` is what a runner does with one queued mission, in its worktree
(:mod:`server_host.worktrees`):

1. write the packet to ``<worktree>/.vbx-packet.md`` (the ``{packet_file}`` placeholder);
2. post ``executing`` and run the command of the pin's agent template the job names (the
   person's choice in Settings → Harness; the first when none) in the sandbox
   (:mod:`server_host.sandbox`: the worktree read-write, the environment's root — HOST_DIR,
   every project, every other worktree — hidden; a scrubbed environment plus only the
   variables the pin names);
3. commit what the agent changed on the mission's branch (the runner's own git, outside the
   sandbox, on the admin folder recorded when the worktree was made — never what the
   worktree's ``.git`` file says now — with no hook and no fsmonitor; the packet file is left
   out);
4. post ``gate`` and run the pin's ``gate_command`` the same way;
5. on gate exit 0 post ``merge_wait`` with the gate (command, exit 0, sha256 of the gate's
   output) and a **complete** ``receipt_candidate``: the block, type ``test``, the scope read
   from a fresh snapshot of the project's store (the poster's :meth:`Poster.scope`), evidence
   with the sha256 of the full log and the captured execution window.

Anything else — the agent exits non-zero or cannot start, a time limit passes, a cancel, the
gate exits non-zero — posts ``failed`` with the reason; never silence, and never ``landed``
(only a person's receipt import lands a mission). Each letter extends the head the previous
one made (the head CAS): a ``stale_head`` refusal means someone else moved the mission, and
the run stops there.

Stopping a process (:func:`stop_tree`): ``SIGINT`` to its whole process group, ``SIGTERM``
2 s later, ``SIGKILL`` 2 s after that, so the whole tree is gone within 5 s (in bubblewrap its
pid namespace dies with its first process, whatever the children did with their sessions).

The full log (agent's then gate's output) is hashed as it streams; the first
``output_cap_bytes`` are kept in ``DIR/runner-logs/<mission_id>.log`` (0600), the rest is
counted, hashed and dropped.

**Provider keys for one run** (issue 31): a job may carry ``keys`` (variable → value, given by
the browser host with the spawn). They are put into the **agent's** environment only — never
its argv, never a file, never the gate's environment — and every value is redacted from the log
as it streams (:class:`core.redaction.StreamRedactor`: raw, base64 at each alignment, hex,
percent- and JSON-escaped, and a value split across two writes), before it is hashed or kept:
the log's sha256 is that of the redacted log. When the run ends, however it ends, the job's
``keys`` are cleared.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shlex
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.json_bound import parse_json
from core.missions.letters import SCHEMA, absolute_path_in, sha12
from core.missions.runner_pins import RunnerPin, expand_argv
from core.redaction import Redactor, StreamRedactor
from core.refusals import Refused
from core.secret import Secret
from core.time import instant_iso
from server_host.commands import SAFE_PATH
from server_host.sandbox import Fence, ProcessSandbox, spawn
from server_host.worktrees import Worktree

__all__ = [
    "PACKET_FILE",
    "MissionJob",
    "Poster",
    "RunOutcome",
    "log_path",
    "log_record",
    "post_failed",
    "run_mission",
    "runner_env",
    "stop_tree",
]

PACKET_FILE = ".vbx-packet.md"
STEP_S = 2.0
"""The wait between SIGINT, SIGTERM and SIGKILL."""


class Poster(Protocol):
    """Where a run's letters go: the server's ``mission.post`` for this runner's pin."""

    async def post(self, project: str, letter: dict[str, Any]) -> str:
        """Post ``letter`` in ``project``; the letter's content id. Raises the refusal."""
        ...

    async def scope(self, project: str, block_id: str) -> dict[str, int]:
        """``{boundary_version, contract_version}`` of ``block_id`` in a fresh snapshot of the
        project's store."""
        ...


@dataclass
class MissionJob:
    """A queued mission: its ids, the project's display name, the packet, and the head its
    first letter extends (the seq-1 ``judging`` letter's content id)."""

    mission_id: str
    project: str
    block_id: str
    brain_ref: str
    packet: str
    head_letter_id: str
    head_seq: int
    started_at: str
    packet_ref: str | None = None
    runner_id: str = ""
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    template: str | None = None
    """The label of the pin's agent template to run (Settings → Harness, issue 31; ``None``:
    the first)."""
    keys: dict[str, Secret] = field(default_factory=dict, repr=False)
    """Provider keys for this run only (module docstring): variable → value; cleared when the
    run ends."""


@dataclass
class RunOutcome:
    """How the run ended: its last phase, the reason when ``failed``, the log's sha256."""

    phase: str
    reason: str | None
    log_sha256: str
    letters: list[str]


def runner_env(pin: RunnerPin, home: Path, source: dict[str, str]) -> dict[str, str]:
    """The whole environment an agent or gate gets: ``PATH`` (fixed), ``HOME`` (a private
    scratch), ``LANG``/``LC_ALL`` ``C.UTF-8``, ``TZ=UTC``, and the variables the pin names, taken
    from ``source`` (the runner's environment) when set there — nothing else."""
    env = {"PATH": SAFE_PATH, "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env["TZ"] = "UTC"
    for name in pin.env:
        if name in source:
            env[name] = source[name]
    return env


def _group_alive(pgid: int) -> bool:
    """True while a process of group ``pgid`` runs (zombies waiting for their reaper do not
    count: bubblewrap's own child lingers as one for a moment after the command ended)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and fields[2] == str(pgid):
            return True
    return False


async def stop_tree(process: asyncio.subprocess.Process, *, step_s: float = STEP_S) -> None:
    """SIGINT → SIGTERM after ``step_s`` → SIGKILL after ``step_s`` more, to the process's whole
    group, returning as soon as the group is gone (module docstring)."""
    pgid = process.pid
    for sig, wait in ((signal.SIGINT, step_s), (signal.SIGTERM, step_s), (signal.SIGKILL, 1.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process.returncode is not None and not _group_alive(pgid):
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 0.05)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), 1.0)


class _Log:
    """The mission's log: everything hashed, the first ``cap`` bytes kept on disk, written
    through as it comes (a reader follows it live); when the run ends, its record
    ``<log>.json`` ``{sha256, bytes, kept}`` (:func:`log_record`). With a ``redactor``, every
    chunk is redacted before it is hashed or kept (a value split across chunks included:
    :meth:`end_part` lets out what was held back when one process's output ends)."""

    def __init__(self, path: Path, cap: int, redactor: Redactor | None = None) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.path = path
        self.out = os.fdopen(fd, "wb", buffering=0)
        self.cap = cap
        self.kept = 0
        self.total = 0
        self.digest = hashlib.sha256()
        self.stream = StreamRedactor(redactor) if redactor else None

    def take(self, chunk: bytes, part: hashlib._Hash | None = None) -> None:
        if self.stream is not None:
            chunk = self.stream.feed(chunk)
        self._keep(chunk, part)

    def end_part(self, part: hashlib._Hash | None = None) -> None:
        """One process's output ended: what the redactor held back goes out now."""
        if self.stream is not None:
            self._keep(self.stream.flush(), part)

    def _keep(self, chunk: bytes, part: hashlib._Hash | None) -> None:
        self.total += len(chunk)
        self.digest.update(chunk)
        if part is not None:
            part.update(chunk)
        room = self.cap - self.kept
        if room > 0:
            self.out.write(chunk[:room])
            self.kept += min(room, len(chunk))

    def close(self) -> None:
        if self.out.closed:
            return
        self.end_part()
        self.out.close()
        record = {"sha256": "sha256:" + self.digest.hexdigest(), "bytes": self.total}
        record["kept"] = self.kept
        tmp = self.path.with_name(self.path.name + ".json.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(tmp, self.path.with_name(self.path.name + ".json"))


def log_path(root: Path, mission_id: str) -> Path:
    """Where the runner keeps ``mission_id``'s log: ``DIR/runner-logs/<mission_id>.log``."""
    return root / "runner-logs" / f"{mission_id}.log"


def log_record(log_path: Path) -> dict[str, Any] | None:
    """The record of a finished run's log (``{sha256, bytes, kept}``), or ``None`` while it
    runs or when there is none."""
    try:
        data = parse_json(log_path.with_name(log_path.name + ".json").read_bytes())
    except (OSError, Refused):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class _Ran:
    exit_status: int | None
    timed_out: bool
    cancelled: bool
    digest: str
    started_error: str | None = None


async def _run(
    argv: list[str],
    *,
    worktree: Path,
    env: dict[str, str],
    limit_s: int,
    log: _Log,
    cancel: asyncio.Event,
    sandbox: ProcessSandbox,
    fence: Fence,
) -> _Ran:
    part = hashlib.sha256()
    try:
        process = await spawn(argv, sandbox=sandbox, fence=fence, cwd=worktree, env=env)
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return _Ran(None, False, False, "sha256:" + part.hexdigest(), "could not start")
    assert process.stdout is not None
    stream = process.stdout

    async def drain() -> None:
        while chunk := await stream.read(1 << 16):
            log.take(chunk, part)

    reader = asyncio.ensure_future(drain())
    waiter = asyncio.ensure_future(process.wait())
    cancelled = asyncio.ensure_future(cancel.wait())
    timed_out = False
    try:
        done, _ = await asyncio.wait(
            {waiter, cancelled}, timeout=limit_s, return_when=asyncio.FIRST_COMPLETED
        )
        if waiter not in done:
            timed_out = cancelled not in done
            await stop_tree(process)
        elif _group_alive(process.pid):  # what it left behind in its group goes too
            await stop_tree(process, step_s=0.5)
    finally:
        was_cancelled = cancelled.done() and not cancelled.cancelled() and not timed_out
        cancelled.cancel()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader, 2)
        reader.cancel()
        log.end_part(part)
    return _Ran(process.returncode, timed_out, was_cancelled, "sha256:" + part.hexdigest())


def _letter_command(argv: list[str]) -> str:
    """The gate command as a letter carries it: verbatim, except that an absolute program or
    argument is named by its last part (letters name no host path, seed 004 §1f)."""
    shown = [os.path.basename(a) if absolute_path_in(a) and a.startswith("/") else a for a in argv]
    text = shlex.join(shown)
    return text if not absolute_path_in(text) else shlex.join(Path(a).name for a in argv)


class _Chain:
    """The letters of one run, each extending the head the last one made."""

    def __init__(self, job: MissionJob, pin: RunnerPin, poster: Poster) -> None:
        self.job, self.pin, self.poster = job, pin, poster
        self.head_id, self.seq = job.head_letter_id, job.head_seq
        self.posted: list[str] = []

    async def post(self, phase: str, **extra: Any) -> None:
        job = self.job
        letter = {
            "schema": SCHEMA,
            "mission_id": job.mission_id,
            "mission_seq": self.seq + 1,
            "prev_letter_id": sha12(self.head_id),
            "block_id": job.block_id,
            "brain_ref": job.brain_ref,
            "seat": "hand",
            "runner_id": self.pin.runner_id,
            "capability": self.pin.capability,
            "phase": phase,
            "packet_ref": job.packet_ref,
            "synthetic": False,
            "started_at": job.started_at,
            "updated_at": instant_iso(int(time.time() * 1000)),
            **extra,
        }
        self.head_id = await self.poster.post(job.project, letter)
        self.seq += 1
        self.posted.append(phase)


async def post_failed(job: MissionJob, pin: RunnerPin, poster: Poster, reason: str) -> None:
    """Post ``failed`` with ``reason`` on ``job``'s head, when the run cannot even start (no
    worktree): never silence. A refusal (the mission moved) is left as it is."""
    with contextlib.suppress(Refused):
        await _Chain(job, pin, poster).post(
            "failed", verdict={"decision": "REJECT", "gist": reason}
        )


async def run_mission(
    job: MissionJob,
    pin: RunnerPin,
    worktree: Worktree,
    *,
    poster: Poster,
    sandbox: ProcessSandbox,
    fence: Fence,
    log_path: Path,
    env: dict[str, str],
) -> RunOutcome:
    """Run ``job`` with ``pin`` in ``worktree`` (module docstring); ``fence`` is what the agent
    and gate see, ``env`` their whole environment (:func:`runner_env`), to which the agent's
    adds ``job.keys`` (the gate's never does). Never raises for what the agent or gate did; a
    refusal of a letter (``stale_head``: the mission moved) ends the run with that letter
    unposted. ``job.keys`` is cleared when it returns or raises."""
    try:
        return await _run_mission(
            job,
            pin,
            worktree,
            poster=poster,
            sandbox=sandbox,
            fence=fence,
            log_path=log_path,
            env=env,
        )
    finally:
        job.keys.clear()


async def _run_mission(
    job: MissionJob,
    pin: RunnerPin,
    worktree: Worktree,
    *,
    poster: Poster,
    sandbox: ProcessSandbox,
    fence: Fence,
    log_path: Path,
    env: dict[str, str],
) -> RunOutcome:
    chain = _Chain(job, pin, poster)
    redactor = Redactor(job.keys.values()) if job.keys else None
    log = _Log(log_path, pin.output_cap_bytes, redactor)
    agent_env = {**env, **{name: value.reveal() for name, value in job.keys.items()}}
    packet_file = worktree.path / PACKET_FILE
    packet_file.write_text(job.packet, encoding="utf-8")
    fill = {
        "packet_file": str(packet_file),
        "worktree": str(worktree.path),
        "mission_id": job.mission_id,
    }
    window_start = int(time.time() * 1000)

    async def fail(reason: str, gate: dict[str, Any] | None = None) -> RunOutcome:
        with contextlib.suppress(Refused):
            verdict = {"decision": "REJECT", "gist": reason}
            await chain.post("failed", verdict=verdict, gate=gate)
        log.close()
        return RunOutcome("failed", reason, "sha256:" + log.digest.hexdigest(), chain.posted)

    def why(ran: _Ran, what: str, limit_s: int) -> str | None:
        if ran.cancelled:
            return "cancelled by a person"
        if ran.timed_out:
            return f"the {what} passed its time limit of {limit_s} s"
        if ran.started_error:
            return f"the {what} could not start (program not found or not executable)"
        if ran.exit_status != 0:
            return f"the {what} exited with status {ran.exit_status}"
        return None

    try:
        await chain.post("executing")
    except Refused as refusal:
        log.close()
        return RunOutcome("judging", refusal.body().message, "", chain.posted)
    template = pin.template_named(job.template)
    if template is None:  # runners.toml changed between the spawn and the run
        return await fail(f"this runner no longer pins the agent template {job.template}")
    agent = await _run(
        expand_argv(template.command, **fill),
        worktree=worktree.path,
        env=agent_env,
        limit_s=pin.agent_time_limit_s,
        log=log,
        cancel=job.cancel,
        sandbox=sandbox,
        fence=fence,
    )
    reason = why(agent, "agent", pin.agent_time_limit_s)
    if reason is not None:
        return await fail(reason)
    if not await asyncio.to_thread(_commit, worktree, job.mission_id):
        return await fail("the runner could not commit the agent's change")
    try:
        await chain.post("gate")
    except Refused as refusal:
        log.close()
        return RunOutcome("executing", refusal.body().message, "", chain.posted)
    gate = await _run(
        expand_argv(pin.gate_command, **fill),
        worktree=worktree.path,
        env=env,
        limit_s=pin.gate_time_limit_s,
        log=log,
        cancel=job.cancel,
        sandbox=sandbox,
        fence=fence,
    )
    reason = why(gate, "gate", pin.gate_time_limit_s)
    gate_command = _letter_command(expand_argv(pin.gate_command, **fill))
    if reason is not None:
        ran_gate = None
        if gate.exit_status is not None and not gate.cancelled and not gate.timed_out:
            ran_gate = {
                "command": gate_command,
                "exit_status": gate.exit_status,
                "artifact_hash": gate.digest,
            }
        return await fail(reason, ran_gate)
    window_end = max(int(time.time() * 1000), window_start + 1)
    log.close()
    log_hash = "sha256:" + log.digest.hexdigest()
    try:
        scope = await poster.scope(job.project, job.block_id)
        await chain.post(
            "merge_wait",
            gate={
                "command": gate_command,
                "exit_status": 0,
                "artifact_hash": gate.digest,
            },
            receipt_candidate={
                "block_id": job.block_id,
                "type": "test",
                "scope": scope,
                "evidence": {
                    "artifact_hash": log_hash,
                    "evidence_refs": [f"runner-log:{job.mission_id}"],
                    "window": {
                        "started_at": instant_iso(window_start),
                        "finished_at": instant_iso(window_end),
                    },
                },
            },
        )
    except Refused as refusal:
        return RunOutcome("gate", refusal.body().message, log_hash, chain.posted)
    return RunOutcome("merge_wait", None, log_hash, chain.posted)


def _commit(worktree: Worktree, mission_id: str) -> bool:
    """Commit what the agent changed on the mission's branch (the packet file left out, and
    any path git cannot index — a nested repository without a commit — skipped), with
    :meth:`Worktree.git` (no hook, no configuration of the agent's making runs). False when
    the commit itself failed."""
    worktree.git("add", "-A", "--ignore-errors", "--", ".", f":(exclude){PACKET_FILE}", check=False)
    done = worktree.git(
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "-m",
        f"mission {mission_id}",
        check=False,
    )
    return done.returncode == 0
