"""The tray and Compose for a remote project, from the host, against a real ``voicebox-env
serve`` and ``voicebox-env runner`` on 127.0.0.1 (issue 30: "the tray follows the project
being viewed wherever it lives", "compose → spawn"): ``remote.tray`` answers the remote
heads as cards with the tray's rules (a spawned mission moves queued → executing → gate →
merge_wait; a cancelled one is a pinned failure "cancelled by a person"), and
``remote.compose`` offers spawn exactly when a live pinned runner can take it, else says
which of the honest reasons holds. Nothing either answers holds a bearer, a secret or a
path."""

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
from tests.runner.test_host_spawn import _call, _paired
from tests.server.harness import Server, cli

GATE = (
    "import pathlib, sys, time\n"
    "time.sleep(1)\n"
    "sys.exit(0 if pathlib.Path('AGENT.md').exists() else 1)\n"
)


async def _tray_until(world: Any, ref: dict[str, str], mission: str, phase: str) -> dict:
    """Read ``remote.tray`` until ``mission``'s card is in ``phase``; every phase seen is
    recorded on the card returned (``seen``)."""
    deadline = time.monotonic() + 40
    seen: list[str] = []
    while True:
        tray = (await world.ok("remote.tray", **ref))["result"]
        cards = {c["mission_id"]: c for c in tray["cards"]}
        card = cards.get(mission)
        if card is not None and (not seen or seen[-1] != card["letter"]["phase"]):
            seen.append(card["letter"]["phase"])
        if card is not None and card["letter"]["phase"] == phase:
            return {**card, "seen": seen, "tray": tray}
        assert time.monotonic() < deadline, (seen, card)
        await asyncio.sleep(0.05)


def _modes(answer: dict[str, Any]) -> dict[str, tuple[bool, str | None]]:
    return {m["mode"]: (m["available"], m["reason"]) for m in answer["modes"]}


def test_the_tray_follows_a_remote_projects_missions_and_compose_offers_spawn_honestly(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    server = Server(root, name="build-box")
    project, block = asyncio.run(prepare_project(root))
    folder = root / "projects" / project
    (folder / "check.py").write_text(GATE)
    (root / "runners.toml").write_text(
        pins_toml(project, mode="slow", arg="1")
        + pins_toml(project, mode="hang", runner_id="build-hang")
    )
    server.start()
    runner: Any = None
    try:

        async def go() -> None:
            nonlocal runner
            world, ref = await _paired(server.url, root, project)

            # an empty tray, read through the host; compose says why spawn is not offered
            tray = (await world.ok("remote.tray", **ref))["result"]
            assert tray["cards"] == [] and tray["paired"] and tray["moving"] is False
            assert tray["follow_ms"] == 2500 and set(tray["counts"].values()) == {0}
            composed = (await world.ok("remote.compose", **ref))["result"]
            assert composed["block_id"] == block and composed["packet"].count(block) >= 1
            assert composed["letter"]["phase"] == "judging"
            modes = _modes(composed)
            assert modes["clipboard"] == (True, None) and modes["direct"][0] is False
            assert modes["spawn"][0] is False and "not live" in modes["spawn"][1]
            naming = await world.ok("remote.compose", **ref, capability="naming-runner")
            assert _modes(naming["result"])["spawn"][1].startswith("No runner is pinned")

            runner, lines = _runner(root)
            deadline = time.monotonic() + 30
            while True:
                reason = _modes((await world.ok("remote.compose", **ref))["result"])["spawn"][1]
                if "not live" not in (reason or ""):
                    break
                assert time.monotonic() < deadline, "".join(lines)
                await asyncio.sleep(0.05)
            assert reason is not None and "not a git repository" in reason
            git(folder, "init", "--quiet")
            git(folder, "add", "-A")
            git(folder, "-c", "user.name=t", "-c", "user.email=t@x.invalid", "commit", "-qm", "1")
            assert _modes((await world.ok("remote.compose", **ref))["result"])["spawn"] == (
                True,
                None,
            )

            # spawn (the person's gesture); the tray's card moves executing → gate → merge_wait
            spawn = {**ref, "block_id": block, "note": "Add AGENT.md.", "runner_id": "build-1"}
            done = await _call(world, "remote.spawn", True, **spawn)
            assert done["ok"], done
            mission = done["result"]["mission_id"]
            executing = await _tray_until(world, ref, mission, "executing")
            assert executing["actions"] == ["open", "cancel"]
            assert executing["tray"]["moving"] is True and executing["tray"]["follow_ms"] == 250
            assert executing["tray"]["log_ms"] <= 100
            merge_wait = await _tray_until(world, ref, mission, "merge_wait")
            assert merge_wait["seen"][-2:] == ["gate", "merge_wait"]
            assert merge_wait["actions"] == ["review"] and merge_wait["pinned"] is False
            assert merge_wait["block_name"] is not None
            assert merge_wait["tray"]["counts"]["merge_wait"] == 1

            # a hanging agent, cancelled by a person: a pinned failure with its reason
            spawn["runner_id"] = "build-hang"
            hanging = (await _call(world, "remote.spawn", True, **spawn))["result"]["mission_id"]
            await _tray_until(world, ref, hanging, "executing")
            cancelled = await _call(world, "remote.cancel", True, **ref, missionId=hanging)
            assert cancelled["ok"], cancelled
            failed = await _tray_until(world, ref, hanging, "failed")
            assert failed["pinned"] and failed["reason"] == "cancelled by a person"
            assert failed["actions"] == ["open"]
            assert failed["tray"]["cards"][0]["mission_id"] == hanging  # pinned on top

            # revoked at the server: the tray is empty and says so, spawn says "No environment"
            assert cli(root, "revoke", "--env-key", ref["envKey"]).returncode == 0
            await _call(world, "remote.tray", **ref)  # answered pairing-revoked: marked here
            tray = (await world.ok("remote.tray", **ref))["result"]
            assert tray["paired"] is False and tray["cards"] == []
            assert tray["note"].startswith("No environment")
            composed = (await world.ok("remote.compose", **ref))["result"]
            assert composed["packet"] is None and composed["note"].startswith("No environment")
            assert _modes(composed)["spawn"][1].startswith("No environment")

            everything = "".join(world.answers)
            assert "vbx_" not in everything and "vbh_" not in everything
            assert read_runner_secret(root / "host").reveal() not in everything
            assert str(root) not in everything and "worktrees/" not in json.dumps(everything)

        asyncio.run(go())
    finally:
        if runner is not None:
            _stop(runner)
        server.stop()
