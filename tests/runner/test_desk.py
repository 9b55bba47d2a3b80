"""The server's runner desk: announce proves liveness only; refusals audited without the
secret; a runner posts mission letters only — never a receipt import (issue 30, announce;
seed 004 §5a, §5d)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.refusals import Code, Refused
from server_host.runner_desk import AnnounceBody, PostBody, read_runner_secret
from tests.runner.kit import DeskPoster, Env, environment


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


@pytest.mark.parametrize(
    ("why", "change", "peer"),
    [
        ("unpinned", {"runnerId": "build-9"}, "127.0.0.1"),
        ("secret", {"secret": "not-the-secret-0123456789"}, "127.0.0.1"),
        ("challenge", {"challenge": "an-old-boot"}, "127.0.0.1"),
        ("peer", {}, "192.0.2.7"),
    ],
)
def test_an_announce_that_does_not_prove_itself_is_refused_and_audited_without_the_secret(
    tmp_path: Path, why: str, change: dict[str, str], peer: str
) -> None:
    async def body(env: Env) -> None:
        poster = DeskPoster(env)
        creds = {**poster.creds(), **change}
        with pytest.raises(Refused) as caught:
            await env.service.runners.announce(peer, AnnounceBody.model_validate(creds))
        assert caught.value.code == Code.PERMISSION_DENIED
        records = await _audit(env)
        refused = [r for r in records if r.get("op") == "runner.announce"]
        assert refused, records
        assert refused[-1]["decision"] == "refused"
        assert refused[-1]["details"]["why"] == why
        text = json.dumps(records)
        assert read_runner_secret(env.home.host_dir).reveal() not in text
        assert "not-the-secret-0123456789" not in text
        assert all(not r["live"] for r in env.service.runners.runners())

    _run(tmp_path, body)


def test_a_proven_announce_makes_the_pin_live_and_never_widens_it(tmp_path: Path) -> None:
    async def body(env: Env) -> None:
        poster = DeskPoster(env)
        answer = await poster.announce()
        assert answer["runnerId"] == "build-1" and answer["capability"] == "build-runner"
        secret_file = env.home.host_dir / "runner-secret"
        assert secret_file.stat().st_mode & 0o777 == 0o600
        assert len(read_runner_secret(env.home.host_dir).reveal()) >= 43  # 256 bits
        with pytest.raises(ValueError, match="capability"):  # not even a field of it
            AnnounceBody.model_validate({**poster.creds(), "capability": "naming-runner"})
        shown = (await env.service.identity())["runners"]
        assert shown == [
            {
                "runnerId": "build-1",
                "capability": "build-runner",
                "live": True,
                "busy": 0,
                "keys": [],
                "templates": [
                    {
                        "label": "default",
                        "executable": "python3",
                        "keys": [],
                        "found": None,
                        "version": None,
                        "reason": None,
                        "said": "not probed yet",
                    }
                ],
            }
        ]
        text = json.dumps(await env.service.identity())
        assert read_runner_secret(env.home.host_dir).reveal() not in text
        assert str(env.root) not in text

    _run(tmp_path, body)


def test_a_runner_cannot_import_a_receipt_or_post_landed(tmp_path: Path) -> None:
    async def body(env: Env) -> None:
        poster = DeskPoster(env)
        job = await env.open_mission()
        receipt = {
            "project": env.project,
            "block_id": env.block,
            "mission_id": job.mission_id,
        }
        creds = poster.creds()
        import_body = PostBody.model_validate(
            {**creds, "op": "blocks.import_receipt", "project": env.project, "letter": receipt}
        )
        with pytest.raises(Refused) as caught:
            await env.service.runners.post("127.0.0.1", import_body)
        assert caught.value.code == Code.PERMISSION_DENIED
        assert "person" in caught.value.body().message
        landed = {
            "schema": "m1nd-mission-letter-v0",
            "mission_id": job.mission_id,
            "mission_seq": 2,
            "prev_letter_id": job.head_letter_id[:12],
            "block_id": env.block,
            "brain_ref": "demo",
            "seat": "hand",
            "runner_id": "build-1",
            "capability": "build-runner",
            "phase": "landed",
            "receipt": {"imported": True, "store_version": 2},
            "started_at": job.started_at,
            "updated_at": job.started_at,
        }
        with pytest.raises(Refused) as caught:
            await poster.post(env.project, landed)
        assert caught.value.code == Code.PERMISSION_DENIED
        head = (await env.heads())[job.mission_id]["letter"]
        assert head["phase"] == "judging"  # nothing appended
        ops = [r.get("op") for r in await _audit(env) if r.get("decision") == "refused"]
        assert ops.count("runner.post") == 2

    _run(tmp_path, body)


def test_a_runner_letter_takes_the_head_cas_like_any_other(tmp_path: Path) -> None:
    async def body(env: Env) -> None:
        poster = DeskPoster(env)
        job = await env.open_mission()
        stale = {
            "schema": "m1nd-mission-letter-v0",
            "mission_id": job.mission_id,
            "mission_seq": 3,
            "prev_letter_id": "0" * 12,
            "block_id": env.block,
            "brain_ref": "demo",
            "seat": "hand",
            "runner_id": "build-1",
            "capability": "build-runner",
            "phase": "executing",
            "started_at": job.started_at,
            "updated_at": job.started_at,
        }
        with pytest.raises(Refused) as caught:
            await poster.post(env.project, stale)
        assert caught.value.code == Code.STALE_HEAD

    _run(tmp_path, body)


M1, M2 = "msn_00000000aa01", "msn_00000000aa02"


def _spawn_body(env: Env, job_letter: dict[str, Any], packet: str) -> Any:
    from server_host.runner_desk import SpawnBody

    return SpawnBody.model_validate(
        {"project": env.project, "packet": packet, "letter": job_letter}
    )


def _opening(env: Env, mission_id: str, packet: str) -> dict[str, Any]:
    from core.missions.posting import packet_ref

    now = "2026-01-01T00:00:00Z"
    return {
        "schema": "m1nd-mission-letter-v0",
        "mission_id": mission_id,
        "mission_seq": 1,
        "prev_letter_id": None,
        "block_id": env.block,
        "brain_ref": "demo",
        "seat": "oracle",
        "runner_id": None,
        "capability": "build-runner",
        "phase": "judging",
        "packet_ref": packet_ref(packet),
        "started_at": now,
        "updated_at": now,
    }


def test_spawn_checks_every_rule_again_then_queues_for_the_live_runner(tmp_path: Path) -> None:
    async def body(env: Env) -> None:
        desk = env.service.runners
        packet = "# a packet\n"
        letter = _opening(env, "msn_00000000aa01", packet)
        # a live runner is needed: pinned but not announced yet
        with pytest.raises(Refused) as caught:
            await desk.spawn("peer:test", _spawn_body(env, letter, packet))
        assert caught.value.code == Code.TOOL_DISABLED and "live" in caught.value.body().message
        poster = DeskPoster(env)
        await poster.announce()
        # a capability nobody is pinned for
        naming = {**letter, "capability": "naming-runner"}
        with pytest.raises(Refused) as caught:
            await desk.spawn("peer:test", _spawn_body(env, naming, packet))
        assert caught.value.code == Code.PERMISSION_DENIED
        # a packet that is not the one the letter names
        with pytest.raises(Refused) as caught:
            await desk.spawn("peer:test", _spawn_body(env, letter, "# another packet\n"))
        assert caught.value.code == Code.LETTER_INVALID
        answer = await desk.spawn("peer:test", _spawn_body(env, letter, packet))
        assert answer == {"missionId": "msn_00000000aa01", "runnerId": "build-1", "queued": True}
        head = (await env.heads())["msn_00000000aa01"]["letter"]
        assert head["phase"] == "judging"
        work = (await poster.announce())["work"]
        assert [w["mission_id"] for w in work] == ["msn_00000000aa01"]
        assert work[0]["packet"] == packet and work[0]["head_seq"] == 1
        assert str(env.root) not in json.dumps(work)
        # max_parallel 1: a second spawn waits while the first runs
        second = _opening(env, "msn_00000000aa02", packet)
        await desk.spawn("peer:test", _spawn_body(env, second, packet))
        busy = await poster.announce(running=["msn_00000000aa01"])
        assert busy["work"] == []
        # cancelling the queued one posts failed "cancelled by a person" at once
        from server_host.runner_desk import CancelBody

        cancel = CancelBody.model_validate(
            {"project": env.project, "missionId": second["mission_id"]}
        )
        assert (await desk.cancel("peer:test", cancel))["cancelled"] == "queued"
        head = (await env.heads())["msn_00000000aa02"]["letter"]
        assert head["phase"] == "failed" and head["verdict"]["gist"] == "cancelled by a person"
        # cancelling the running one is handed to its runner with the next announce
        cancel = CancelBody.model_validate(
            {"project": env.project, "missionId": "msn_00000000aa01"}
        )
        assert (await desk.cancel("peer:test", cancel))["cancelled"] == "running"
        later = await poster.announce(running=["msn_00000000aa01"])
        assert later["cancel"] == ["msn_00000000aa01"]

    _run(tmp_path, body)


def test_spawn_in_a_project_without_git_is_refused_saying_how(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path, git_repo=False)
        try:
            env.pin(mode="ok")
            await DeskPoster(env).announce()
            packet = "# p\n"
            with pytest.raises(Refused) as caught:
                await env.service.runners.spawn(
                    "peer:test", _spawn_body(env, _opening(env, "msn_00000000bb01", packet), packet)
                )
            assert caught.value.code == Code.ARGS_INVALID
            assert "git init" in caught.value.body().message
            assert "msn_00000000bb01" not in await env.heads()
        finally:
            env.close()

    asyncio.run(main())


def test_an_idle_runners_announce_is_answered_at_once_when_a_mission_is_spawned(
    tmp_path: Path,
) -> None:
    async def body(env: Env) -> None:
        import time

        desk = env.service.runners
        poster = DeskPoster(env)
        await poster.announce()
        packet = "# p\n"
        waiting = asyncio.ensure_future(poster.announce(waitMs=2000))
        await asyncio.sleep(0)  # the announce is waiting now
        started = time.monotonic()
        await desk.spawn("peer:test", _spawn_body(env, _opening(env, M1, packet), packet))
        answer = await asyncio.wait_for(waiting, 3)
        assert [w["mission_id"] for w in answer["work"]] == [M1]
        assert time.monotonic() - started < 1.0
        # and with nothing to hand out it answers after its wait, empty
        started = time.monotonic()
        empty = await poster.announce(waitMs=200, running=[M1])
        assert empty["work"] == [] and empty["cancel"] == []
        assert 0.15 <= time.monotonic() - started < 1.5

    _run(tmp_path, body)


def test_the_log_is_replayed_live_and_a_candidate_hash_is_checked_against_the_kept_log(
    tmp_path: Path,
) -> None:
    from server_host.runner_desk import EvidenceBody, LogBody

    async def body(env: Env) -> None:
        desk = env.service.runners
        poster = DeskPoster(env)
        # a run under way: its log is read while it runs, not finished
        hang = env.pin(mode="hang", agent_s=30)
        job = await env.open_mission()
        run = asyncio.ensure_future(env.run(job, hang, poster))
        ref = {"project": env.project, "missionId": job.mission_id}
        deadline = asyncio.get_running_loop().time() + 10
        while "hanging" not in (live := await desk.log(LogBody.model_validate(ref)))["text"]:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        assert live["finished"] is False
        job.cancel.set()
        await run
        # a finished green run: its candidate's hash is the kept log's
        env.pin(mode="ok")
        green = await env.open_mission()
        await env.run(green, env.pin(mode="ok"), poster)
        ref = {"project": env.project, "missionId": green.mission_id}
        shown = await desk.log(LogBody.model_validate({**ref, "lines": 1}))
        assert shown["finished"] is True and shown["truncated"] is False
        assert shown["text"].startswith("agent ok: packet of") and shown["text"].count("\n") == 1
        assert str(env.root) not in json.dumps(shown)
        letter = (await env.heads())[green.mission_id]["letter"]
        real = letter["receipt_candidate"]["evidence"]["artifact_hash"]
        checked = await desk.evidence(EvidenceBody.model_validate({**ref, "artifactHash": real}))
        assert checked == {"checked": True}
        claim = EvidenceBody.model_validate({**ref, "artifactHash": "sha256:" + "b" * 64})
        assert await desk.evidence(claim) == {"checked": False}
        # a mission of no such project is not answered
        other = LogBody.model_validate({**ref, "missionId": "msn_0000000000ff"})
        with pytest.raises(Refused) as caught:
            await desk.log(other)
        assert caught.value.code == Code.ARGS_INVALID

    _run(tmp_path, body)


def test_a_log_answer_always_fits_what_the_browser_host_reads(tmp_path: Path) -> None:
    """The tryout's finding: an agent printed past the 1 MiB it may keep; the log route answered
    its whole kept tail, whose JSON (escapes and all) was over the 1 MiB the browser host reads
    of an answer, so the host refused it unread (``message-too-large``) and the person's log
    view stayed empty at every re-read. Whatever the log holds — quotes, backslashes, control
    characters (6 bytes each as JSON), one endless line — the answer fits, and holds the log's
    last lines."""
    from starlette.responses import JSONResponse

    from core.custody.remote import MAX_ANSWER_BYTES
    from server_host.runner_desk import LogBody
    from server_host.runner_run import log_path

    async def body(env: Env) -> None:
        desk = env.service.runners
        job = await env.open_mission()
        ref = {"project": env.project, "missionId": job.mission_id}
        path = log_path(env.root, job.mission_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        worst = {
            "quotes": ('"\\' * 40 + "\n") * 13_000 + "the last line\n",
            "controls": ("\x01\x02\x1b[31m" * 20 + "\n") * 10_000 + "the last line\n",
            "one line": "é" * (1 << 20) + "the last line",
        }
        for what, text in worst.items():
            path.write_text(text, encoding="utf-8")
            answer = await desk.log(LogBody.model_validate(ref))
            sent = JSONResponse(answer).body
            assert len(sent) <= MAX_ANSWER_BYTES // 2 + 200, (what, len(sent))
            assert answer["text"].endswith(text[-14:]), what
            assert len(answer["text"]) > 1000, what
            assert answer["bytes"] == len(text.encode()), what

    _run(tmp_path, body)


def test_a_run_its_runner_lets_go_of_mid_run_is_posted_failed_never_left_executing(
    tmp_path: Path,
) -> None:
    """The tryout's finding: the runner was killed while its agent ran; a new runner came up
    and announced nothing running, and the card kept saying "work under way" forever. A
    mission the runner was handed and no longer announces, whose head still waits for or is
    under it, is posted ``failed`` "the run was lost" by the server in the pin's name; one the
    runner ended itself (its last letter posted) is left as it is."""
    from server_host.runner_desk import LOST_RUN

    async def body(env: Env) -> None:
        poster = DeskPoster(env)
        await _handed_out_and_executing(env, poster)
        await poster.announce(running=[M1])  # still running: nothing happens
        assert (await env.heads())[M1]["letter"]["phase"] == "executing"
        # the runner restarted: it announces nothing running
        await poster.announce(running=[])
        head = (await env.heads())[M1]["letter"]
        assert head["phase"] == "failed" and head["verdict"]["gist"] == LOST_RUN, head
        assert head["mission_seq"] == 3 and head["runner_id"] == "build-1"
        await poster.announce(running=[])  # said once
        assert (await env.heads())[M1]["letter"]["mission_seq"] == 3

    _run(tmp_path, body)


def test_a_log_never_hands_the_browser_a_path_of_the_environment_even_when_the_agent_prints_it(
    tmp_path: Path,
) -> None:
    """The tryout's finding: a hostile agent printed its ``.git`` file (the project's absolute
    path under the root) and ``pwd``; any traceback of an agent or a gate names its worktree
    the same way. The log route's text names the worktree ``.`` and the rest of the root
    ``<environment root>``; no absolute path of the root reaches the page."""
    from server_host.runner_desk import LogBody
    from server_host.runner_run import log_path
    from server_host.worktrees import worktree_area

    async def body(env: Env) -> None:
        job = await env.open_mission()
        tree = worktree_area(env.root) / job.mission_id
        path = log_path(env.root, job.mission_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"{tree}\n"
            f'Traceback:\n  File "{tree}/app.py", line 3\n'
            f"gitdir: {env.root}/projects/{env.project}/.git/worktrees/{job.mission_id}\n"
        )
        ref = {"project": env.project, "missionId": job.mission_id}
        text = (await env.service.runners.log(LogBody.model_validate(ref)))["text"]
        assert str(env.root) not in text and str(tmp_path) not in text, text
        assert 'File "./app.py"' in text and text.startswith(".\n")
        assert f"<environment root>/projects/{env.project}/.git" in text

    _run(tmp_path, body)


async def _handed_out_and_executing(env: Env, poster: DeskPoster) -> dict[str, Any]:
    """Spawn ``M1``, let ``build-1`` take it (an announce) and post its ``executing`` letter;
    return that letter."""
    await poster.announce()
    packet = "# p\n"
    await env.service.runners.spawn(
        "peer:test", _spawn_body(env, _opening(env, M1, packet), packet)
    )
    (_work,) = (await poster.announce())["work"]  # handed out: the runner runs it
    heads = await env.heads()
    executing = {
        **heads[M1]["letter"],
        "mission_seq": 2,
        "prev_letter_id": heads[M1]["letter_id"][:12],
        "runner_id": "build-1",
        "seat": "hand",
        "phase": "executing",
        "synthetic": False,
    }
    await poster.post(env.project, executing)
    return executing


def test_a_person_can_cancel_a_mission_no_live_runner_holds(tmp_path: Path) -> None:
    """The tryout's finding: the runner was killed mid-run and never came back; the card said
    "work under way" for good and Cancel was only handed to a runner that would never announce
    again (after a server restart it was refused: "No queued or running mission"). A mission
    whose runner is not live, or that this server no longer knows it handed out, is failed
    "cancelled by a person" by the server itself (``unheld``); should its runner come back
    still running it, it is told to stop."""
    from server_host.runner_desk import LIVE_MS, CancelBody, RunnerDesk

    async def body(env: Env) -> None:
        desk = env.service.runners
        poster = DeskPoster(env)
        executing = await _handed_out_and_executing(env, poster)
        packet = "# p\n"
        cancel = CancelBody.model_validate({"project": env.project, "missionId": M1})
        # the runner is silent past LIVE_MS: the server fails it itself
        desk.live["build-1"] = type(desk.live["build-1"])(desk._now() - LIVE_MS - 1, 1)
        assert (await desk.cancel("peer:test", cancel))["cancelled"] == "unheld"
        head = (await env.heads())[M1]["letter"]
        assert head["phase"] == "failed" and head["verdict"]["gist"] == "cancelled by a person"
        back = await poster.announce(running=[M1])  # it came back, still running it
        assert back["cancel"] == [M1]
        # a second mission, and a server that restarted (its queues forgotten)
        await desk.spawn("peer:test", _spawn_body(env, _opening(env, M2, packet), packet))
        await poster.announce(running=[])
        heads = await env.heads()
        await poster.post(
            env.project,
            {
                **executing,
                "mission_id": M2,
                "prev_letter_id": heads[M2]["letter_id"][:12],
                "packet_ref": heads[M2]["letter"]["packet_ref"],
            },
        )
        env.service.runners = fresh = RunnerDesk(env.service)
        fresh.challenge = desk.challenge
        assert (await fresh.cancel("peer:test", cancel.model_copy(update={"mission_id": M2})))[
            "cancelled"
        ] == "unheld"
        assert (await env.heads())[M2]["letter"]["phase"] == "failed"
        with pytest.raises(Refused) as caught:  # nothing to cancel: said so
            await fresh.cancel("peer:test", cancel.model_copy(update={"mission_id": M2}))
        assert caught.value.code == Code.ARGS_INVALID

    _run(tmp_path, body)


def test_a_mission_whose_runner_posted_its_end_is_not_cancelled_as_running(
    tmp_path: Path,
) -> None:
    """Stop 45's tryout: Cancel right after the runner posted ``failed`` (before its next
    announce let the mission go) answered ``cancelled: running`` — a stale word, and a cancel
    handed to a runner for a run that had ended. The head is read: an ended mission has
    nothing to cancel, and the runner is told nothing."""
    from server_host.runner_desk import CancelBody

    async def body(env: Env) -> None:
        desk = env.service.runners
        poster = DeskPoster(env)
        executing = await _handed_out_and_executing(env, poster)
        cancel = CancelBody.model_validate({"project": env.project, "missionId": M1})
        assert (await desk.cancel("peer:test", cancel))["cancelled"] == "running"
        heads = await env.heads()
        await poster.post(
            env.project,
            {
                **executing,
                "mission_seq": 3,
                "prev_letter_id": heads[M1]["letter_id"][:12],
                "phase": "failed",
                "verdict": {"decision": "REJECT", "gist": "cancelled by a person"},
            },
        )
        with pytest.raises(Refused) as caught:  # the run has ended: nothing to cancel
            await desk.cancel("peer:test", cancel)
        assert caught.value.code == Code.ARGS_INVALID
        assert (await env.heads())[M1]["letter"]["phase"] == "failed"

    _run(tmp_path, body)
