"""The missions board the browser host reads (issue 30, the browser side): a remote project's
blocks, whether it is a git repository with a commit, and its missions' heads — no path; and
the host's spawn and cancel of a remote mission are a person's gestures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from core.host.registry import OPERATIONS
from core.missions.remote_runs import parse_board
from server_host.runner_desk import BoardBody
from tests.runner.kit import environment


def _board(tmp_path: Path, *, git_repo: bool, open_one: bool) -> tuple[dict[str, Any], Any]:
    async def main() -> tuple[dict[str, Any], Any]:
        env = await environment(tmp_path, git_repo=git_repo)
        try:
            job = await env.open_mission() if open_one else None
            return await env.service.runners.board(BoardBody(project=env.project)), (env, job)
        finally:
            env.close()

    return asyncio.run(main())


def test_the_board_names_blocks_git_and_heads_and_no_path(tmp_path: Path) -> None:
    answer, (env, job) = _board(tmp_path, git_repo=True, open_one=True)
    board = parse_board(answer)  # the host's own reading of it accepts it
    assert board.git is True and board.brain_ref == "demo"
    assert [b.id for b in board.blocks] == [env.block]
    assert [(h.mission_id, h.letter["phase"]) for h in board.heads] == [(job.mission_id, "judging")]
    assert str(env.root) not in json.dumps(answer) and str(tmp_path) not in json.dumps(answer)


def test_the_board_says_when_the_project_is_not_a_git_repository(tmp_path: Path) -> None:
    answer, _ = _board(tmp_path, git_repo=False, open_one=False)
    assert answer["git"] is False and answer["heads"] == []


def test_spawning_and_cancelling_a_remote_mission_are_a_persons_gestures() -> None:
    for name in ("remote.spawn", "remote.cancel"):
        op = OPERATIONS.get(name)
        assert op is not None and op.gesture is not None and op.writes, name
    for name in ("remote.board", "remote.log"):
        op = OPERATIONS.get(name)
        assert op is not None and op.gesture is None and not op.writes, name
