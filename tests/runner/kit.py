"""An environment root with a git project, pins and an opened mission, for the runner tests.

:func:`environment` makes a real root on disk (``init_home``), composes the real server
(:class:`~server_host.service.EnvironmentService`, with the machine's bubblewrap sandbox),
creates a project with one block through the real pipeline, makes the project a git repository
with a first commit and a gate script (``check.py``: exit 0 when the agent wrote
``AGENT.md``), and writes ``runners.toml`` pinning ``build-1`` to run the scripted agent
(:mod:`tests.runner.agent`) in the mode asked. :meth:`Env.open_mission` posts the seq-1
``judging`` letter as the page would; :class:`DeskPoster` is the runner's side of the real desk
(:mod:`server_host.runner_desk`), called in process from a loopback peer.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.missions.posting import packet_ref
from core.missions.runner_pins import RunnerPin
from core.time import instant_iso
from server_host.home import Home, compose, init_home
from server_host.runner import mission_fence
from server_host.runner_desk import AnnounceBody, PostBody, ScopeBody, read_runner_secret
from server_host.runner_run import MissionJob, RunOutcome, run_mission, runner_env
from server_host.sandbox import detect
from server_host.service import EnvironmentService
from server_host.worktrees import Worktrees, git

AGENT = Path(__file__).with_name("agent.py")
BRAIN = "demo"
GATE = "import pathlib, sys\nsys.exit(0 if pathlib.Path('AGENT.md').exists() else 1)\n"


def pins_toml(
    project: str,
    *,
    mode: str = "ok",
    arg: str = "",
    gate: str = "check.py",
    agent_s: int = 30,
    gate_s: int = 30,
    cap: int = 1 << 20,
    runner_id: str = "build-1",
    capability: str = "build-runner",
    env: tuple[str, ...] = (),
    keys: tuple[str, ...] = (),
) -> str:
    """A ``runners.toml`` pinning ``runner_id`` to the scripted agent in ``mode``."""
    command = ["python3", str(AGENT), mode, "{packet_file}"] + ([arg] if arg else [])
    return (
        "# the runner tests' pins\n"
        "[[runner]]\n"
        f'runner_id = "{runner_id}"\n'
        f'capability = "{capability}"\n'
        f'projects = ["{project}"]\n'
        f"command = {json.dumps(command)}\n"
        f'gate_command = ["python3", "{gate}"]\n'
        f"agent_time_limit_s = {agent_s}\n"
        f"gate_time_limit_s = {gate_s}\n"
        f"output_cap_bytes = {cap}\n"
        f"env = {json.dumps(list(env))}\n"
        f"keys = {json.dumps(list(keys))}\n"
    )


class DeskPoster:
    """The runner's poster over the real desk, in process, from 127.0.0.1."""

    def __init__(self, env: Env, runner_id: str = "build-1") -> None:
        self.env, self.runner_id = env, runner_id
        self.letters: list[dict[str, Any]] = []

    def creds(self) -> dict[str, Any]:
        return {
            "runnerId": self.runner_id,
            "secret": read_runner_secret(self.env.home.host_dir).reveal(),
            "challenge": self.env.service.runners.challenge,
        }

    async def post(self, project: str, letter: dict[str, Any]) -> str:
        body = PostBody.model_validate({**self.creds(), "project": project, "letter": letter})
        answer = await self.env.service.runners.post("127.0.0.1", body)
        self.letters.append(letter)
        return str(answer["letter_id"])

    async def scope(self, project: str, block_id: str) -> dict[str, int]:
        body = ScopeBody.model_validate({**self.creds(), "project": project, "blockId": block_id})
        return await self.env.service.runners.scope("127.0.0.1", body)

    async def announce(self, **over: Any) -> dict[str, Any]:
        """Announce ``build-1`` (``over`` changes the body: ``running``, credentials)."""
        body = AnnounceBody.model_validate({**self.creds(), **over})
        return await self.env.service.runners.announce("127.0.0.1", body)


@dataclass
class Env:
    """A composed environment root with one git project (module docstring)."""

    root: Path
    home: Home
    service: EnvironmentService
    project: str
    block: str
    folder: Path

    async def call(self, op: str, origin: str | None = None, **args: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"v": 1, "id": secrets.token_hex(4), "op": op, "args": args}
        if origin is not None:
            msg["origin"] = origin
        answer, _ = await self.service.composed.host.handle(json.dumps(msg))
        return json.loads(answer)

    def pin(self, **kw: Any) -> RunnerPin:
        """Write ``runners.toml`` (:func:`pins_toml`) and return its pin."""
        (self.root / "runners.toml").write_text(pins_toml(self.project, **kw), encoding="utf-8")
        from server_host.runner_desk import load_pins

        return load_pins(self.root).runner[0]

    async def open_mission(self) -> MissionJob:
        """Post a seq-1 ``judging`` letter as the page would; the job a runner gets."""
        mission_id = "msn_" + secrets.token_hex(6)
        now = instant_iso(self.service.ctx.clock.now_ms())
        packet = f"# Mission {mission_id}\n\nAdd AGENT.md.\n"
        letter = {
            "schema": "m1nd-mission-letter-v0",
            "mission_id": mission_id,
            "mission_seq": 1,
            "prev_letter_id": None,
            "block_id": self.block,
            "brain_ref": BRAIN,
            "seat": "oracle",
            "runner_id": "build-1",
            "capability": "build-runner",
            "phase": "judging",
            "packet_ref": packet_ref(packet),
            "started_at": now,
            "updated_at": now,
        }
        answer = await self.call(
            "mission.post", project=self.project, agent_id="operator", letter=letter
        )
        assert answer["ok"], answer
        return MissionJob(
            mission_id=mission_id,
            project=self.project,
            block_id=self.block,
            brain_ref=BRAIN,
            packet=packet,
            head_letter_id=answer["result"]["letter_id"],
            head_seq=1,
            started_at=now,
            packet_ref=packet_ref(packet),
            runner_id="build-1",
        )

    async def heads(self) -> dict[str, dict[str, Any]]:
        """Each mission's head as ``mailbox.read kind=mission`` answers it."""
        answer = await self.call("mailbox.read", project=self.project, kind="mission")
        assert answer["ok"], answer
        return {h["mission_id"]: h for h in answer["result"]["heads"]}

    async def run(
        self,
        job: MissionJob,
        pin: RunnerPin,
        poster: DeskPoster,
        source: dict[str, str] | None = None,
    ) -> RunOutcome:
        """Make the mission's worktree and run it as the daemon does."""
        trees = Worktrees(self.root)
        tree = await trees.create(job.mission_id, job.project, self.folder)
        return await run_mission(
            job,
            pin,
            tree,
            poster=poster,
            sandbox=self.service.sandbox,
            fence=mission_fence(self.home, tree.path, pin),
            log_path=self.root / "runner-logs" / f"{job.mission_id}.log",
            env=runner_env(pin, self.home.exec_home, source or {}),
        )

    def close(self) -> None:
        if self.service.composed.sink is not None:
            self.service.composed.sink.close()


async def environment(tmp_path: Path, *, git_repo: bool = True) -> Env:
    """A fresh root under ``tmp_path`` (module docstring)."""
    root = tmp_path / "env"
    await init_home(root, "runner-test")
    composed = await compose(root)
    service = EnvironmentService(composed, sandbox=detect())
    env = Env(root, Home(root), service, "", "", root)
    made = await env.call("project.create", name=BRAIN)
    assert made["ok"], made
    env.project = made["result"]["project"]["id"]
    edit = await env.call(
        "blocks.candidate_edit",
        "human-ui",
        project=env.project,
        ops=[{"op": "add", "name": "Runner", "purpose": "Runs missions."}],
    )
    assert edit["ok"], edit
    env.block = edit["result"]["added"][0]
    env.folder = composed.roots.folder(env.project)
    (env.folder / "check.py").write_text(GATE, encoding="utf-8")
    (env.folder / "README.md").write_text("# demo\n", encoding="utf-8")
    if git_repo:
        git(env.folder, "init", "--quiet")
        git(env.folder, "add", "-A")
        git(
            env.folder,
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "--quiet",
            "-m",
            "first",
        )
    return env


async def prepare_project(root: Path) -> tuple[str, str]:
    """A project named ``demo`` with one block in the initialised root, before it is served
    (the served tests' store needs a block, and no route adds one): its id and block id."""
    composed = await compose(root)
    service = EnvironmentService(composed, sandbox=detect())

    async def call(op: str, origin: str | None = None, **args: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"v": 1, "id": "p" + op, "op": op, "args": args}
        if origin:
            msg["origin"] = origin
        answer, _ = await service.composed.host.handle(json.dumps(msg))
        return json.loads(answer)

    try:
        made = await call("project.create", name="demo")
        assert made["ok"], made
        project = made["result"]["project"]["id"]
        edit = await call(
            "blocks.candidate_edit",
            "human-ui",
            project=project,
            ops=[{"op": "add", "name": "Greeter", "purpose": "Says hello."}],
        )
        assert edit["ok"], edit
        return project, edit["result"]["added"][0]
    finally:
        if composed.sink is not None:
            composed.sink.close()
