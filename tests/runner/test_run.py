"""The run: letters in order on the head CAS, a complete candidate on a green gate, ``failed``
with the reason for everything else, never ``landed`` (issue 30, the run; seed 004 §5c–d)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from core.missions.letters import absolute_path_in, parse_letter
from server_host.worktrees import git
from tests.runner.kit import DeskPoster, environment


def test_a_green_gate_posts_merge_wait_with_a_complete_candidate_and_never_landed(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            pin = env.pin(mode="ok")
            job = await env.open_mission()
            poster = DeskPoster(env)
            outcome = await env.run(job, pin, poster)
            assert outcome.phase == "merge_wait", outcome
            assert [x["phase"] for x in poster.letters] == ["executing", "gate", "merge_wait"]
            assert [x["mission_seq"] for x in poster.letters] == [2, 3, 4]
            last = parse_letter(poster.letters[-1])
            assert last.seat == "hand" and last.runner_id == "build-1"
            assert last.capability == "build-runner" and last.synthetic is False
            candidate = last.receipt_candidate
            assert candidate is not None and candidate.type == "test"
            assert candidate.block_id == env.block
            assert candidate.scope.boundary_version == 1 and candidate.scope.contract_version == 1
            assert candidate.evidence.window is not None
            log = (env.root / "runner-logs" / f"{job.mission_id}.log").read_bytes()
            assert candidate.evidence.artifact_hash == "sha256:" + hashlib.sha256(log).hexdigest()
            assert last.gate is not None and last.gate.command == "python3 check.py"
            head = (await env.heads())[job.mission_id]
            assert head["letter"]["phase"] == "merge_wait" and head["letter"]["mission_seq"] == 4
            assert head["agent_id"] == "build-1"
            # the agent's change is committed on the mission's branch, the project untouched
            shown = git(env.folder, "show", f"vbx/{job.mission_id}:AGENT.md").stdout
            assert job.mission_id in shown
            assert not (env.folder / "AGENT.md").exists()
            for letter in poster.letters:
                assert letter["phase"] != "landed"
                assert not absolute_path_in(json.dumps(letter))
                assert str(env.root) not in json.dumps(letter)
        finally:
            env.close()

    asyncio.run(main())
