"""The host's remote mission operations against a real ``voicebox-env serve`` and
``voicebox-env runner`` on 127.0.0.1 (issue 30, the browser side), under CPython with the
loopback link of ``tests/server/test_remote_host.py``: spawn is a person's gesture and is
offered only once a pinned runner is live and the project is a git repository; a spawned
mission reaches ``merge_wait`` with its log readable and its evidence checked by the
environment; a person's cancel ends a hanging one ``failed`` "cancelled by a person"; no answer
or audit record holds the bearer, the runner secret or the root's path."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from server_host.runner_desk import read_runner_secret
from server_host.worktrees import git
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.server.harness import Server, cli
from tests.server.test_remote_host import RemoteWorld, _code

GATE = "import pathlib, sys\nsys.exit(0 if pathlib.Path('AGENT.md').exists() else 1)\n"


async def _call(world: RemoteWorld, op: str, human: bool = False, **args: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"v": 1, "id": "c", "op": op, "args": args}
    if human:
        message["origin"] = "human-ui"
    answer, _, _ = await world.host.handle_full(json.dumps(message))
    return json.loads(answer)


async def _paired(server_url: str, root: Path, project: str) -> tuple[RemoteWorld, dict[str, str]]:
    """A started browser-host world paired with the server at ``server_url`` (its one-time
    code from ``root``), and the ``{envKey, project}`` reference of ``project`` there."""
    world = RemoteWorld()
    await world.start()
    added = await world.ok("env.add", url=server_url, code=_code(root))
    return world, {"envKey": added["result"]["environment"]["envKey"], "project": project}


async def _until(world: RemoteWorld, ref: dict[str, str], mission: str, phase: str) -> dict:
    deadline = time.monotonic() + 40
    while True:
        board = await _call(world, "remote.board", **ref)
        assert board["ok"], board
        heads = {h["mission_id"]: h for h in board["result"]["heads"]}
        if mission in heads and heads[mission]["phase"] == phase:
            return heads[mission]
        assert time.monotonic() < deadline, heads.get(mission)
        await asyncio.sleep(0.05)


def test_the_host_spawns_follows_checks_and_cancels_a_remote_mission(tmp_path: Path) -> None:
    root = tmp_path / "env"
    server = Server(root, name="build-box")
    project, block = asyncio.run(prepare_project(root))
    folder = root / "projects" / project
    (folder / "check.py").write_text(GATE)
    (root / "runners.toml").write_text(
        pins_toml(project, mode="ok") + pins_toml(project, mode="hang", runner_id="build-hang")
    )
    server.start()
    runner: Any = None
    try:

        async def go() -> None:
            nonlocal runner
            world, ref = await _paired(server.url, root, project)
            key = ref["envKey"]
            spawn = {**ref, "block_id": block, "note": "Add AGENT.md."}

            board = (await world.ok("remote.board", **ref))["result"]
            assert [b["id"] for b in board["blocks"]] == [block]
            assert not board["spawn"]["available"] and "not live" in board["spawn"]["reason"]
            runner, lines = _runner(root)
            deadline = time.monotonic() + 30
            while not (board := (await world.ok("remote.board", **ref))["result"])["runners"][0][
                "live"
            ]:
                assert time.monotonic() < deadline, "".join(lines)
                await asyncio.sleep(0.05)
            assert "git init" in board["spawn"]["reason"]
            refused = await _call(world, "remote.spawn", True, **spawn)
            assert refused["refusal"]["code"] == "args-invalid", refused
            git(folder, "init", "--quiet")
            git(folder, "add", "-A")
            git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")
            assert (await world.ok("remote.board", **ref))["result"]["spawn"]["available"]

            # a person's gesture, and only that
            refused = await _call(world, "remote.spawn", **spawn)
            assert refused["refusal"]["code"] == "human_gesture_required"
            done = await _call(world, "remote.spawn", True, **spawn, runner_id="build-1")
            assert done["ok"], done
            mission = done["result"]["mission_id"]
            head = await _until(world, ref, mission, "merge_wait")
            assert [s["state"] for s in head["timeline"]][:4] == ["done", "done", "done", "now"]
            log = (await world.ok("remote.log", **ref, missionId=mission))["result"]
            assert "agent ok: packet of" in log["text"] and log["finished"]
            evidence = (await world.ok("remote.evidence", **ref, missionId=mission))["result"]
            assert evidence["checked"] is True

            # a hanging agent, cancelled by a person
            done = await _call(world, "remote.spawn", True, **spawn, runner_id="build-hang")
            hanging = done["result"]["mission_id"]
            await _until(world, ref, hanging, "executing")
            refused = await _call(world, "remote.cancel", **ref, missionId=hanging)
            assert refused["refusal"]["code"] == "human_gesture_required"
            cancelled = await _call(world, "remote.cancel", True, **ref, missionId=hanging)
            assert cancelled["result"] == {"mission_id": hanging, "cancelled": "running"}
            failed = await _until(world, ref, hanging, "failed")
            assert failed["reason"] == "cancelled by a person"
            assert failed["cancellable"] is False
            # a mission it does not have, or no longer runs: said so by its id (stop 45)
            unknown = "msn_" + "0" * 12
            refused = await _call(world, "remote.log", **ref, missionId=unknown)
            assert refused["refusal"]["code"] == "args-invalid", refused
            assert refused["refusal"]["message"] == (
                f"The environment has no mission {unknown} in this project."
            )
            assert refused["refusal"]["field"] == "missionId"
            again = await _call(world, "remote.cancel", True, **ref, missionId=unknown)
            assert again["refusal"]["message"] == (
                f"The environment has no queued or running mission {unknown} in this project."
            ), again

            # revoked at the server: no environment to spawn in, and the reason says so
            served_revoke = cli(root, "revoke", "--env-key", key)
            assert served_revoke.returncode == 0, served_revoke.stderr
            await _call(world, "remote.board", **ref)  # answered pairing-revoked: marked here
            board = (await world.ok("remote.board", **ref))["result"]
            assert not board["spawn"]["available"]
            assert board["spawn"]["reason"].startswith("No environment") and board["heads"] == []

            everything = "".join(world.answers) + json.dumps(list(world.sink.records))
            assert "vbx_" not in everything and "vbh_" not in everything
            assert read_runner_secret(root / "host").reveal() not in everything
            assert str(root) not in everything

        asyncio.run(go())
    finally:
        if runner is not None:
            _stop(runner)
        server.stop()
