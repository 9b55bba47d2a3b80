"""Landing a remote mission on its environment server (issue 30, Review: "Import this
receipt" for a remote project): the desk's ``land`` re-checks everything — a ``merge_wait``
head, the candidate, the evidence (a claim-only candidate needs the person's confirmation),
SAFE mode — then imports the receipt into the project's store and posts the ``landed`` letter
naming the store version that import made, through the server's own ``tray.land``; audited;
a second landing doubles nothing; no answer holds a path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.missions.letters import sha12
from core.refusals import Code, Refused
from server_host.runner_desk import LandBody
from server_host.runner_run import MissionJob, _Chain
from tests.runner.kit import DeskPoster, Env, environment
from tests.server.harness import cli

ACTOR = "peer:0123456789ab"


async def _audit(env: Env) -> list[dict[str, Any]]:
    sink = env.service.composed.sink
    assert sink is not None
    last = await sink.last()
    return [] if last is None else [r.record for r in await sink.range(1, last.seq)]


def _run(tmp_path: Path, body: Any) -> Any:
    async def main() -> Any:
        env = await environment(tmp_path)
        try:
            env.pin(mode="ok")
            return await body(env)
        finally:
            env.close()

    return asyncio.run(main())


async def _store(env: Env) -> dict[str, Any]:
    answer = await env.call("blocks.get", project=env.project)
    assert answer["ok"], answer
    return answer["result"]["store"]


async def _chain(env: Env, mission: str) -> list[dict[str, Any]]:
    """Every mission letter of ``mission`` in the project's mailbox, in the order posted."""
    letters = []
    for segment in sorted((env.folder / ".voicebox" / "mailbox").glob("*.jsonl")):
        for raw in segment.read_text().splitlines():
            line = json.loads(raw)
            if line.get("kind") == "mission" and line["mission"]["mission_id"] == mission:
                letters.append(line)
    return letters


async def _green(env: Env) -> MissionJob:
    """A mission the real run took to ``merge_wait`` (its candidate's hash is the kept log)."""
    job = await env.open_mission()
    outcome = await env.run(job, env.pin(mode="ok"), DeskPoster(env))
    assert outcome.phase == "merge_wait", outcome
    return job


async def _claimed(env: Env) -> MissionJob:
    """A mission a runner took to ``merge_wait`` with a candidate whose artifact hash is made
    up: no log this environment kept has it (only the poster's claim)."""
    job = await env.open_mission()
    poster = DeskPoster(env)
    chain = _Chain(job, env.pin(mode="ok"), poster)
    await chain.post("executing")
    await chain.post("gate")
    scope = await poster.scope(env.project, env.block)
    now = (await env.heads())[job.mission_id]["letter"]["updated_at"]
    await chain.post(
        "merge_wait",
        gate={
            "command": "python3 check.py",
            "exit_status": 0,
            "artifact_hash": "sha256:" + "a" * 64,
        },
        receipt_candidate={
            "block_id": env.block,
            "type": "test",
            "scope": scope,
            "evidence": {
                "artifact_hash": "sha256:" + "b" * 64,
                "evidence_refs": ["made-up.log"],
                "window": {"started_at": job.started_at, "finished_at": now},
            },
        },
    )
    return job


def _body(env: Env, job: MissionJob, **over: Any) -> LandBody:
    return LandBody.model_validate({"project": env.project, "missionId": job.mission_id, **over})


def test_only_a_merge_wait_mission_of_the_project_is_landed(tmp_path: Path) -> None:
    async def body(env: Env) -> None:
        desk = env.service.runners
        judging = await env.open_mission()
        with pytest.raises(Refused) as caught:
            await desk.land(ACTOR, _body(env, judging))
        assert caught.value.code == Code.INVALID_TRANSITION
        assert "judging" in caught.value.message
        unknown = LandBody.model_validate({"project": env.project, "missionId": "msn_00000000ffff"})
        with pytest.raises(Refused) as caught:
            await desk.land(ACTOR, unknown)
        assert caught.value.code == Code.ARGS_INVALID
        failed = await env.open_mission()
        await env.run(failed, env.pin(mode="fail"), DeskPoster(env))
        assert (await env.heads())[failed.mission_id]["letter"]["phase"] == "failed"
        with pytest.raises(Refused) as caught:
            await desk.land(ACTOR, _body(env, failed, confirmClaim=True))
        assert caught.value.code == Code.INVALID_TRANSITION
        assert (await _store(env))["store_version"] == 1, "nothing was imported"

    _run(tmp_path, body)


def test_a_claim_only_candidate_is_refused_unless_the_person_confirmed_it(
    tmp_path: Path,
) -> None:
    async def body(env: Env) -> None:
        desk = env.service.runners
        job = await _claimed(env)
        before = await _store(env)
        with pytest.raises(Refused) as caught:
            await desk.land(ACTOR, _body(env, job))
        refusal = caught.value
        assert refusal.code == Code.CONFIRMATION_REQUIRED and refusal.body().status == 428
        assert "only its poster's claim" in refusal.message
        assert refusal.field == "confirmClaim"
        assert await _store(env) == before, "nothing imported"
        assert (await env.heads())[job.mission_id]["letter"]["phase"] == "merge_wait"

        landed = await desk.land(ACTOR, _body(env, job, confirmClaim=True))
        assert landed["checked"] is False and landed["duplicate"] is False
        assert landed["storeVersion"] == before["store_version"] + 1
        records = [r for r in await _audit(env) if r.get("op") == "mission.land"]
        assert records[-1]["decision"] == "admitted"
        assert records[-1]["details"]["checked"] is False
        assert records[-1]["details"]["claim_confirmed"] is True
        assert records[-1]["actor"] == ACTOR

    _run(tmp_path, body)


def test_a_checked_candidate_lands_with_a_landed_letter_naming_the_store_version_it_made(
    tmp_path: Path,
) -> None:
    async def body(env: Env) -> None:
        desk = env.service.runners
        job = await _green(env)
        before = await _store(env)
        landed = await desk.land(ACTOR, _body(env, job))  # no confirmation needed
        store = await _store(env)
        assert store["store_version"] == before["store_version"] + 1
        assert landed["storeVersion"] == store["store_version"]
        assert landed["checked"] is True and landed["duplicate"] is False
        assert landed["blockId"] == env.block and landed["color"] == "green"
        (receipt,) = store["receipts"]
        assert receipt["mission_id"] == job.mission_id
        assert receipt["store_version"] == landed["storeVersion"]

        # the letters in order: the runner's phases, then the landing, each on the last
        chain = await _chain(env, job.mission_id)
        phases = [c["mission"]["phase"] for c in chain]
        assert phases == ["judging", "executing", "gate", "merge_wait", "landed"], phases
        wait, last = chain[-2], chain[-1]
        assert last["mission"]["mission_seq"] == wait["mission"]["mission_seq"] + 1
        assert last["mission"]["prev_letter_id"] == sha12(wait["id"])
        assert last["mission"]["receipt"] == {
            "imported": True,
            "store_version": landed["storeVersion"],
        }
        assert last["from"] == "operator"
        assert last["mission"]["receipt_candidate"] == wait["mission"]["receipt_candidate"]
        assert landed["letterSha12"] == sha12(last["id"])
        assert landed["seq"] == last["mission"]["mission_seq"]

        # audited: the import and the letter by the pipeline, the landing by the desk
        ops = [(r.get("op"), r.get("decision")) for r in await _audit(env)]
        tail = [o for o in ops if o[0] in ("receipt.import", "mission.post", "tray.land")][-3:]
        assert tail == [
            ("receipt.import", "admitted"),
            ("mission.post", "admitted"),
            ("tray.land", "admitted"),
        ], ops
        assert ops[-1] == ("mission.land", "admitted")

        text = json.dumps(landed)
        assert str(env.root) not in text and "worktrees" not in text and "/" not in text

    _run(tmp_path, body)


def test_a_second_landing_of_a_mission_answers_the_first_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    async def body(env: Env) -> None:
        desk = env.service.runners
        job = await _green(env)
        first, second = await asyncio.gather(
            desk.land(ACTOR, _body(env, job)), desk.land(ACTOR, _body(env, job))
        )
        assert (first["duplicate"], second["duplicate"]) == (False, True)
        assert {**second, "duplicate": False} == first
        third = await desk.land(ACTOR, _body(env, job))
        assert third == second
        store = await _store(env)
        assert len(store["receipts"]) == 1 and store["store_version"] == first["storeVersion"]
        phases = [c["mission"]["phase"] for c in await _chain(env, job.mission_id)]
        assert phases.count("landed") == 1, phases

    _run(tmp_path, body)


def test_no_landing_in_safe_mode(tmp_path: Path) -> None:
    async def body(env: Env) -> None:
        job = await _green(env)
        assert cli(env.root, "policy", "--safe", "on").returncode == 0
        with pytest.raises(Refused) as caught:
            await env.service.runners.land(ACTOR, _body(env, job))
        assert caught.value.code == Code.READ_ONLY_MODE
        assert (await env.heads())[job.mission_id]["letter"]["phase"] == "merge_wait"

    _run(tmp_path, body)
