"""A person lands a remote mission through the browser host's ``remote.land`` against a real
``voicebox-env serve`` and ``voicebox-env runner`` on 127.0.0.1 (issue 30, Review): only a
person's gesture sends it; a runner's seat (its secret, as a bearer or through its own post
route) lands nothing; the landing imports the receipt into the project's store on the server and
posts ``landed`` naming that store version; a second landing answers the first; Merge still
works after it; audited on both sides; no answer holds a path or a secret."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx

from server_host.runner_desk import read_runner_secret
from server_host.worktrees import git
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.runner.test_host_spawn import GATE, _call, _paired, _until
from tests.runner.test_review_merge import _server_audit
from tests.server.harness import Server

_ME = ("-c", "user.name=t", "-c", "user.email=t@x.invalid")


def test_a_person_lands_a_remote_mission_through_the_host_and_a_runners_seat_cannot(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    server = Server(root, name="build-box")
    project, block = asyncio.run(prepare_project(root))
    folder = root / "projects" / project
    (folder / "check.py").write_text(GATE)
    (root / "runners.toml").write_text(pins_toml(project, mode="ok"))
    git(folder, "init", "--quiet", "-b", "main")
    git(folder, "add", "-A")
    git(folder, *_ME, "commit", "-qm", "1")
    server.start()
    runner: Any = None
    try:

        async def go() -> None:
            nonlocal runner
            world, ref = await _paired(server.url, root, project)
            runner, lines = _runner(root)
            deadline = time.monotonic() + 30
            while not (await world.ok("remote.board", **ref))["result"]["spawn"]["available"]:
                assert time.monotonic() < deadline, "".join(lines)
                await asyncio.sleep(0.05)
            spawn = {**ref, "block_id": block, "note": "Add AGENT.md."}
            done = await _call(world, "remote.spawn", True, **spawn)
            assert done["ok"], done
            mission = done["result"]["mission_id"]
            await _until(world, ref, mission, "merge_wait")
            land = {**ref, "missionId": mission}

            # a person's gesture only: an agent calling the verb learns it, nothing is sent
            refused = await _call(world, "remote.land", **land, imported_via="human-ui")
            assert refused["refusal"]["code"] == "human_gesture_required", refused
            refused = await _call(world, "remote.land", True, **land)
            assert refused["refusal"]["code"] == "human_gesture_required", refused
            assert refused["refusal"]["field"] == "imported_via"

            # a runner's seat lands nothing: its secret is no bearer, its post route posts
            # letters only
            secret = read_runner_secret(root / "host").reveal()
            env_key = ref["envKey"]
            route = f"{server.url}/api/environments/{env_key}/missions/land"
            body = {"project": project, "missionId": mission, "confirmClaim": True}
            async with httpx.AsyncClient(timeout=10) as http:
                as_bearer = await http.post(
                    route, json=body, headers={"authorization": f"Bearer {secret}"}
                )
                unauthenticated = await http.post(route, json=body)
                challenge = (await http.get(f"{server.url}/api/runner/challenge")).json()
                creds = {"runnerId": "build-1", "secret": secret, **challenge}
                through_post = await http.post(
                    f"{server.url}/api/runner/post",
                    json={**creds, "op": "tray.land", "project": project, "letter": {}},
                )
            assert as_bearer.status_code == 403, as_bearer.text
            assert as_bearer.json()["refusal"]["code"] == "bearer-refused"
            assert unauthenticated.status_code in (401, 403), unauthenticated.text
            assert through_post.status_code == 403, through_post.text
            assert through_post.json()["refusal"]["code"] == "permission-denied"
            for answer in (as_bearer, unauthenticated, through_post):
                assert secret not in answer.text
            head = await _until(world, ref, mission, "merge_wait")  # nothing moved
            assert head["letter"].get("receipt") is None

            # the person lands it: the import's store version is the one the letter names
            landed = await _call(world, "remote.land", True, **land, imported_via="human-ui")
            assert landed["ok"], landed
            result = landed["result"]
            assert result["checked"] is True and result["duplicate"] is False
            assert result["store_version"] == 2, result  # the store was at 1
            assert result["words"] == "receipt ✓ store v2"
            head = await _until(world, ref, mission, "landed")
            assert head["letter"]["receipt"] == {"imported": True, "store_version": 2}
            assert head["receipt"] == "receipt ✓ store v2" and head["mergeable"] is True
            assert head["seq"] == result["seq"] == 5
            assert result["block_id"] == block and result["color"] == "green"

            # again: the same landing answered, nothing doubled
            again = await _call(world, "remote.land", True, **land, imported_via="human-ui")
            assert again["ok"], again
            assert again["result"] == {**result, "duplicate": True}
            assert (await _until(world, ref, mission, "landed"))["seq"] == 5

            # Merge still works on a landed mission
            merged = await _call(world, "remote.merge", True, **land)
            assert merged["ok"], merged
            assert merged["result"]["how"] == "fast-forward"
            assert (folder / "AGENT.md").read_text().startswith(f"mission {mission}")

            # audited on the host and on the server
            host_ops = [(r.get("op"), r.get("decision")) for r in world.sink.records.values()]
            assert host_ops.count(("remote.land", "admitted")) == 2, host_ops
            audit = _server_audit(root)
            lands = [(r["decision"], r["rule"]) for r in audit if r.get("op") == "mission.land"]
            assert lands == [
                ("refused", "bearer-refused"),
                ("refused", "unauthenticated-call"),
                ("admitted", "mission-landed"),
                ("admitted", "mission-landed-already"),
            ], lands
            admitted = [
                r for r in audit if r.get("op") == "mission.land" and r["rule"] == "mission-landed"
            ]
            assert admitted[0]["details"]["store_version"] == 2
            assert admitted[0]["details"]["checked"] is True

            # custody: no path, no secret in anything the host answered or recorded
            everything = "".join(world.answers) + json.dumps(
                list(world.sink.records.values()), default=str
            )
            everything += json.dumps(audit)
            token = (root / "host" / ".host-token").read_text().strip()
            assert str(tmp_path) not in everything and "worktrees/" not in everything
            for held in (secret, token):
                for start in range(0, len(held) - 12 + 1, 4):
                    assert held[start : start + 12] not in everything

        asyncio.run(go())
    finally:
        if runner is not None:
            _stop(runner)
        server.stop()
