"""The person's provider key reaches the agent through a real spawn (issue 31, the loop closed):
a runner pinned with ``keys = [...]`` (its harness's needs) is listed with those variable names
only; the browser host's ``remote.spawn`` asks its key custody for exactly them, refuses
``key-not-granted`` naming the variable before anything is queued, and with the grant sends the
value for that run only — the scripted agent sees it (its sha256), the gate does not, and no
answer, audit record, server log or mission log holds it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from server_host.worktrees import git
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.runner.test_host_spawn import _call, _paired, _until
from tests.server.harness import Server

VAR = "ANTHROPIC_API_KEY"
CANARY = "sk-ant-wire-7Hq2Mz9Lp4Xv8Rb3Tn6Kd1Wc5Fg0Yj"
GATE = Path(__file__).with_name("gate_env.py")


def _files_hold(folder: Path, fragment: str) -> list[str]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            try:
                if fragment in path.read_text(errors="ignore"):
                    found.append(str(path))
            except OSError:
                continue
    return found


def test_a_spawn_gives_the_agent_exactly_the_granted_keys_its_pin_declares(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    server = Server(root, name="build-box")
    project, block = asyncio.run(prepare_project(root))
    folder = root / "projects" / project
    git(folder, "init", "--quiet")
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")
    (root / "runners.toml").write_text(
        pins_toml(project, mode="keys", arg=VAR, gate=str(GATE), keys=(VAR,))
    )
    server.start()
    runner: Any = None
    try:

        async def go() -> None:
            nonlocal runner
            world, ref = await _paired(server.url, root, project)
            key = ref["envKey"]
            spawn = {**ref, "block_id": block, "note": "Use the key.", "runner_id": "build-1"}
            runner, lines = _runner(root)
            deadline = time.monotonic() + 30
            while not (board := (await world.ok("remote.board", **ref))["result"])["runners"][0][
                "live"
            ]:
                assert time.monotonic() < deadline, "".join(lines)
                await asyncio.sleep(0.05)
            # the identity lists the harness's needs by name; the board says none is set
            assert board["runners"][0]["keys"] == [VAR]
            assert board["keys"] == [{"variable": VAR, "fingerprint": None, "granted": False}]

            # not set, then set but not granted: refused naming the variable, nothing queued
            refused = await _call(world, "remote.spawn", True, **spawn)
            assert refused["refusal"]["code"] == "key-not-granted", refused
            assert (
                VAR in refused["refusal"]["message"] and "not set" in refused["refusal"]["message"]
            )
            put = {"provider": "anthropic", "variable": VAR, "value": CANARY}
            assert (await _call(world, "keys.set", True, **put))["ok"]
            fp = hashlib.sha256(CANARY.encode()).hexdigest()[:8]
            board = (await world.ok("remote.board", **ref))["result"]
            assert board["keys"] == [{"variable": VAR, "fingerprint": fp, "granted": False}]
            refused = await _call(world, "remote.spawn", True, **spawn)
            assert refused["refusal"]["code"] == "key-not-granted", refused
            assert "not granted" in refused["refusal"]["message"]
            assert refused["refusal"].get("field") == VAR
            assert (await world.ok("remote.board", **ref))["result"]["heads"] == []

            # granted: the spawn carries it for that run; the agent sees it
            assert (await _call(world, "keys.grant", True, variable=VAR, envKey=key))["ok"]
            board = (await world.ok("remote.board", **ref))["result"]
            assert board["keys"] == [{"variable": VAR, "fingerprint": fp, "granted": True}]
            done = await _call(world, "remote.spawn", True, **spawn)
            assert done["ok"], done
            mission = done["result"]["mission_id"]
            await _until(world, ref, mission, "merge_wait")
            seen = git(folder, "show", f"vbx/{mission}:KEY.sha256").stdout.strip()
            assert seen == hashlib.sha256(CANARY.encode()).hexdigest()
            log = (await world.ok("remote.log", **ref, missionId=mission))["result"]["text"]
            gate_env = next(x for x in log.splitlines() if x.startswith("GATE-ENV "))
            assert VAR not in gate_env.split()  # the gate's environment never has it
            assert "leak " in log and CANARY[:12] not in log

            # audited by fingerprint, never the value
            spawned = [
                r
                for r in world.sink.records.values()
                if "mission-spawned" in json.dumps(r, default=str)
            ]
            assert spawned and json.dumps(spawned[-1], default=str).count(fp) == 1

            everything = "".join(world.answers) + json.dumps(
                list(world.sink.records.values()), default=str
            )
            for start in range(len(CANARY) - 11):
                assert CANARY[start : start + 12] not in everything
            assert _files_hold(root, CANARY[:12]) == []
            assert CANARY[:12] not in "".join(lines)

        asyncio.run(go())
    finally:
        if runner is not None:
            _stop(runner)
        server.stop()
