"""The run: letters in order on the head CAS, a complete candidate on a green gate, ``failed``
with the reason for everything else, never ``landed`` (issue 30, the run; seed 004 §5c–d)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import signal
import sys
import time
from pathlib import Path

from core.missions.letters import absolute_path_in, parse_letter
from core.refusals import Code, Refused
from server_host.runner_run import log_path, log_record, stop_tree
from server_host.sandbox import Fence, NoSandbox, spawn
from server_host.worktrees import Worktrees, git
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


def _run_with(tmp_path: Path, **pin_args: object) -> tuple:
    """Open a mission on a fresh root and run it with the pin ``pin_args``."""

    async def main() -> tuple:
        env = await environment(tmp_path)
        try:
            pin = env.pin(**pin_args)
            job = await env.open_mission()
            poster = DeskPoster(env)
            outcome = await env.run(job, pin, poster)
            log = (env.root / "runner-logs" / f"{job.mission_id}.log").read_bytes()
            head = (await env.heads())[job.mission_id]["letter"]
            return outcome, poster.letters, log, head, job
        finally:
            env.close()

    return asyncio.run(main())


def test_an_agent_that_exits_non_zero_posts_failed_with_the_reason(tmp_path: Path) -> None:
    outcome, letters, _, head, _ = _run_with(tmp_path, mode="fail")
    assert [x["phase"] for x in letters] == ["executing", "failed"]
    assert head["phase"] == "failed" and head["mission_seq"] == 3
    assert head["verdict"] == {"decision": "REJECT", "gist": "the agent exited with status 3"}
    assert outcome.reason == "the agent exited with status 3"


def test_a_non_zero_gate_posts_failed_with_the_gate_it_ran(tmp_path: Path) -> None:
    # the agent writes no AGENT.md in "env" mode, so check.py exits 1
    outcome, letters, _, head, _ = _run_with(tmp_path, mode="env")
    assert [x["phase"] for x in letters] == ["executing", "gate", "failed"]
    assert head["verdict"]["gist"] == "the gate exited with status 1"
    assert head["gate"]["exit_status"] == 1 and head["gate"]["command"] == "python3 check.py"
    assert head["gate"]["artifact_hash"].startswith("sha256:")
    assert outcome.phase == "failed"


def test_an_agent_past_its_time_limit_posts_failed_and_is_gone_within_5_s(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    _, letters, _, head, _ = _run_with(tmp_path, mode="hang", agent_s=1)
    assert head["phase"] == "failed"
    assert head["verdict"]["gist"] == "the agent passed its time limit of 1 s"
    assert [x["phase"] for x in letters] == ["executing", "failed"]
    # the hanging agent dies on SIGINT: well inside limit + 5 s (+ setup)
    assert time.monotonic() - started < 1 + 5 + 3


def test_cancel_kills_the_whole_tree_within_5_s_even_a_child_ignoring_sigterm(
    tmp_path: Path,
) -> None:
    token = "vbx-ignore-term-" + secrets.token_hex(6)

    async def main() -> None:
        env = await environment(tmp_path)
        try:
            pin = env.pin(mode="ignore-term", arg=token)
            job = await env.open_mission()
            poster = DeskPoster(env)
            run = asyncio.ensure_future(env.run(job, pin, poster))
            marker = env.root / "worktrees" / job.mission_id / "child-started"
            deadline = time.monotonic() + 20
            while not marker.exists() or not _running(token):
                assert time.monotonic() < deadline, "the agent's child never started"
                await asyncio.sleep(0.05)
            cancelled_at = time.monotonic()
            job.cancel.set()
            outcome = await asyncio.wait_for(run, 10)
            took = time.monotonic() - cancelled_at
            assert took <= 5.0, took
            assert not _running(token), "a process of the agent's tree outlived the cancel"
            assert outcome.reason == "cancelled by a person"
            head = (await env.heads())[job.mission_id]["letter"]
            assert head["phase"] == "failed"
            assert head["verdict"]["gist"] == "cancelled by a person"
        finally:
            env.close()

    asyncio.run(main())


def _running(token: str) -> bool:
    """True while a process whose argv holds ``token`` runs (zombies excepted)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if token.encode() in cmd and stat[stat.rindex(")") + 2] != "Z":
            return True
    return False


def test_a_flood_keeps_the_cap_and_hashes_the_whole_log(tmp_path: Path) -> None:
    size = 3 << 20
    outcome, _, log, head, job = _run_with(tmp_path, mode="flood", arg=str(size), cap=64 << 10)
    assert len(log) == 64 << 10
    header = f"agent flood: packet of {len(job.packet)} characters\n".encode()
    whole = header + (b"x" * 1023 + b"\n") * (size // 1024)  # then the gate, which prints nothing
    assert outcome.log_sha256 == "sha256:" + hashlib.sha256(whole).hexdigest()
    record = log_record(log_path(tmp_path / "env", job.mission_id))
    assert record == {"sha256": outcome.log_sha256, "bytes": len(whole), "kept": 64 << 10}
    assert head["phase"] == "failed"  # the flood wrote no AGENT.md: the gate says 1


def test_the_agent_cannot_read_host_dir_the_project_or_another_worktree(tmp_path: Path) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            other = await env.open_mission()
            trees = Worktrees(env.root)
            other_tree = await trees.create(other.mission_id, env.project, env.folder)
            targets = {
                "host secret": env.home.host_dir / "runner-secret",
                "host token": env.home.host_dir / ".host-token",
                "host dir": env.home.host_dir,
                "project": env.folder / "README.md",
                "other worktree": other_tree.path / "README.md",
            }
            for what, target in targets.items():
                assert target.exists(), what
                pin = env.pin(mode="read", arg=str(target))
                job = await env.open_mission()
                await env.run(job, pin, DeskPoster(env))
                log = (env.root / "runner-logs" / f"{job.mission_id}.log").read_text()
                assert "READ-DENIED" in log and "READ-OK" not in log, (what, log)
            # and the same agent does read a file of its own worktree (the test can fail)
            pin = env.pin(mode="read", arg="check.py")
            job = await env.open_mission()
            await env.run(job, pin, DeskPoster(env))
            log = (env.root / "runner-logs" / f"{job.mission_id}.log").read_text()
            assert "READ-OK" in log
        finally:
            env.close()

    asyncio.run(main())


def test_the_agent_gets_a_scrubbed_environment_plus_only_what_the_pin_names(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path)
        try:
            pin = env.pin(mode="env", env=("VBX_MODEL_KEY",))
            job = await env.open_mission()
            source = {"VBX_MODEL_KEY": "k1", "VBX_NOT_PINNED": "k2", "HOME": "/root"}
            await env.run(job, pin, DeskPoster(env), source=source)
            log = (env.root / "runner-logs" / f"{job.mission_id}.log").read_text()
            line = next(x for x in log.splitlines() if x.startswith("ENV "))
            names = set(line.split()[1:])
            assert "VBX_MODEL_KEY" in names
            assert "VBX_NOT_PINNED" not in names
            assert names <= {"VBX_MODEL_KEY", "PATH", "HOME", "LANG", "LC_ALL", "TZ", "PWD"}
        finally:
            env.close()

    asyncio.run(main())


def test_a_project_that_is_not_a_git_repository_gets_no_worktree_and_no_run(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        env = await environment(tmp_path, git_repo=False)
        try:
            env.pin(mode="ok")
            job = await env.open_mission()
            try:
                await Worktrees(env.root).create(job.mission_id, env.project, env.folder)
            except Refused as refusal:
                assert refusal.code == Code.ARGS_INVALID
                assert "git init" in refusal.body().message
                assert "first commit" in refusal.body().message
            else:
                raise AssertionError("a worktree was made for a project that is not a repository")
            assert not (env.root / "worktrees" / job.mission_id).exists()
            assert (await env.heads())[job.mission_id]["letter"]["phase"] == "judging"
            # the daemon's path: no worktree, no run, and the mission says so
            from server_host.runner import Runner

            runner = Runner(env.root, env.service.sandbox, "http://127.0.0.1:9")
            pin = env.pin(mode="ok")
            await runner._run(pin, DeskPoster(env), job)  # type: ignore[arg-type]
            await runner.client.aclose()
            head = (await env.heads())[job.mission_id]["letter"]
            assert head["phase"] == "failed"
            assert head["verdict"]["gist"] == "no git worktree could be made for it"
            assert not (env.root / "runner-logs" / f"{job.mission_id}.log").exists()
        finally:
            env.close()

    asyncio.run(main())


def test_stop_sends_sigint_then_sigterm_then_sigkill_and_is_done_within_5_s(
    tmp_path: Path,
) -> None:
    """The escalation itself, on a process that ignores SIGINT and SIGTERM (unsandboxed, so
    nothing but the escalation can end it)."""
    seen = tmp_path / "signals"
    code = (
        "import signal,sys,time\n"
        f"p={str(seen)!r}\n"
        "def note(n, f):\n"
        "    open(p, 'a').write(signal.Signals(n).name + '\\n')\n"
        "signal.signal(signal.SIGINT, note)\n"
        "signal.signal(signal.SIGTERM, note)\n"
        "print('ready', flush=True)\n"
        "while True: time.sleep(0.01)\n"
    )

    async def main() -> None:
        process = await spawn(
            [sys.executable, "-c", code],
            sandbox=NoSandbox(),
            fence=Fence(writable=(tmp_path,)),
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
        )
        assert process.stdout is not None
        assert await asyncio.wait_for(process.stdout.readline(), 10) == b"ready\n"
        started = time.monotonic()
        await stop_tree(process)
        took = time.monotonic() - started
        assert process.returncode == -signal.SIGKILL
        assert seen.read_text().split() == ["SIGINT", "SIGTERM"]
        assert 3.9 <= took <= 5.0, took

    asyncio.run(main())


def test_a_person_imports_the_runs_candidate_as_it_is_and_lands_it(tmp_path: Path) -> None:
    """The candidate is complete in fact: the one human gesture imports it unchanged and the
    landed letter follows; nothing the run or the import left in the audit names a host
    path."""

    async def main() -> None:
        env = await environment(tmp_path)
        try:
            pin = env.pin(mode="ok")
            job = await env.open_mission()
            await env.run(job, pin, DeskPoster(env))
            head = (await env.heads())[job.mission_id]
            candidate = head["letter"]["receipt_candidate"]
            imported = await env.call(
                "receipt.import",
                "human-ui",
                project=env.project,
                candidate=candidate,
                imported_via="human-ui",
                mission_id=job.mission_id,
            )
            assert imported["ok"], imported
            version = imported["result"]["store_version"]
            landed = {
                **head["letter"],
                "mission_seq": 5,
                "prev_letter_id": head["sha12"],
                "phase": "landed",
                "seat": "oracle",
                "receipt": {"imported": True, "store_version": version},
            }
            posted = await env.call(
                "mission.post", project=env.project, agent_id="operator", letter=landed
            )
            assert posted["ok"], posted
            sink = env.service.composed.sink
            assert sink is not None
            last = await sink.last()
            assert last is not None
            records = json.dumps([r.record for r in await sink.range(1, last.seq)])
            assert str(env.root) not in records and "worktrees" not in records
        finally:
            env.close()

    asyncio.run(main())


def test_the_runners_own_git_never_runs_what_the_agent_wrote_into_its_worktree(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "pwned"

    async def main() -> None:
        env = await environment(tmp_path)
        try:
            pin = env.pin(mode="hostile-git", arg=str(marker))
            job = await env.open_mission()
            outcome = await env.run(job, pin, DeskPoster(env))
            assert outcome.phase == "merge_wait", outcome
            assert not marker.exists(), "a hook or fsmonitor of the agent's ran outside"
            # the commit went to the mission's branch of the project, not the agent's repository
            shown = git(env.folder, "show", f"vbx/{job.mission_id}:AGENT.md").stdout
            assert shown == "changed\n"
        finally:
            env.close()

    asyncio.run(main())
