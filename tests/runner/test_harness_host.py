"""Settings → Harness through a real server and runner (issue 31 "Harness", the loop closed):
the browser host lists what the environment's runner found of its pinned templates (names and
versions, no path); a person's choice is kept in HOST_DIR ``harness-settings.json``; a spawn
runs the chosen template and asks the key custody for exactly its keys; the letters of the
mission name no template label and no executable (seed 004 §1a: roles, never vendors)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from core.missions.harness import HARNESS_DOC
from server_host.worktrees import git
from tests.runner.kit import prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.runner.test_harness import CLI, VAR, templates_toml
from tests.runner.test_host_spawn import _call, _paired, _until
from tests.server.harness import Server

CANARY = "sk-ant-choice-8Vd3Kq6Lw1Zt9Pm4Xr7Bn2Hc5Gj0Fy"
GATE = Path(__file__).with_name("gate_env.py")


def test_the_template_chosen_in_settings_runs_and_its_letters_name_none_of_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    server = Server(root, name="build-box")
    project, block = asyncio.run(prepare_project(root))
    folder = root / "projects" / project
    git(folder, "init", "--quiet")
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")
    (root / "runners.toml").write_text(templates_toml(project, gate=str(GATE)))
    server.start()
    runner: Any = None
    try:

        async def go() -> None:
            nonlocal runner
            world, ref = await _paired(server.url, root, project)
            key = ref["envKey"]
            runner, lines = _runner(root)
            deadline = time.monotonic() + 30
            while True:  # live, and its probe reported
                listed = (await world.ok("harness.list"))["result"]["environments"]
                (cap,) = listed[0]["capabilities"]
                (found,) = cap["runners"]
                if found["live"] and found["templates"][0]["found"] is not None:
                    break
                assert time.monotonic() < deadline, "".join(lines)
                await asyncio.sleep(0.05)
            assert listed[0]["env_key"] == key and cap["capability"] == "build-runner"
            assert cap["labels"] == ["vendor-a", "vendor-b"]
            assert cap["active"] == "vendor-a" and cap["chosen"] is False
            b = found["templates"][1]
            assert b["executable"] == "fake-agent-cli" and b["found"] is True
            assert b["version"] == "fake-agent-cli 9.4.1 (built in build)"
            assert b["keys"] == [VAR]
            assert str(CLI.parent) not in json.dumps(listed) and str(root) not in json.dumps(listed)

            # a choice is a person's gesture, of a pinned label only
            assert (
                await _call(
                    world, "harness.choose", envKey=key, capability="build-runner", label="vendor-b"
                )
            )["refusal"]["code"] == "human_gesture_required"
            wrong = await _call(
                world, "harness.choose", True, envKey=key, capability="build-runner", label="x"
            )
            assert wrong["refusal"]["code"] == "args-invalid", wrong
            chose = await _call(
                world,
                "harness.choose",
                True,
                envKey=key,
                capability="build-runner",
                label="vendor-b",
            )
            assert chose["ok"], chose
            (cap,) = chose["result"]["environments"][0]["capabilities"]
            assert cap["active"] == "vendor-b" and cap["chosen"] is True
            assert HARNESS_DOC in world.state.docs  # kept in HOST_DIR (sealed by the browser's)
            assert b"vendor-b" in world.state.docs[HARNESS_DOC]

            # the board asks for vendor-b's keys now; the spawn is refused until granted
            board = (await world.ok("remote.board", **ref))["result"]
            assert board["keys"] == [{"variable": VAR, "fingerprint": None, "granted": False}]
            spawn = {**ref, "block_id": block, "note": "Go."}
            refused = await _call(world, "remote.spawn", True, **spawn)
            assert refused["refusal"]["code"] == "key-not-granted", refused
            put = {"provider": "anthropic", "variable": VAR, "value": CANARY}
            assert (await _call(world, "keys.set", True, **put))["ok"]
            assert (await _call(world, "keys.grant", True, variable=VAR, envKey=key))["ok"]
            done = await _call(world, "remote.spawn", True, **spawn)
            assert done["ok"], done
            mission = done["result"]["mission_id"]
            await _until(world, ref, mission, "merge_wait")
            # vendor-b ran: its agent saw the key and wrote its sha256 on the branch
            seen = git(folder, "show", f"vbx/{mission}:KEY.sha256").stdout.strip()
            assert seen == hashlib.sha256(CANARY.encode()).hexdigest()
            log = (await world.ok("remote.log", **ref, missionId=mission))["result"]["text"]
            assert "agent keys: packet of" in log and "agent ok" not in log

            # back to vendor-a (no keys): the spawn carries none, and vendor-a runs
            assert (
                await _call(
                    world,
                    "harness.choose",
                    True,
                    envKey=key,
                    capability="build-runner",
                    label="vendor-a",
                )
            )["ok"]
            assert (await world.ok("remote.board", **ref))["result"]["keys"] == []
            again = await _call(world, "remote.spawn", True, **spawn)
            assert again["ok"], again
            other = again["result"]["mission_id"]
            await _until(world, ref, other, "merge_wait")
            log = (await world.ok("remote.log", **ref, missionId=other))["result"]["text"]
            assert "agent ok: packet of" in log and "agent keys" not in log

            # the letters of both missions (every file of the project's store on the server, its
            # mailbox included, and the heads the board answers): roles only — no template
            # label, no executable
            stored = [
                p.read_text(errors="replace")
                for p in folder.rglob("*")
                if p.is_file() and ".git" not in p.parts
            ]
            heads = (await world.ok("remote.board", **ref))["result"]["heads"]
            letters = json.dumps(heads) + "".join(stored)
            assert mission in letters and other in letters
            for word in ("vendor-a", "vendor-b", "fake-agent-cli"):
                assert word not in letters, word

        asyncio.run(go())
    finally:
        if runner is not None:
            _stop(runner)
        server.stop()
