"""The server's side of its runners: announce, liveness, their letters (seed 004 §5a, §5d;
issue 30).

A runner (``voicebox-env runner``, :mod:`server_host.runner`) is a process of its own beside
``voicebox-env serve``; this desk is where the server meets it. Every request a runner makes
carries its **credentials**: its ``runner_id``, the shared secret of HOST_DIR ``runner-secret``
(0600, made by the server when it starts; the runner reads it there, nothing else ever does)
and the server's **per-boot challenge** (``GET /api/runner/challenge``; a new one at every
start of the server). They are judged in this order, each refusal ``permission-denied``
(403), audited with the reason's name (``peer``, ``unpinned``, ``secret``, ``challenge``) and
never with the secret:

1. the peer is a loopback address (a runner on another machine is never a runner here);
2. ``runner_id`` is pinned in ``runners.toml`` as it is now (:mod:`core.missions.runner_pins`;
   a malformed file pins nobody);
3. the secret is HOST_DIR's (constant-time);
4. the challenge is this boot's (an announce recorded before a restart is stale).

What an announce proves is **liveness only**: the answer and everything after it take the
runner's capability, projects and commands from its pin, never from what it says. What a live
runner may then do is exactly two things:

- ``post``: one operation, ``mission.post`` — any other (``blocks.import_receipt``…) is refused
  ``permission-denied`` — of a letter :func:`core.missions.runner_pins.check_runner_letter`
  allows (seat ``hand``, the pin's ``runner_id`` and capability, a run's phases, no receipt),
  through the server's own pipeline (:meth:`core.host.pipeline.Host.run`, actor
  ``runner:<id>``; the head CAS and every letter rule apply there);
- ``scope``: read a block's scope from a fresh snapshot of the project's store.

:meth:`RunnerDesk.runners` is what the identity answer shows: each pinned runner's id,
capability, whether it is live (announced within :data:`LIVE_MS` on this boot) and busy (the
missions it said it runs) — never a secret, a command or a path.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import ipaddress
import json
import os
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from core.custody.provider_keys import key_value_refusal, variable_refusal
from core.custody.remote import MAX_ANSWER_BYTES
from core.host.mission_ops import DeliverArgs, MissionPostArgs
from core.missions.blocks import CONTRACT_VERSION, load_store
from core.missions.harness import TemplateProbe, pin_probes
from core.missions.letters import SCHEMA, parse_letter, sha12
from core.missions.remote_runs import MERGEABLE
from core.missions.runner_pins import (
    LABEL_PATTERN,
    PINS_FILE,
    PinsInvalid,
    RunnerPin,
    RunnerPins,
    check_runner_letter,
    parse_pins,
    worktree_finished,
)
from core.model import Contract
from core.policy import require_writable
from core.refusals import Code, Refused
from core.secret import Secret
from core.time import instant_iso
from server_host.runner_land import LandBody, Landing
from server_host.runner_review import DiffBody, MergeBody, branch_diff, merge_branch
from server_host.runner_run import log_path, log_record
from server_host.worktrees import git_fence, require_git_project, worktree_area

__all__ = [
    "LIVE_MS",
    "LOG_ANSWER_BUDGET",
    "LOST_RUN",
    "SECRET_FILE",
    "AnnounceBody",
    "FinishedBody",
    "LandBody",
    "PostBody",
    "RunnerDesk",
    "ScopeBody",
    "SpawnBody",
    "ensure_runner_secret",
    "fit_log_text",
    "hide_paths",
    "load_pins",
    "read_runner_secret",
]

SECRET_FILE = "runner-secret"
MAX_WAIT_MS = 2_000
"""The longest an announce waits for work or a cancel before it is answered (a long poll)."""
LIVE_MS = 15_000
"""A runner is live while its last announce is younger than this (it announces every second,
every quarter second while it runs a mission)."""


def ensure_runner_secret(host_dir: Path) -> None:
    """Create HOST_DIR ``runner-secret`` (256 bits, 0600) when it is missing."""
    path = host_dir / SECRET_FILE
    if path.exists():
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(32))


def read_runner_secret(host_dir: Path) -> Secret:
    """The shared secret of HOST_DIR ``runner-secret``."""
    return Secret((host_dir / SECRET_FILE).read_text(encoding="utf-8").strip())


def load_pins(root: Path) -> RunnerPins:
    """``DIR/runners.toml`` as it is now (none pinned when absent); raises
    :class:`~core.missions.runner_pins.PinsInvalid` for a malformed file."""
    try:
        text = (root / PINS_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return RunnerPins()
    except UnicodeDecodeError:
        raise PinsInvalid(0, "not UTF-8 text") from None
    return parse_pins(text)


class Credentials(Contract):
    """What every runner request carries (module docstring)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    runner_id: str = Field(alias="runnerId", max_length=64)
    secret: Secret
    challenge: str = Field(max_length=128)


class AnnounceBody(Credentials):
    """``POST /api/runner/announce``: the credentials and the missions it runs now."""

    running: list[Annotated[str, Field(pattern=r"^msn_[0-9a-f]{12}$")]] = Field(
        default_factory=list, max_length=64
    )
    wait_ms: int = Field(default=0, alias="waitMs", ge=0, le=MAX_WAIT_MS)
    probes: list[TemplateProbe] = Field(default_factory=list, max_length=64)
    """What the runner found of its pin's templates (issue 31, the probe); the desk keeps
    those of labels the pin declares (:func:`core.missions.harness.pin_probes`)."""


class PostBody(Credentials):
    """``POST /api/runner/post``: the operation (only ``mission.post``), project, letter."""

    op: str = Field(default="mission.post", max_length=64)
    project: str = Field(max_length=64)
    letter: dict[str, Any]


class ScopeBody(Credentials):
    """``POST /api/runner/scope``: a block of a project."""

    project: str = Field(max_length=64)
    block_id: str = Field(alias="blockId", max_length=80)


class MissionRef(Contract):
    """A mission of a project."""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")


class FinishedBody(Credentials):
    """``POST /api/runner/finished``: the missions whose worktrees the runner holds."""

    missions: list[MissionRef] = Field(default_factory=list, max_length=1000)


CANCELLED = "cancelled by a person"
"""The reason of a cancelled mission's ``failed`` letter."""
LOST_RUN = "the run was lost: its runner stopped or restarted before the run ended"
"""The reason of the ``failed`` letter the server posts for a run its runner let go of while
the mission's head still said it was waiting for or under the runner."""
MAX_RUN_KEYS = 16
"""The most provider keys one spawn may carry."""
MAX_LOG_LINES = 10_000
MAX_LOG_ANSWER_BYTES = 1 << 20
"""The most bytes of a log's tail read for one answer."""
LOG_ANSWER_BUDGET = MAX_ANSWER_BYTES // 2
"""The most bytes a log answer's ``text`` takes *as JSON* (escapes counted): half of what the
browser host reads of any answer (:data:`core.custody.remote.MAX_ANSWER_BYTES`), so a log of
quotes, backslashes or control characters (each escaped to 2–6 bytes) never makes the answer
one the host refuses unread (the tryout's 1 MiB log did: the view stayed empty)."""


class LogBody(Contract):
    """``POST /api/environments/:key/missions/log`` (bearer): the last ``lines`` lines of a
    mission's log (at most :data:`MAX_LOG_LINES`, :data:`MAX_LOG_ANSWER_BYTES`)."""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")
    lines: int = Field(default=MAX_LOG_LINES, ge=1, le=MAX_LOG_LINES)


class EvidenceBody(Contract):
    """``POST /api/environments/:key/missions/evidence`` (bearer): is ``artifactHash`` the
    hash of a log this environment's runner kept for the mission?"""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")
    artifact_hash: str = Field(alias="artifactHash", pattern=r"^sha256:[0-9a-f]{64}$")


class SpawnBody(Contract):
    """``POST /api/environments/:key/missions/spawn`` (bearer): the project, the packet and
    the seq-1 ``judging`` letter that opens the mission (compose's draft), and ``keys``: the
    provider keys the browser host gives this run only (variable → value, issue 31; what
    ``core.custody.provider_keys.keys_for_run`` answered there)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    project: str = Field(max_length=64)
    packet: str = Field(min_length=1, max_length=200_000)
    letter: dict[str, Any]
    keys: dict[str, Secret] = Field(default_factory=dict, max_length=MAX_RUN_KEYS)
    template: str | None = Field(default=None, pattern=LABEL_PATTERN)
    """The label of the agent template the person made active (Settings → Harness, issue
    31); ``None``: the runner's first. Never in the letter."""


class BoardBody(Contract):
    """``POST /api/environments/:key/missions/board`` (bearer): a project's missions board."""

    project: str = Field(max_length=64)


MAX_BOARD_HEADS = 50


class CancelBody(Contract):
    """``POST /api/environments/:key/missions/cancel`` (bearer): the mission a person
    cancels."""

    project: str = Field(max_length=64)
    mission_id: str = Field(alias="missionId", pattern=r"^msn_[0-9a-f]{12}$")


@dataclass
class _Live:
    seen_ms: int
    busy: int


@dataclass
class _Queue:
    """One runner's queued jobs and the missions a person cancelled."""

    jobs: deque[dict[str, Any]] = field(default_factory=deque)
    cancels: set[str] = field(default_factory=set)
    running: set[str] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    projects: dict[str, str] = field(default_factory=dict)
    """The project of each mission handed out and not yet ended."""


def hide_paths(text: str, root: Path, mission_id: str) -> str:
    """``text`` (a mission's log) without the environment's paths: the mission's worktree
    (where its agent and gate run, so every traceback and ``pwd`` names it) written ``.``
    (``File "./app.py"``), anything else under the root ``<environment root>``; the resolved
    spelling of each too. Worktree paths never reach the browser (issue 30; seed 004 §1f) —
    even when the agent prints them."""
    worktree = worktree_area(root) / mission_id
    pairs = []
    for where, said in ((worktree, "."), (root, "<environment root>")):
        for spelling in {str(where), os.path.realpath(where)}:
            pairs.append((spelling, said))
    for spelling, said in pairs:
        if spelling in text:
            text = text.replace(spelling + "/", said + "/").replace(spelling, said)
    return text


def _json_bytes(text: str) -> int:
    """The bytes ``text`` takes as a JSON string (UTF-8, escapes, quotes), as the route sends it."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def fit_log_text(text: str, budget: int = LOG_ANSWER_BUDGET) -> str:
    """The last whole lines of ``text`` whose JSON string encoding (UTF-8, escapes counted)
    takes at most ``budget`` bytes; ``text`` itself when it fits. When even its last line does
    not fit, that line's last characters that do. Linear in ``len(text)``."""
    if _json_bytes(text) <= budget:
        return text
    lines = text.splitlines(keepends=True)
    total, keep = 2, 0
    while keep < len(lines) and total + _json_bytes(lines[-1 - keep]) - 2 <= budget:
        total += _json_bytes(lines[-1 - keep]) - 2
        keep += 1
    if keep:
        return "".join(lines[-keep:])
    last = lines[-1]
    low, high = 0, len(last)  # the fewest characters to drop from the front so the rest fits
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if _json_bytes(last[mid:]) <= budget else (mid + 1, high)
    return last[low:]


def _tail(path: Path) -> tuple[int, bytes]:
    """The size of the log at ``path`` and its last :data:`MAX_LOG_ANSWER_BYTES` bytes."""
    try:
        with open(path, "rb") as log:
            size = os.fstat(log.fileno()).st_size
            log.seek(max(0, size - MAX_LOG_ANSWER_BYTES))
            return size, log.read(MAX_LOG_ANSWER_BYTES)
    except FileNotFoundError:
        return 0, b""


def _run_group(mission_id: str) -> str:
    """The server's held-secrets group of one run's provider keys."""
    return f"run-keys:{mission_id}"


def _loopback(peer: str | None) -> bool:
    if not peer:
        return False
    try:
        return ipaddress.ip_address(peer.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class RunnerDesk(Landing):
    """The runners' desk of one server (module docstring). ``service`` is the
    :class:`~server_host.service.EnvironmentService` (its pipeline, audit, root)."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.root: Path = service.composed.home.root
        self.host_dir: Path = service.composed.home.host_dir
        ensure_runner_secret(self.host_dir)
        self.challenge = secrets.token_urlsafe(24)
        self.live: dict[str, _Live] = {}
        self.queues: dict[str, _Queue] = {}
        self.probes: dict[str, list[TemplateProbe]] = {}
        self.run_keys: dict[str, tuple[str, tuple[str, ...]]] = {}
        """mission → (its runner, the variable names of the keys held for its run): what
        ``voicebox-env keys`` lists (issue 31); names only, the values are in the job until
        it is handed out and in the run's redaction group until the run ends."""
        self._watching: asyncio.Task[None] | None = None

    def _now(self) -> int:
        return int(time.time() * 1000)

    def _seen(self, runner_id: str) -> int:
        seen = self.live.get(runner_id)
        return -(1 << 62) if seen is None else seen.seen_ms

    async def _refuse(self, op: str, why: str, message: str, runner_id: str | None) -> Refused:
        refusal = Refused(Code.PERMISSION_DENIED, message)
        shown = runner_id if runner_id and len(runner_id) <= 64 else None
        await self.service._refused(op, refusal, actor="runner", why=why, runner_id=shown)
        return refusal

    async def check(self, op: str, peer: str | None, creds: Credentials) -> RunnerPin:
        """The pin of a runner whose request passes rules 1–4 (module docstring); refuses
        ``permission-denied``, audited."""
        if not _loopback(peer):
            raise await self._refuse(
                op, "peer", "A runner announces over loopback only.", creds.runner_id
            )
        try:
            pin = load_pins(self.root).get(creds.runner_id)
        except PinsInvalid:
            pin = None
        if pin is None:
            raise await self._refuse(
                op, "unpinned", "That runner_id is not pinned in runners.toml.", creds.runner_id
            )
        expected = read_runner_secret(self.host_dir)
        if not hmac.compare_digest(
            creds.secret.reveal().encode("utf-8"), expected.reveal().encode("utf-8")
        ):
            raise await self._refuse(
                op, "secret", "The runner's secret is not this environment's.", creds.runner_id
            )
        if not hmac.compare_digest(creds.challenge.encode("utf-8"), self.challenge.encode()):
            raise await self._refuse(
                op,
                "challenge",
                "The challenge is stale: the server restarted; ask for a new one.",
                creds.runner_id,
            )
        return pin

    async def announce(self, peer: str | None, body: AnnounceBody) -> dict[str, Any]:
        """``POST /api/runner/announce``: record the runner live; answer its pin's
        ``{runnerId, capability, projects}`` (what the pin says, never widened), the ``work``
        it takes now (at most ``max_parallel`` running) and the running missions to
        ``cancel``. With nothing for it and ``waitMs`` given, the answer waits up to that
        long for a spawn or a cancel (a long poll: a spawn reaches an idle runner at once)."""
        pin = await self.check("runner.announce", peer, body)
        first = pin.runner_id not in self.live
        self.live[pin.runner_id] = _Live(self._now(), len(body.running))
        self.probes[pin.runner_id] = list(body.probes)
        if first and self.service.audit is not None:
            await self.service.audit.append(
                actor=f"runner:{pin.runner_id}",
                op="runner.announce",
                decision="admitted",
                rule="runner-live",
                details={"runner_id": pin.runner_id, "capability": pin.capability},
            )
        queue = self.queues.setdefault(pin.runner_id, _Queue())
        ended = queue.running - set(body.running)
        queue.running = set(body.running)
        self._forget_keys(ended)
        for mission_id in sorted(ended):
            project = queue.projects.pop(mission_id, None)
            if project is not None:
                await self._post_lost(pin, project, mission_id)
        work, cancel = self._hand_out(pin, queue, len(body.running))
        if not work and not cancel and body.wait_ms:
            queue.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(queue.wake.wait(), body.wait_ms / 1000)
            work, cancel = self._hand_out(pin, queue, len(body.running))
            self.live[pin.runner_id] = _Live(self._now(), len(body.running))
        return {
            "runnerId": pin.runner_id,
            "capability": pin.capability,
            "projects": pin.projects,
            "work": work,
            "cancel": cancel,
        }

    def _forget_keys(self, missions: set[str]) -> None:
        """The runs of ``missions`` ended: their keys leave the server's redaction (nothing
        else here holds them once handed out)."""
        for mission_id in missions:
            self.service.secrets.forget_group(_run_group(mission_id))
            self.run_keys.pop(mission_id, None)

    async def forget_gone(self) -> list[str]:
        """Forget the keys of every run whose runner is gone — its last announce older than
        :data:`LIVE_MS` (it died, or was stopped): the running missions' keys leave the
        redaction, and a queued job that carries keys leaves the queue with its keys, its
        mission posted ``failed`` "its runner went away before the run started" (a runner
        that comes back would run it without them). Keyless queued jobs stay queued. The
        missions whose keys were forgotten (issue 31: nothing of a key outlives its run)."""
        now = self._now()
        forgotten: list[str] = []
        for runner_id, queue in self.queues.items():
            if now - self._seen(runner_id) < LIVE_MS:
                continue
            held = {m for m in queue.running if m in self.run_keys}
            self._forget_keys(held)
            forgotten += sorted(held)
            for job in [j for j in queue.jobs if j.get("keys")]:
                queue.jobs.remove(job)
                job.pop("keys", None)
                self._forget_keys({job["mission_id"]})
                forgotten.append(job["mission_id"])
                pin = None
                with contextlib.suppress(PinsInvalid):
                    pin = load_pins(self.root).get(runner_id)
                if pin is not None:
                    with contextlib.suppress(Refused):
                        await self._post_cancelled(
                            pin,
                            job,
                            "server",
                            "its runner went away before the run started",
                        )
        return forgotten

    def _watch_keys(self) -> None:
        """Run :meth:`forget_gone` every few seconds while keys are held (a task of its own,
        ended when none are)."""
        if self._watching is not None and not self._watching.done():
            return

        async def watch() -> None:
            while self.run_keys:
                await asyncio.sleep(LIVE_MS / 3000)
                with contextlib.suppress(Exception):  # a failed post is retried next turn
                    await self.forget_gone()

        self._watching = asyncio.ensure_future(watch())

    async def held_keys(self) -> list[dict[str, Any]]:
        """What this server holds of provider keys right now, for ``voicebox-env keys``
        (issue 31): per mission ``{missionId, runnerId, state, variables}`` — ``state``
        ``queued`` (the desk holds the values) or ``running`` (handed to the runner; held for
        redaction until the run ends), ``variables`` the names. Never a value or fingerprint.
        Gone runners' keys are forgotten first (:meth:`forget_gone`)."""
        await self.forget_gone()
        queued = {j["mission_id"] for q in self.queues.values() for j in q.jobs}
        return [
            {
                "missionId": mission_id,
                "runnerId": runner_id,
                "state": "queued" if mission_id in queued else "running",
                "variables": list(names),
            }
            for mission_id, (runner_id, names) in sorted(self.run_keys.items())
        ]

    @staticmethod
    def _hand_out(
        pin: RunnerPin, queue: _Queue, busy: int
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """The jobs a runner running ``busy`` missions takes now (``max_parallel``), and the
        running missions a person cancelled."""
        work: list[dict[str, Any]] = []
        while queue.jobs and busy + len(work) < pin.max_parallel:
            job = queue.jobs.popleft()
            queue.running.add(job["mission_id"])
            queue.projects[job["mission_id"]] = job["project"]
            keys = job.pop("keys", {})  # the desk holds them no longer: they go to the runner
            work.append({**job, "keys": {name: v.reveal() for name, v in keys.items()}})
        cancel = sorted(queue.cancels & queue.running)
        queue.cancels -= set(cancel)
        return work, cancel

    # ---- spawn (the browser host's entry, with its bearer) --------------------------------

    async def by_bearer(
        self, op: str, env_key: str, bearer: Secret | None, raw: bytes
    ) -> dict[str, Any]:
        """``POST /api/environments/:key/missions/{spawn,cancel,log,evidence,board}``: the server's
        decision order for the bearer first (``unknown-environment`` … ``bearer-refused``),
        then :meth:`spawn`, :meth:`cancel`, :meth:`log` or :meth:`evidence`; refusals audited
        as ``mission.<op>``."""
        from server_host.service import parse_body

        name = f"mission.{op}"
        authorized = await self.service._authorize(name, env_key, bearer)
        actor = f"peer:{authorized.bearer_hash[:12]}"
        try:
            if op == "spawn":
                return await self.spawn(actor, parse_body(SpawnBody, raw))
            if op == "log":
                return await self.log(parse_body(LogBody, raw))
            if op == "evidence":
                return await self.evidence(parse_body(EvidenceBody, raw))
            if op == "board":
                return await self.board(parse_body(BoardBody, raw))
            return await self.cancel(actor, parse_body(CancelBody, raw))
        except Refused as refusal:
            await self.service._refused(name, refusal, actor=actor)
            raise

    async def spawn(self, actor: str, body: SpawnBody) -> dict[str, Any]:
        """Queue a mission for a live pinned runner (issue 30, spawn): every rule again, in
        this order — the letter's own contract and a seq-1 ``judging`` letter; a runner pinned
        for the letter's capability and this project (``permission-denied``: "no runner
        pinned"), live (``tool-disabled``: "not live"); the project a git repository with a
        commit (``args-invalid``, saying how); ``template`` (a label, optional) pinned by the
        chosen runner (``permission-denied``, issue 31 "Harness"); ``keys`` exactly the
        variables that template declares (``args-invalid`` naming both lists; names only, issue
        31); the job carries the template's label (never the letter); then the packet is
        delivered with the letter through ``mission.deliver`` (``packet_ref`` the packet's
        sha256, brain, block, head CAS) and the job queued. ``{missionId, runnerId, queued}``
        — no path."""
        for name, value in body.keys.items():
            refusal = variable_refusal(name) or key_value_refusal(value)
            if refusal is not None:
                raise Refused(refusal.code, refusal.message, field=f"keys.{refusal.field}")
        letter = parse_letter(body.letter)
        if letter.mission_seq != 1 or letter.phase != "judging":
            raise Refused(
                Code.LETTER_INVALID,
                "A spawn opens a mission: a seq-1 judging letter.",
                field="letter.phase",
            )
        try:
            pins = load_pins(self.root).runner
        except PinsInvalid:
            pins = []
        fitting = [
            p
            for p in pins
            if p.capability == letter.capability
            and body.project in p.projects
            and letter.runner_id in (None, p.runner_id)
        ]
        if not fitting:
            raise Refused(
                Code.PERMISSION_DENIED,
                f"No runner is pinned for {letter.capability} in this project; its operator "
                "pins one in runners.toml.",
            )
        fitting = [p for p in fitting if p.template_named(body.template) is not None]
        if not fitting:  # the person's harness choice is not (or no longer) pinned
            raise Refused(
                Code.PERMISSION_DENIED,
                f"No runner pinned for {letter.capability} here has the agent template "
                f"{body.template}; choose another in Settings → Harness.",
                field="template",
            )
        now = self._now()
        live = [p for p in fitting if now - self._seen(p.runner_id) < LIVE_MS]
        if not live:
            raise Refused(
                Code.TOOL_DISABLED,
                f"No runner pinned for {letter.capability} is live; its operator starts "
                "voicebox-env runner.",
            )
        pin = min(live, key=lambda p: len(self.queues.get(p.runner_id, _Queue()).jobs))
        template = pin.template_named(body.template)
        assert template is not None  # fitting holds only pins that have it
        if sorted(body.keys) != sorted(template.keys):  # exactly the harness's keys, no others
            raise Refused(
                Code.ARGS_INVALID,
                f"Runner {pin.runner_id} is given exactly the keys its template declares ("
                + (", ".join(template.keys) or "none")
                + "); the spawn carried "
                + (", ".join(sorted(body.keys)) or "none")
                + ".",
                field="keys",
            )
        folder = self.service.composed.roots.folder(body.project)
        require_git_project(folder, git_fence(self.service.sandbox, self.root, (folder,)))
        args = DeliverArgs(
            project=body.project,
            agent_id="operator",
            to=pin.runner_id,
            letter=body.letter,
            packet=body.packet,
        )
        ran = await self.service.composed.host.run("mission.deliver", args, actor=actor)
        posted = ran.result.posted
        queue = self.queues.setdefault(pin.runner_id, _Queue())
        if body.keys:  # redacted from everything this server says while the run is alive
            self.service.secrets.set_group(_run_group(letter.mission_id), body.keys.values())
            self.run_keys[letter.mission_id] = (pin.runner_id, tuple(sorted(body.keys)))
            self._watch_keys()
        queue.wake.set()
        queue.jobs.append(
            {
                "mission_id": letter.mission_id,
                "project": body.project,
                "block_id": letter.block_id,
                "brain_ref": letter.brain_ref,
                "packet": body.packet,
                "head_letter_id": posted.letter_id,
                "head_seq": 1,
                "started_at": letter.started_at,
                "packet_ref": letter.packet_ref,
                "template": template.label,
                "keys": dict(body.keys),
            }
        )
        return {"missionId": letter.mission_id, "runnerId": pin.runner_id, "queued": True}

    async def board(self, body: BoardBody) -> dict[str, Any]:
        """What the browser host needs to compose, spawn and follow missions in a project of
        this environment (issue 30, the browser side; it has no other read of a remote
        project's store or mailbox): ``{brainRef, skeletonId, storeVersion, blocks, git,
        heads}`` — ``blocks`` each ``{id, name, purpose, boundaryVersion}``, ``git`` whether
        the project is a git repository with a commit (spawn needs one), ``heads`` the
        :data:`MAX_BOARD_HEADS` most recently moved missions as ``mailbox.read kind=mission``
        answers them (letters hold no path). Refuses ``project-not-found``."""
        opened = await self.service.ctx.catalog.open(body.project)
        store = await load_store(opened.files)
        folder = self.service.composed.roots.folder(body.project)
        try:
            await asyncio.to_thread(
                require_git_project,
                folder,
                git_fence(self.service.sandbox, self.root, (folder,)),
            )
            is_git = True
        except Refused:
            is_git = False
        _, mailbox = await self.service.ctx.open_mailbox(body.project)
        states = await mailbox.missions()
        return {
            "brainRef": opened.manifest.name,
            "skeletonId": None if store is None else store.skeleton_id,
            "storeVersion": None if store is None else store.store_version,
            "blocks": []
            if store is None
            else [
                {
                    "id": b.id,
                    "name": b.name,
                    "purpose": b.purpose,
                    "boundaryVersion": b.boundary_version,
                }
                for b in store.blocks
            ],
            "git": is_git,
            "heads": [
                {
                    "missionId": s.head.letter.mission_id,
                    "letterId": s.head.letter_id,
                    "postedAt": s.head.at,
                    "letter": s.head.letter.wire(),
                }
                for s in states[:MAX_BOARD_HEADS]
            ],
        }

    async def _mission_of(self, project: str, mission_id: str) -> None:
        """Refuse ``args-invalid`` unless ``mission_id`` has a letter in ``project``."""
        _, mailbox = await self.service.ctx.open_mailbox(project)
        if await mailbox.head(mission_id) is None:
            raise Refused(Code.ARGS_INVALID, "That project has no mission by that id.")

    async def log(self, body: LogBody) -> dict[str, Any]:
        """A mission's log as its runner keeps it, for the page's live view (replay, then
        follow by asking again): ``{text, bytes, finished, truncated}`` — ``text`` the last
        ``lines`` lines (UTF-8, undecodable bytes replaced; colour codes left for the page to
        strip), ``bytes`` what the file holds now, ``finished`` once the run ended,
        ``truncated`` when the run printed more than the pin's output cap kept. No path."""
        await self._mission_of(body.project, body.mission_id)
        path = log_path(self.root, body.mission_id)
        size, tail = await asyncio.to_thread(_tail, path)
        text = tail.decode("utf-8", "replace")
        if size > MAX_LOG_ANSWER_BYTES:  # the first line read may be cut: drop it, unless it
            _, newline, rest = text.partition("\n")  # is the only one (an endless line)
            text = rest if newline else text
        lines = text.splitlines(keepends=True)[-body.lines :]
        record = log_record(path)
        # the runner redacted its keys as it wrote; this is a second wall
        text = self.service.secrets.redactor().redact("".join(lines))
        shown = fit_log_text(hide_paths(text, self.root, body.mission_id))
        return {
            "text": shown,
            "bytes": size,
            "finished": record is not None,
            "truncated": bool(record and record.get("bytes", 0) > record.get("kept", 0)),
        }

    async def evidence(self, body: EvidenceBody) -> dict[str, Any]:
        """``{checked}``: true when ``artifactHash`` is the sha256 of the whole log this
        environment's runner recorded for the mission (the card's "checked by the environment");
        false when it is only the poster's word."""
        await self._mission_of(body.project, body.mission_id)
        return {"checked": await self._kept_log_matches(body.mission_id, body.artifact_hash)}

    async def cancel(self, actor: str, body: CancelBody) -> dict[str, Any]:
        """A person cancels a mission: a running one is stopped by its runner (which posts
        ``failed`` "cancelled by a person"); a queued one leaves the queue and its ``failed``
        letter is posted here, in its pinned runner's name; one no live runner holds (its
        runner died, or this server restarted) whose head still waits for or is under a
        runner is failed here too (``unheld``), else nothing would ever stop it or say so. A
        mission whose runner already posted its end (:meth:`_ended`) is not cancelled.
        ``{missionId, cancelled: running | queued | unheld}``; ``args-invalid`` when there is
        no queued or running mission by that id."""
        pins = load_pins(self.root)
        for runner_id, queue in self.queues.items():
            if body.mission_id in queue.running:
                if await self._ended(body.project, body.mission_id):
                    break  # its runner posted the end; the next announce lets it go
                if self._now() - self._seen(runner_id) < LIVE_MS:
                    queue.cancels.add(body.mission_id)
                    queue.wake.set()
                    return {"missionId": body.mission_id, "cancelled": "running"}
                # its runner is not live: nothing would stop it or say so; the server does
                queue.running.discard(body.mission_id)
                queue.projects.pop(body.mission_id, None)
                queue.cancels.add(body.mission_id)  # should it come back still running it
                self._forget_keys({body.mission_id})
                break
            job = next((j for j in queue.jobs if j["mission_id"] == body.mission_id), None)
            if job is not None and job["project"] == body.project:
                queue.jobs.remove(job)
                job.pop("keys", None)
                self._forget_keys({body.mission_id})
                pin = load_pins(self.root).get(runner_id)
                if pin is not None:
                    await self._post_cancelled(pin, job, actor, "cancelled by a person")
                return {"missionId": body.mission_id, "cancelled": "queued"}
        # held by no live runner (its runner died, or this server restarted and forgot what it
        # handed out): a head still waiting for or under a runner is failed here
        with contextlib.suppress(Refused):
            _, mailbox = await self.service.ctx.open_mailbox(body.project)
            head = await mailbox.head(body.mission_id)
            pin = None if head is None else pins.get(head.letter.runner_id or "")
            if pin is None and head is not None and head.letter.runner_id is None:
                pin = next(  # spawned for "any live runner": a pin that could have taken it
                    (
                        p
                        for p in pins.runner
                        if p.capability == head.letter.capability and body.project in p.projects
                    ),
                    None,
                )
            if pin is not None and await self._post_lost(
                pin, body.project, body.mission_id, CANCELLED, actor
            ):
                return {"missionId": body.mission_id, "cancelled": "unheld"}
        raise Refused(Code.ARGS_INVALID, "No queued or running mission by that id.")

    async def _ended(self, project: str, mission_id: str) -> bool:
        """True when the mission's head has left the phases a runner works in (:data:`MOVING`):
        its runner posted ``merge_wait`` or ``failed`` and has no run of it left to stop, even
        while the mission stays in its running set until the runner's next announce."""
        from core.missions.remote_runs import MOVING

        with contextlib.suppress(Refused):
            _, mailbox = await self.service.ctx.open_mailbox(project)
            head = await mailbox.head(mission_id)
            return head is not None and head.letter.phase not in MOVING
        return False

    async def _post_lost(
        self,
        pin: RunnerPin,
        project: str,
        mission_id: str,
        gist: str = LOST_RUN,
        actor: str | None = None,
    ) -> bool:
        """A mission handed to ``pin``'s runner left the missions it announces running while
        its head still says it waits for or is under its runner (``judging``, ``executing``,
        ``gate``): the runner stopped or restarted mid-run, or its last post never arrived.
        Never silence (seed 004 §5c–d; issue 30): the server posts ``failed`` "the run was
        lost" in the pin's name, on the head (CAS), as it posts a cancelled queued mission's.
        A head that moved on (the runner posted ``merge_wait`` or ``failed`` before it let the
        mission go, as it always does) is left as it is. Audited ``runner.lost``. Also a
        person's Cancel of a mission no live runner holds (``gist`` "cancelled by a person",
        ``actor`` the person's): nothing else would ever stop it. True when it posted."""
        from core.missions.remote_runs import MOVING

        with contextlib.suppress(Refused):
            _, mailbox = await self.service.ctx.open_mailbox(project)
            head = await mailbox.head(mission_id)
            if head is None or head.letter.phase not in MOVING:
                return False
            was = head.letter
            letter = {
                "schema": SCHEMA,
                "mission_id": mission_id,
                "mission_seq": was.mission_seq + 1,
                "prev_letter_id": sha12(head.letter_id),
                "block_id": was.block_id,
                "brain_ref": was.brain_ref,
                "seat": was.seat,
                "runner_id": pin.runner_id,
                "capability": pin.capability,
                "phase": "failed",
                "verdict": {"decision": "REJECT", "gist": gist},
                "packet_ref": was.packet_ref,
                "started_at": was.started_at,
                "updated_at": max(instant_iso(self._now()), was.updated_at),
            }
            args = MissionPostArgs(project=project, agent_id=pin.runner_id, letter=letter)
            who = actor or f"runner:{pin.runner_id}"
            await self.service.composed.host.run("mission.post", args, actor=who)
            if self.service.audit is not None:
                await self.service.audit.append(
                    actor=who,
                    op="runner.lost",
                    decision="admitted",
                    rule="run-lost" if actor is None else "run-cancelled-unheld",
                    project=project,
                    details={"mission": mission_id, "phase": was.phase},
                )
            return True
        return False

    async def _post_cancelled(
        self, pin: RunnerPin, job: dict[str, Any], actor: str, reason: str
    ) -> None:
        now = instant_iso(self._now())
        letter = {
            "schema": SCHEMA,
            "mission_id": job["mission_id"],
            "mission_seq": 2,
            "prev_letter_id": sha12(job["head_letter_id"]),
            "block_id": job["block_id"],
            "brain_ref": job["brain_ref"],
            "seat": "hand",
            "runner_id": pin.runner_id,
            "capability": pin.capability,
            "phase": "failed",
            "verdict": {"decision": "REJECT", "gist": reason},
            "packet_ref": job["packet_ref"],
            "started_at": job["started_at"],
            "updated_at": max(now, job["started_at"]),
        }
        args = MissionPostArgs(project=job["project"], agent_id=pin.runner_id, letter=letter)
        await self.service.composed.host.run("mission.post", args, actor=actor)

    async def post(self, peer: str | None, body: PostBody) -> dict[str, Any]:
        """``POST /api/runner/post``: a run's letter through the server's ``mission.post``
        (module docstring). Answers the pipeline's post answer (``letter_id``, ``sha12``,
        ``mission_seq``, ``phase``, ``duplicate``)."""
        pin = await self.check("runner.post", peer, body)
        if body.op != "mission.post":
            raise await self._refuse(
                "runner.post",
                "operation",
                "A runner posts mission letters only; importing a receipt is a person's act.",
                pin.runner_id,
            )
        try:
            check_runner_letter(pin, body.project, body.letter)
        except Refused as refusal:
            await self.service._refused(
                "runner.post", refusal, actor=f"runner:{pin.runner_id}", why="letter"
            )
            raise
        args = MissionPostArgs(project=body.project, agent_id=pin.runner_id, letter=body.letter)
        ran = await self.service.composed.host.run(
            "mission.post", args, actor=f"runner:{pin.runner_id}"
        )
        posted: dict[str, Any] = ran.result.model_dump(mode="json")
        return posted

    async def finished(self, peer: str | None, body: FinishedBody) -> dict[str, list[str]]:
        """``POST /api/runner/finished``: which of ``missions`` (in the pin's projects) are
        done with their worktree (:func:`core.missions.runner_pins.worktree_finished`: head
        ``landed`` or ``archived``, or ``failed`` and dismissed in this host's tray state).
        ``{finished: [missionId]}``."""
        from core.missions.ui_state import load_ui_state

        pin = await self.check("runner.finished", peer, body)
        ui = await load_ui_state(self.service.state)
        done = []
        for ref in body.missions:
            if ref.project not in pin.projects:
                continue
            try:
                _, mailbox = await self.service.ctx.open_mailbox(ref.project)
            except Refused:
                continue
            head = await mailbox.head(ref.mission_id)
            if head is None:
                continue
            dismissal = ui.for_project(ref.project).get(ref.mission_id)
            dismissed = None if dismissal is None else dismissal.letter_id
            if worktree_finished(head.letter.phase, head.letter_id, dismissed):
                done.append(ref.mission_id)
        return {"finished": done}

    async def scope(self, peer: str | None, body: ScopeBody) -> dict[str, int]:
        """``POST /api/runner/scope``: ``{boundary_version, contract_version}`` of the block
        in a fresh read of the project's store (a block the store lacks: version 1)."""
        pin = await self.check("runner.scope", peer, body)
        if body.project not in pin.projects:
            raise await self._refuse(
                "runner.scope",
                "project",
                "That project is not in the runner's allowlist.",
                pin.runner_id,
            )
        opened = await self.service.ctx.catalog.open(body.project)
        store = await load_store(opened.files)
        block = None if store is None else store.block(body.block_id)
        boundary = 1 if block is None else block.boundary_version
        return {"boundary_version": boundary, "contract_version": CONTRACT_VERSION}

    def runners(self) -> list[dict[str, Any]]:
        """Each pinned runner: ``{runnerId, capability, live, busy, keys, templates}`` (module
        docstring; ``keys`` the variable names its first template needs, never a value;
        ``templates`` each template's label, executable name, keys and what the runner's probe
        found, :func:`core.missions.harness.pin_probes` — no path); an empty list while
        ``runners.toml`` is malformed."""
        try:
            pins = load_pins(self.root)
        except PinsInvalid:
            return []
        now = self._now()
        rows = []
        for pin in pins.runner:
            seen = self.live.get(pin.runner_id)
            live = seen is not None and now - seen.seen_ms < LIVE_MS
            rows.append(
                {
                    "runnerId": pin.runner_id,
                    "capability": pin.capability,
                    "live": live,
                    "busy": seen.busy if live and seen is not None else 0,
                    "keys": list(pin.templates()[0].keys),
                    "templates": pin_probes(pin, self.probes.get(pin.runner_id, [])),
                }
            )
        return rows

    # ---- review and merge of a mission's branch (issue 30, review) ------------------------

    async def review(
        self, op: str, env_key: str, bearer: Secret | None, raw: bytes
    ) -> dict[str, Any]:
        """``POST /api/environments/:key/missions/{diff,merge}``: the bearer first (as
        :meth:`by_bearer`), then :meth:`diff` or :meth:`merge`; refusals audited as
        ``mission.<op>``."""
        from server_host.service import parse_body

        name = f"mission.{op}"
        authorized = await self.service._authorize(name, env_key, bearer)
        actor = f"peer:{authorized.bearer_hash[:12]}"
        try:
            if op == "diff":
                return await self.diff(parse_body(DiffBody, raw))
            return await self.merge(actor, parse_body(MergeBody, raw))
        except Refused as refusal:
            await self.service._refused(name, refusal, actor=actor)
            raise

    @functools.cached_property
    def _merge_lock(self) -> asyncio.Lock:
        """Merges on this server run one at a time."""
        return asyncio.Lock()

    def _project_fence(self, project: str) -> tuple[Path, Any]:
        folder = self.service.composed.roots.folder(project)
        return folder, git_fence(self.service.sandbox, self.root, (folder,))

    async def diff(self, body: DiffBody) -> dict[str, Any]:
        """A mission's branch change against its base
        (:func:`server_host.runner_review.branch_diff`; no path but the project's own)."""
        await self._mission_of(body.project, body.mission_id)
        folder, fence = self._project_fence(body.project)
        return await asyncio.to_thread(branch_diff, folder, fence, body.mission_id)

    async def merge(self, actor: str, body: MergeBody) -> dict[str, Any]:
        """A person merges a ``merge_wait`` or ``landed`` mission's branch into the project's
        checked-out branch (:func:`server_host.runner_review.merge_branch`). Refuses
        ``read-only-mode`` (SAFE mode), ``invalid_transition`` (another phase),
        ``args-invalid`` (no such mission, a conflict). Audited ``mission.merge``."""
        policy = await self.service.composed.reload_policy()
        require_writable(policy)  # SAFE mode: the one check
        _, mailbox = await self.service.ctx.open_mailbox(body.project)
        head = await mailbox.head(body.mission_id)
        if head is None:
            raise Refused(Code.ARGS_INVALID, "That project has no mission by that id.")
        if head.letter.phase not in MERGEABLE:
            raise Refused(
                Code.INVALID_TRANSITION,
                f"Only a mission waiting to merge or landed may be merged; this one is "
                f"{head.letter.phase}.",
                field="missionId",
            )
        folder, fence = self._project_fence(body.project)
        async with self._merge_lock:
            merged = await asyncio.to_thread(merge_branch, folder, fence, body.mission_id)
        if self.service.audit is not None:
            with contextlib.suppress(Exception):
                await self.service.audit.append(
                    actor=actor,
                    op="mission.merge",
                    decision="admitted",
                    rule="mission-merged",
                    project=body.project,
                    details={
                        "mission": body.mission_id,
                        "branch": merged["branch"],
                        "into": merged["into"][:200],
                        "how": merged["how"],
                        "head": merged["head"],
                    },
                )
        return {"missionId": body.mission_id, **merged}
