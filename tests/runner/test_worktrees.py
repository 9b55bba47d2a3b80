"""One worktree per mission, outside the project, recorded only host-locally; cleanup keeps
the branch and never removes what the runner did not make (issue 30, worktrees, cleanup;
seed 004 §5b, §5d, §1f)."""

from __future__ import annotations

import asyncio
import inspect
import json
import stat
from pathlib import Path

import pytest

from core.refusals import Code, Refused
from server_host.worktrees import RECORD, Worktrees, git
from tests.runner.kit import environment


def _branches(folder: Path) -> set[str]:
    out = git(folder, "for-each-ref", "--format=%(refname:short)", "refs/heads/vbx").stdout
    return set(out.split())


def test_fifty_spawn_and_cleanup_cycles_leave_no_worktree_behind_and_keep_the_branches(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            trees = Worktrees(env.root)
            ids = [f"msn_{i:012x}" for i in range(50)]
            for mid in ids:
                tree = await trees.create(mid, env.project, env.folder)
                assert tree.path.parent == env.root / "worktrees"
                assert env.folder not in tree.path.parents  # never inside the project
                assert (tree.path / "check.py").exists()
                assert await trees.remove(mid, env.folder)
                assert not tree.path.exists()
            assert list((env.root / "worktrees").iterdir()) == []
            assert trees.status() == []
            listed = git(env.folder, "worktree", "list", "--porcelain").stdout
            assert listed.count("worktree ") == 1  # the project's own, nothing else
            assert _branches(env.folder) == {f"vbx/{m}" for m in ids}
        finally:
            env.close()

    asyncio.run(main())


def test_two_missions_never_share_a_worktree(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            trees = Worktrees(env.root)
            made = await asyncio.gather(
                trees.create("msn_0000000000a1", env.project, env.folder),
                trees.create("msn_0000000000a2", env.project, env.folder),
            )
            assert made[0].path != made[1].path
            with pytest.raises(Refused) as caught:
                await trees.create("msn_0000000000a1", env.project, env.folder)
            assert caught.value.code == Code.ALREADY_EXISTS
        finally:
            env.close()

    asyncio.run(main())


def test_the_path_lives_only_in_the_host_local_record_0600(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            trees = Worktrees(env.root)
            tree = await trees.create("msn_0000000000c1", env.project, env.folder)
            record = env.home.host_dir / RECORD
            assert stat.S_IMODE(record.stat().st_mode) == 0o600
            assert json.loads(record.read_text())["msn_0000000000c1"]["path"] == str(tree.path)
        finally:
            env.close()

    asyncio.run(main())


def test_the_sweep_removes_only_idle_worktrees_the_runner_made(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            trees = Worktrees(env.root)
            old = await trees.create("msn_0000000000d1", env.project, env.folder)
            fresh = await trees.create("msn_0000000000d2", env.project, env.folder)
            stranger = env.root / "worktrees" / "msn_0000000000d3"
            stranger.mkdir()
            (stranger / "keep.txt").write_text("not the runner's")
            record = json.loads((env.home.host_dir / RECORD).read_text())
            record["msn_0000000000d1"]["touched_ms"] -= 73 * 3600 * 1000
            (env.home.host_dir / RECORD).write_text(json.dumps(record))
            removed = await trees.sweep({env.project: env.folder})
            assert removed == ["msn_0000000000d1"]
            assert not old.path.exists() and fresh.path.exists()
            assert (stranger / "keep.txt").read_text() == "not the runner's"
            assert "vbx/msn_0000000000d1" in _branches(env.folder)
            # a record pointing outside the runner's area is forgotten, never removed
            outside = tmp_path / "precious"
            outside.mkdir()
            record = json.loads((env.home.host_dir / RECORD).read_text())
            record["msn_0000000000d9"] = {
                "project": env.project,
                "path": str(outside),
                "created_ms": 0,
                "touched_ms": 0,
            }
            (env.home.host_dir / RECORD).write_text(json.dumps(record))
            assert await trees.sweep({env.project: env.folder}) == []
            assert outside.is_dir()
        finally:
            env.close()

    asyncio.run(main())


def test_a_landed_or_a_dismissed_failed_mission_loses_its_worktree_and_keeps_its_branch(
    tmp_path: Path,
) -> None:
    from core.missions.ui_state import Dismissal, load_ui_state, save_ui_state
    from server_host.runner import Runner
    from server_host.runner_desk import FinishedBody
    from server_host.sandbox import NoSandbox
    from tests.runner.kit import DeskPoster

    async def main() -> None:
        env = await environment(tmp_path)
        try:
            runner = Runner(env.root, NoSandbox(), "http://127.0.0.1:9")
            poster = DeskPoster(env)

            async def ask(refs: list[dict[str, str]]) -> list[str]:
                body = FinishedBody.model_validate({**poster.creds(), "missions": refs})
                return (await env.service.runners.finished("127.0.0.1", body))["finished"]

            pin = env.pin(mode="ok")
            landed, waiting = await env.open_mission(), await env.open_mission()
            for job in (landed, waiting):
                await runner.worktrees.create(job.mission_id, env.project, env.folder)
                tree = runner.worktrees.get(job.mission_id)
                assert tree is not None
                from server_host.runner import mission_fence
                from server_host.runner_run import run_mission, runner_env

                await run_mission(
                    job,
                    pin,
                    tree,
                    poster=poster,
                    sandbox=env.service.sandbox,
                    fence=mission_fence(env.home, tree.path, pin),
                    log_path=env.root / "runner-logs" / f"{job.mission_id}.log",
                    env=runner_env(pin, env.home.exec_home, {}),
                )
            head = (await env.heads())[landed.mission_id]
            imported = await env.call(
                "receipt.import",
                "human-ui",
                project=env.project,
                candidate=head["letter"]["receipt_candidate"],
                imported_via="human-ui",
                mission_id=landed.mission_id,
            )
            assert imported["ok"], imported
            letter = {
                **head["letter"],
                "mission_seq": 5,
                "prev_letter_id": head["sha12"],
                "phase": "landed",
                "seat": "oracle",
                "receipt": {"imported": True, "store_version": imported["result"]["store_version"]},
            }
            posted = await env.call(
                "mission.post", project=env.project, agent_id="operator", letter=letter
            )
            assert posted["ok"], posted
            failing = env.pin(mode="fail")
            failed = await env.open_mission()
            await env.run(failed, failing, poster)
            # not yet dismissed: the failed one keeps its worktree; merge_wait keeps its own
            assert await runner.cleanup(ask) == [landed.mission_id]
            failed_head = (await env.heads())[failed.mission_id]
            ui = await load_ui_state(env.service.state)
            dismissal = Dismissal(
                letter_id=failed_head["letter_id"],
                phase="failed",
                reason="failed",
                at="2026-01-01T00:00:00Z",
            )
            ui = ui.with_project(env.project, {failed.mission_id: dismissal})
            await save_ui_state(env.service.state, ui)
            assert await runner.cleanup(ask) == [failed.mission_id]
            left = {row["mission_id"] for row in runner.worktrees.status()}
            assert left == {waiting.mission_id}
            for job in (landed, failed, waiting):
                assert f"vbx/{job.mission_id}" in _branches(env.folder)
            await runner.client.aclose()
        finally:
            env.close()

    asyncio.run(main())


def test_a_hook_planted_in_the_projects_git_runs_only_inside_the_runners_git_fence(
    tmp_path: Path,
) -> None:
    """Fenced exec can write a project's ``.git``; the runner's own git must not carry what was
    planted there out to HOST_DIR."""

    async def main() -> None:
        env = await environment(tmp_path)
        try:
            hook = env.folder / ".git" / "hooks" / "post-checkout"
            pwned = env.home.host_dir / "pwned"
            ran = env.folder / "hook-ran"
            hook.write_text(f"#!/bin/sh\ntouch {ran}\necho x > {pwned}\nexit 0\n")
            hook.chmod(0o755)
            trees = Worktrees(env.root)
            await trees.create("msn_0000000000e1", env.project, env.folder)
            assert ran.exists(), "the planted hook did not run at all (the test proves nothing)"
            assert not pwned.exists(), "the runner's git let a planted hook write HOST_DIR"
        finally:
            env.close()

    asyncio.run(main())


def test_touching_a_worktree_while_others_are_made_and_removed_loses_no_record(
    tmp_path: Path,
) -> None:
    """The tryout's finding: the runner touched a finished run's worktree (a read, change and
    write of the whole record, outside the lock, through the same temporary file name) while
    another run's worktree was being made: one write's rename found its temporary gone
    (``FileNotFoundError`` ended the run's task) and a touch could write back a record without
    the new worktree — which cleanup then never removes. Every record survives."""

    async def main() -> None:
        env = await environment(tmp_path)
        try:
            trees = Worktrees(env.root)
            first = "msn_0000000000f0"
            await trees.create(first, env.project, env.folder)
            ids = [f"msn_{i:012x}" for i in range(1, 9)]

            async def touching() -> None:
                for _ in range(40):
                    touched = trees.touch(first)
                    if inspect.isawaitable(touched):  # (a plain call before the fix)
                        await touched
                    await asyncio.sleep(0.002)

            await asyncio.gather(
                touching(), *(trees.create(m, env.project, env.folder) for m in ids)
            )
            assert {r["mission_id"] for r in trees.status()} == {first, *ids}
            await asyncio.gather(touching(), *(trees.remove(m, env.folder) for m in ids))
            assert {r["mission_id"] for r in trees.status()} == {first}
        finally:
            env.close()

    asyncio.run(main())
