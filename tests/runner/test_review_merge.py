"""Review and merge of a mission's branch (issue 30, review and Merge) through the browser
host's ``remote.diff`` and ``remote.merge`` against a real ``voicebox-env serve`` and
``voicebox-env runner`` on 127.0.0.1: the scripted agent's change shows in the diff with its
counts; a conflict refuses listing the file and changes nothing (HEAD and the tree as before);
the merge fast-forwards; only a ``merge_wait`` or ``landed`` mission is merged, by a person,
never in SAFE mode; the merge is audited on the server; no answer holds an absolute path."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from server_host.worktrees import git
from tests.runner.kit import pins_toml, prepare_project
from tests.runner.test_daemon import _runner, _stop
from tests.runner.test_host_spawn import GATE, _call, _paired, _until
from tests.server.harness import Server, cli

_ME = ("-c", "user.name=t", "-c", "user.email=t@x.invalid")


def _state(folder: Path) -> tuple[str, str, str]:
    """HEAD, the tree's status and the README as they are now."""
    head = git(folder, "rev-parse", "HEAD").stdout.strip()
    status = git(folder, "status", "--porcelain").stdout
    readme = (folder / "README.md").read_text() if (folder / "README.md").exists() else ""
    return head, status, readme


def _server_audit(root: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(f"file:{root / 'host' / 'audit.sqlite3'}?mode=ro", uri=True)
    try:
        return [json.loads(r) for (r,) in db.execute("SELECT record FROM records ORDER BY seq")]
    finally:
        db.close()


def test_a_mission_branch_is_reviewed_and_merged_by_a_person_and_a_conflict_changes_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "env"
    server = Server(root, name="build-box")
    project, block = asyncio.run(prepare_project(root))
    folder = root / "projects" / project
    (folder / "check.py").write_text(GATE)
    (root / "runners.toml").write_text(
        pins_toml(project, mode="ok") + pins_toml(project, mode="hang", runner_id="build-hang")
    )
    git(folder, "init", "--quiet", "-b", "main")
    git(folder, "add", "-A")
    git(folder, *_ME, "commit", "-qm", "1")
    server.start()
    runner: Any = None
    try:

        async def go() -> None:
            nonlocal runner
            world, ref = await _paired(server.url, root, project)
            spawn = {**ref, "block_id": block, "note": "Add AGENT.md."}
            runner, lines = _runner(root)
            deadline = time.monotonic() + 30
            while not (await world.ok("remote.board", **ref))["result"]["spawn"]["available"]:
                assert time.monotonic() < deadline, "".join(lines)
                await asyncio.sleep(0.05)

            done = await _call(world, "remote.spawn", True, **spawn, runner_id="build-1")
            assert done["ok"], done
            mission = done["result"]["mission_id"]
            assert (await _until(world, ref, mission, "merge_wait"))["mergeable"] is True

            # the review: the agent's two files, their counts, their diffs
            diff = (await world.ok("remote.diff", **ref, missionId=mission))["result"]
            assert diff["branch"] == f"vbx/{mission}" and diff["into"] == "main"
            files = {f["path"]: f for f in diff["files"]}
            assert sorted(files) == ["AGENT.md", "README.md"], files
            agent = files["AGENT.md"]
            assert (agent["added"], agent["removed"], agent["binary"]) == (2, 0, False)
            assert f"+mission {mission}\n" in agent["patch"] and agent["cut"] is None
            assert "+++ b/AGENT.md" in agent["patch"]
            assert files["README.md"]["added"] == 2 and files["README.md"]["removed"] == 0
            assert f"+Touched by the scripted agent for {mission}." in files["README.md"]["patch"]
            assert diff["base"] == git(folder, "rev-parse", "HEAD").stdout.strip()

            # a mission still queued (judging) or running (executing) is not merged
            hanging = (await _call(world, "remote.spawn", True, **spawn, runner_id="build-hang"))[
                "result"
            ]["mission_id"]
            assert (await _until(world, ref, hanging, "executing"))["mergeable"] is False
            queued = (await _call(world, "remote.spawn", True, **spawn, runner_id="build-hang"))[
                "result"
            ]["mission_id"]
            await _until(world, ref, queued, "judging")
            for other in (queued, hanging):
                refused = await _call(world, "remote.merge", True, **ref, missionId=other)
                assert refused["refusal"]["code"] == "invalid_transition", refused
            for other in (queued, hanging):
                assert (await _call(world, "remote.cancel", True, **ref, missionId=other))["ok"]

            # a person's gesture only, and never in SAFE mode
            refused = await _call(world, "remote.merge", **ref, missionId=mission)
            assert refused["refusal"]["code"] == "human_gesture_required"
            assert cli(root, "policy", "--safe", "on").returncode == 0
            refused = await _call(world, "remote.merge", True, **ref, missionId=mission)
            assert refused["refusal"]["code"] == "read-only-mode", refused
            assert cli(root, "policy", "--safe", "off").returncode == 0

            # a conflicting change in the project: refused, the file listed, nothing changed
            (folder / "README.md").write_text(_state(folder)[2] + "\nA person's own line.\n")
            git(folder, "add", "README.md")
            git(folder, *_ME, "commit", "-qm", "a person's change")
            before = _state(folder)
            refused = await _call(world, "remote.merge", True, **ref, missionId=mission)
            assert refused["refusal"]["code"] == "args-invalid", refused
            assert "README.md" in refused["refusal"]["message"]
            assert "AGENT.md" not in refused["refusal"]["message"]
            assert _state(folder) == before
            assert not (folder / "AGENT.md").exists()
            assert not (folder / ".git" / "MERGE_HEAD").exists()

            # without it, the branch fast-forwards the checked-out branch
            git(folder, "reset", "--hard", "--quiet", "HEAD~1")
            merged = await _call(world, "remote.merge", True, **ref, missionId=mission)
            assert merged["ok"], merged
            branch_head = git(folder, "rev-parse", f"vbx/{mission}").stdout.strip()
            assert merged["result"] == {
                "mission_id": mission,
                "branch": f"vbx/{mission}",
                "into": "main",
                "how": "fast-forward",
                "head": branch_head,
            }
            assert git(folder, "rev-parse", "HEAD").stdout.strip() == branch_head
            assert (folder / "AGENT.md").read_text().startswith(f"mission {mission}")
            assert git(folder, "status", "--porcelain", "--untracked-files=no").stdout == ""

            audit = _server_audit(root)
            merges = [r for r in audit if r.get("op") == "mission.merge"]
            assert [(r["decision"], r["rule"]) for r in merges] == [
                ("refused", "invalid_transition"),
                ("refused", "invalid_transition"),
                ("refused", "read-only-mode"),
                ("refused", "args-invalid"),
                ("admitted", "mission-merged"),
            ], merges
            assert merges[-1]["details"]["how"] == "fast-forward"

            everything = "".join(world.answers) + json.dumps(list(world.sink.records))
            everything += json.dumps(audit)
            assert str(tmp_path) not in everything and str(root) not in everything

        asyncio.run(go())
    finally:
        if runner is not None:
            _stop(runner)
        server.stop()
