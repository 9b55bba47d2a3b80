"""``voicebox-env runner``: the runner daemon of an environment root (seed 004 §5; issue 30).

The runner is the **only** spawner of agents (§5d): neither the server nor the browser host
ever starts one. ``voicebox-env runner --root DIR`` reads ``DIR/runners.toml``
(:mod:`core.missions.runner_pins`; a malformed file stops it at start with the line and the
reason, and nothing runs), then for each pinned runner, at least every :data:`ANNOUNCE_S`
seconds (a lone runner's announce is a long poll of :data:`WAIT_MS`):

- **announces** to the running ``voicebox-env serve`` of the same root over loopback (its
  address from HOST_DIR ``serve-endpoint.json``, which the server writes when it starts) with
  the shared secret of HOST_DIR ``runner-secret`` and the server's per-boot challenge
  (:mod:`server_host.runner_desk`); a ``challenge`` refusal (the server restarted) fetches the
  new one;
- takes the missions queued for it (``POST /api/runner/work``), at most ``max_parallel`` at a
  time, each in a worktree of its own (:mod:`server_host.worktrees`, one lock for creation
  and cleanup), and runs it (:func:`server_host.runner_run.run_mission`), posting its letters
  through the server's ``mission.post`` (``POST /api/runner/post``);
- cancels what the server says a person cancelled.

``voicebox-env runner status --root DIR`` lists the recorded worktrees (mission, project,
branch, disk use, idle time) — on the operator's terminal only; ``voicebox-env runner sweep
--root DIR [--idle-hours H]`` removes worktrees idle past ``H`` hours (72 by default) and those
of missions the server reports finished; branches are kept.

What the agent sees: :func:`mission_fence` — its worktree read-write, the system read-only,
the environment's whole root hidden (HOST_DIR with the runner's secret, every project, every
other worktree), the users' homes hidden, a private ``/tmp`` and ``HOME``; the network only
when the pin says ``network = true``. Its environment: :func:`server_host.runner_run.
runner_env`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from core.custody.provider_keys import key_value_refusal, variable_refusal
from core.json_bound import parse_json
from core.missions.runner_pins import PinsInvalid, RunnerPin
from core.refusals import Code, Refused
from core.secret import Secret
from server_host.harness_probe import Probes
from server_host.home import Home
from server_host.runner_desk import load_pins, read_runner_secret
from server_host.runner_run import (
    MissionJob,
    log_path,
    post_failed,
    run_mission,
    runner_env,
)
from server_host.sandbox import Fence, ProcessSandbox, Unavailable, detect
from server_host.worktrees import DEFAULT_IDLE_S, Worktrees

__all__ = [
    "ANNOUNCE_S",
    "ENDPOINT_FILE",
    "HttpPoster",
    "Runner",
    "mission_fence",
    "write_endpoint",
]

WAIT_MS = 1_000
"""How long one announce of a lone pinned runner waits for work at the server."""
CLEANUP_S = 60.0
"""Seconds between two cleanups (finished missions' worktrees, then the idle sweep)."""
ANNOUNCE_S = 1.0
"""Seconds between two announces of an idle runner (work is picked up with the next one)."""
POLL_S = 0.25
ENDPOINT_FILE = "serve-endpoint.json"
PROG = "voicebox-env runner"
_MISSION = re.compile(r"msn_[0-9a-f]{12}")
_PROJECT = re.compile(r"p_[0-9a-f]{16}")
AskFinished = Callable[[list[dict[str, str]]], Awaitable[list[str]]]
"""Which of these missions (``{project, missionId}``) are done with their worktree."""


def write_endpoint(host_dir: Path, url: str) -> None:
    """HOST_DIR ``serve-endpoint.json`` ``{url}`` (0600): where the runner finds its server."""
    tmp = host_dir / f".{ENDPOINT_FILE}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"url": url}, out)
    os.replace(tmp, host_dir / ENDPOINT_FILE)


def mission_fence(home: Home, worktree: Path, pin: RunnerPin) -> Fence:
    """What a mission's agent and gate see (module docstring)."""
    try:
        own: tuple[Path, ...] = (Path.home(),)
    except (RuntimeError, KeyError):
        own = ()
    return Fence(
        writable=(worktree,),
        hidden=(home.root, *own),
        scratch=(Path("/tmp"), home.exec_home),
        network=pin.network,
    )


class HttpPoster:
    """The server's runner desk over loopback HTTP, for one pinned runner."""

    def __init__(self, client: httpx.AsyncClient, runner: Runner, pin: RunnerPin) -> None:
        self.client, self.runner, self.pin = client, runner, pin

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for _ in range(2):
            creds = {
                "runnerId": self.pin.runner_id,
                "secret": self.runner.secret.reveal(),
                "challenge": self.runner.challenge,
            }
            answer = await self.client.post(path, json={**creds, **body})
            data = parse_json(answer.content, what="The server's answer")
            refusal = data.get("refusal") if isinstance(data, dict) else None
            if refusal is None:
                answered: dict[str, Any] = data
                return answered
            if "challenge" in str(refusal.get("message", "")).lower():
                await self.runner.refresh_challenge()
                continue
            raise Refused(Code(refusal["code"]), refusal.get("message"))
        raise Refused(Code.PERMISSION_DENIED, "The server refused this runner's challenge.")

    async def post(self, project: str, letter: dict[str, Any]) -> str:
        """See :class:`server_host.runner_run.Poster`."""
        answer = await self._call(
            "/api/runner/post", {"op": "mission.post", "project": project, "letter": letter}
        )
        return str(answer["letter_id"])

    async def scope(self, project: str, block_id: str) -> dict[str, int]:
        """See :class:`server_host.runner_run.Poster`."""
        answer = await self._call("/api/runner/scope", {"project": project, "blockId": block_id})
        return {k: int(answer[k]) for k in ("boundary_version", "contract_version")}

    async def finished(self, missions: list[dict[str, str]]) -> list[str]:
        """Which of ``missions`` (``{project, missionId}``) are done with their worktree."""
        answer = await self._call("/api/runner/finished", {"missions": missions})
        return list(answer["finished"])

    async def announce(
        self, running: list[str], wait_ms: int = 0, probes: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Announce this runner live with the missions it runs and what its probe found of
        its templates (issue 31); the desk's answer (its pin, queued work, cancels), waiting
        up to ``wait_ms`` for some when there is none."""
        body = {"running": running, "waitMs": wait_ms, "probes": probes or []}
        return await self._call("/api/runner/announce", body)


class Runner:
    """The daemon over one root (module docstring)."""

    def __init__(
        self, root: Path, sandbox: ProcessSandbox, url: str, *, idle_s: int = DEFAULT_IDLE_S
    ) -> None:
        self.home = Home(root)
        self.idle_s = idle_s
        self.sandbox = sandbox
        self.url = url
        self.worktrees = Worktrees(root, sandbox)
        self.secret = read_runner_secret(self.home.host_dir)
        self.challenge = ""
        self.client = httpx.AsyncClient(base_url=url, timeout=30, trust_env=False)
        self.running: dict[str, MissionJob] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.probes = Probes(self.home, sandbox)

    def _folders(self) -> dict[str, Path]:
        return {r["project"]: self.home.projects / r["project"] for r in self.worktrees.status()}

    async def refresh_challenge(self) -> None:
        """Fetch the server's per-boot challenge."""
        answer = await self.client.get("/api/runner/challenge")
        self.challenge = str(parse_json(answer.content, what="The server's answer")["challenge"])

    def _busy(self, runner_id: str) -> int:
        return sum(1 for j in self.running.values() if j.runner_id == runner_id)

    async def tick(self, pins: list[RunnerPin]) -> None:
        """One announce per pin; start what was queued for it; cancel what was cancelled."""
        for pin in pins:
            poster = HttpPoster(self.client, self, pin)
            mine = [m for m, j in self.running.items() if j.runner_id == pin.runner_id]
            wait = WAIT_MS if len(pins) == 1 else 0  # one pin: a long poll; several: polls
            probes = [p.model_dump(mode="json") for p in await self.probes.of(pin)]
            answer = await poster.announce(mine, wait, probes)
            for mission_id in answer.get("cancel", []):
                job = self.running.get(mission_id)
                if job is not None:
                    job.cancel.set()
            room = pin.max_parallel - self._busy(pin.runner_id)
            for raw in answer.get("work", [])[: max(room, 0)]:
                self._start(pin, poster, raw)

    def _start(self, pin: RunnerPin, poster: HttpPoster, raw: dict[str, Any]) -> None:
        skip = ("cancel", "keys")
        fields = {k: raw[k] for k in MissionJob.__dataclass_fields__ if k in raw and k not in skip}
        job = MissionJob(
            **{**fields, "runner_id": pin.runner_id, "keys": _keys(raw.pop("keys", {}))}
        )
        if not isinstance(job.template, str | None):
            job.template = ""  # type: ignore[unreachable]  # the server's JSON may hold any type; names no template: the run fails saying so
        # both name folders here: only the shapes the server issues, whatever it sent
        if not _MISSION.fullmatch(job.mission_id) or not _PROJECT.fullmatch(job.project):
            _say(f"{PROG}: a queued mission with a malformed id was dropped")
            return
        if job.project not in pin.projects or job.mission_id in self.running:
            return
        self.running[job.mission_id] = job
        task = asyncio.ensure_future(self._run(pin, poster, job))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, pin: RunnerPin, poster: HttpPoster, job: MissionJob) -> None:
        try:
            folder = self.home.projects / job.project
            try:
                worktree = await self.worktrees.create(job.mission_id, job.project, folder)
            except Refused as refusal:
                _say(f"mission {job.mission_id}: no worktree ({refusal.body().message})")
                await post_failed(job, pin, poster, "no git worktree could be made for it")
                return
            outcome = await run_mission(
                job,
                pin,
                worktree,
                poster=poster,
                sandbox=self.sandbox,
                fence=mission_fence(self.home, worktree.path, pin),
                log_path=log_path(self.home.root, job.mission_id),
                env=runner_env(pin, self.home.exec_home, dict(os.environ)),
            )
            await self.worktrees.touch(job.mission_id)
            _say(f"mission {job.mission_id}: {outcome.phase} {outcome.reason or ''}".rstrip())
        finally:
            self.running.pop(job.mission_id, None)

    async def cleanup(
        self, ask: Callable[[list[dict[str, str]]], Awaitable[list[str]]]
    ) -> list[str]:
        """Remove the worktrees of missions ``ask`` says are finished (landed, archived, or
        failed and dismissed; never one running now); their branches stay. The ids removed."""
        rows = [r for r in self.worktrees.status() if r["mission_id"] not in self.running]
        if not rows:
            return []
        refs = [{"project": r["project"], "missionId": r["mission_id"]} for r in rows]
        done = set(await ask(refs))
        removed = []
        for row in rows:
            if row["mission_id"] in done:
                folder = self.home.projects / row["project"]
                if await self.worktrees.remove(row["mission_id"], folder):
                    removed.append(row["mission_id"])
        return removed

    async def serve(self, stop: asyncio.Event) -> None:
        """Announce and run until ``stop`` is set; then cancel what runs and wait for it."""
        next_cleanup = 0.0
        while not stop.is_set():
            pause = ANNOUNCE_S  # after a failure, or with several pins: a plain poll
            try:
                pins = load_pins(self.home.root).runner
                if not self.challenge:
                    await self.refresh_challenge()
                await self.tick(pins)
                if pins and time.monotonic() >= next_cleanup:
                    next_cleanup = time.monotonic() + CLEANUP_S
                    for pin in pins:
                        await self.cleanup(HttpPoster(self.client, self, pin).finished)
                    await self.worktrees.sweep(self._folders(), idle_s=self.idle_s)
                if len(pins) == 1:
                    pause = 0.0  # its announce was a long poll already
            except (httpx.HTTPError, Refused, PinsInvalid, ValueError) as exc:
                _say(f"{PROG}: {type(exc).__name__}: {_short(exc)}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(pause, POLL_S) if self.running else pause)
        for job in self.running.values():
            job.cancel.set()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=10)
        await self.client.aclose()


def _short(exc: BaseException) -> str:
    if isinstance(exc, Refused):
        return exc.body().message
    return str(exc)[:200]


def _keys(raw: object) -> dict[str, Secret]:
    """The provider keys a queued job carries (issue 31), as :class:`Secret` s: only the
    variables and values core allows (``core.custody.provider_keys``); anything else dropped —
    the server checked them already, this is the runner not trusting its input."""
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Secret] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not isinstance(value, str):
            continue
        secret = Secret(value)
        if variable_refusal(name) is None and key_value_refusal(secret) is None:
            out[name] = secret
    return out


def _say(text: str) -> None:
    print(text, flush=True)


def check_pins(root: Path) -> list[RunnerPin]:
    """The pins, or exit 2 with ``runners.toml, line N: reason`` (nothing runs)."""
    try:
        return load_pins(root).runner
    except PinsInvalid as bad:
        raise SystemExit(f"{PROG}: refused to start: {bad}") from None


async def run_daemon(
    root: Path, *, server: str | None, unsandboxed: bool, idle_hours: float = 72.0
) -> int:
    """``voicebox-env runner --root DIR``: check the pins, then serve until SIGINT/SIGTERM."""
    import signal

    home = Home(root)
    if not home.host_dir.is_dir():
        raise SystemExit(f"{PROG}: no environment under {root}: run voicebox-env init")
    pins = check_pins(root)
    sandbox = detect(opt_out=unsandboxed)
    if isinstance(sandbox, Unavailable):
        raise SystemExit(f"{PROG}: refused to start: {sandbox.refusal().body().message}")
    url = server
    if url is None:
        try:
            url = parse_json((home.host_dir / ENDPOINT_FILE).read_bytes())["url"]
        except (OSError, Refused, KeyError, TypeError):
            raise SystemExit(
                f"{PROG}: no running voicebox-env serve for {root} (start it first, or name it "
                "with --server)"
            ) from None
    runner = Runner(root, sandbox, url, idle_s=int(idle_hours * 3600))
    names = ", ".join(f"{p.runner_id} ({p.capability})" for p in pins) or "none pinned"
    _say(f"{PROG}: runners {names}; sandbox {sandbox.name}; server {url}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await runner.serve(stop)
    return 0


async def run_status(root: Path) -> int:
    """``voicebox-env runner status``: the recorded worktrees, one JSON line each."""
    check_pins(root)
    for row in Worktrees(root).status():
        _say(json.dumps(row))
    return 0


async def run_sweep(root: Path, idle_hours: float) -> int:
    """``voicebox-env runner sweep``: remove worktrees idle past ``idle_hours`` (a running
    daemon does the same every :data:`CLEANUP_S`, after removing finished missions')."""
    home = Home(root)
    trees = Worktrees(root)
    folders = {row["project"]: home.projects / row["project"] for row in trees.status()}
    removed = await trees.sweep(folders, idle_s=int(idle_hours * 3600))
    _say(json.dumps({"removed": removed}))
    return 0
